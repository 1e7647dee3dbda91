"""The viewer against what a security probe did to it (session 40), each test one of its findings, in
headless Chromium and over HTTP against a real `kaeru serve --http` (both backends; the servers with
no token and with TLS on SQLite):

- the sign-in cookie held the admin token, which the browser sends to every port of the host, and
  which works on `/mcp`: it now holds a session id that `/mcp` refuses, ended by signing out;
- a page on another port (or another loopback name) posted edits the viewer made, signed in or
  with no token set: a POST must come from the viewer's own origin and carry its session's token;
- any site could frame the viewer under a decoy button: every answer forbids framing;
- a 300 MB post to `/ui/login` was read whole before it was refused;
- the notice after an edit was any text the URL carried.
"""

from __future__ import annotations

import http.server
import json
import re
import shutil
import socket
import ssl
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import Message
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from kaeru.web.guard import BODY_LIMIT, POLICY, REASON_CHARS
from tests.backends import new_vault
from tests.cli.support import kaeru
from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.web.conftest import ADMIN, Site
from tests.web.test_viewer import mcp, sign_in
from tests.wire.support import (
    KAERU_SERVE,
    free_port,
    http_server,
    initialize_request,
    raw_post,
    stop,
    subprocess_env,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def ask(
    url: str, headers: dict[str, str] | None = None, data: bytes | None = None, context: ssl.SSLContext | None = None
) -> tuple[int, Message, str]:
    """One request, redirects not followed: (status, headers, body)."""
    opener = urllib.request.build_opener(_NoRedirect, urllib.request.HTTPSHandler(context=context))
    request = urllib.request.Request(
        url, headers=headers or {}, data=data, method="POST" if data is not None else "GET"
    )
    try:
        with opener.open(request, timeout=30) as response:
            return int(response.status), response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return int(error.code), error.headers, error.read().decode()


def session(site: Site, token: str = ADMIN) -> tuple[str, str]:
    """Signed in over HTTP as the form does: (the `Cookie` header, the session's CSRF token or "")."""
    status, headers, _ = ask(f"{site.base}/ui/login", {"Origin": site.base}, urlencode({"token": token}).encode())
    assert status == 303, status
    cookie = headers["Set-Cookie"].split(";")[0]
    _, _, page = ask(f"{site.base}/ui/", {"Cookie": cookie})
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    return cookie, found.group(1) if found else ""


def fresh_node(site: Site, name: str) -> str:
    made = mcp(site, "note", {"initiative": "web", "name": name, "text": f"{name}: a target of this test."})
    node: str = made["data"]["primary"]["id"]
    return node


def layer_of(site: Site, node: str) -> str:
    layer: str = mcp(site, "read", {"initiative": "web", "node": {"id": node}})["data"]["hits"][0]["layer"]
    return layer


@contextmanager
def attacker(html: str) -> Iterator[int]:
    """Another server on this machine (any account may run one) whose every page is `html`; yields
    its port. (A page Playwright answers itself cannot hold a frame: Chromium shows an error in it.)"""
    body = html.encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def edit_form(target: str, fields: dict[str, str]) -> str:
    inputs = "".join(f'<input type="hidden" name="{k}" value="{v}">' for k, v in fields.items())
    return f'<form method="post" action="{target}/ui/edit">{inputs}<button id="win">Win a prize</button></form>'


# --- the sign-in cookie ---------------------------------------------------------------------------
def test_the_sign_in_cookie_is_a_session_id_that_mcp_refuses(site: Site, page: Any) -> None:
    port = site.server.port
    sign_in(page, site)
    [cookie] = [c for c in page.context.cookies() if c["name"] == f"kaeru_ui_{port}"]
    assert ADMIN not in cookie["value"], "the cookie holds the admin token"
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"], cookie["secure"]) == (True, "Strict", "/ui", False)
    status, _ = raw_post(site.server.url, initialize_request(), {"Authorization": f"Bearer {cookie['value']}"})
    assert status == 401
    assert ask(f"{site.base}/ui/", {"Cookie": f"{cookie['name']}={cookie['value']}"})[0] == 200
    # The sign-in link (`?token=`, as `kaeru ui` prints it) makes a session too.
    page.context.clear_cookies()
    page.goto(f"{site.base}/ui/login?{urlencode({'token': site.fixture.alice})}")
    assert page.inner_text("header .who") == "as alice"
    [cookie] = [c for c in page.context.cookies() if c["name"] == f"kaeru_ui_{port}"]
    assert site.fixture.alice not in cookie["value"]
    status, _ = raw_post(site.server.url, initialize_request(), {"Authorization": f"Bearer {cookie['value']}"})
    assert status == 401


def test_signing_out_ends_the_session_on_the_server(site: Site, page: Any) -> None:
    """The cookie a server on another port was sent stays usable no longer than the sign-in."""
    sign_in(page, site)
    kept = "; ".join(f"{c['name']}={c['value']}" for c in page.context.cookies())
    assert ask(f"{site.base}/ui/", {"Cookie": kept})[0] == 200
    page.click("header form button")
    page.wait_for_selector("#token")
    status, _, body = ask(f"{site.base}/ui/", {"Cookie": kept})
    assert status == 401 and "Your sign-in has ended" in body


def test_a_revoked_token_ends_the_sessions_it_opened_at_their_next_request(site: Site, page: Any) -> None:
    made = kaeru(site.vault, "token", "add", "carol", as_json=True)
    assert made.code == 0, made.stderr
    sign_in(page, site, made.json()["token"])
    assert page.inner_text("header .who") == "as carol"
    assert kaeru(site.vault, "token", "revoke", "carol").code == 0
    response = page.goto(f"{site.base}/ui/")
    assert response.status == 401 and "revoked" in page.inner_text("p.error")
    assert [c for c in page.context.cookies() if c["name"].startswith("kaeru_ui")] == []


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test certificate")
def test_over_tls_the_cookie_is_secure(tmp_path: Path) -> None:
    from tests.wire.test_tls import certificate

    cert, key = certificate(tmp_path)
    trusted = ssl.create_default_context(cafile=str(cert))
    port = free_port()
    base = f"https://127.0.0.1:{port}"
    vault = new_vault("sqlite", tmp_path)
    env = subprocess_env(vault.env(), KAERU_AUTH_TOKEN="tls-admin-token-19")
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        command = [*KAERU_SERVE, "--http", "--host", "127.0.0.1", "--port", str(port)]
        proc = subprocess.Popen(
            server_argv([*command, "--tls-cert", str(cert), "--tls-key", str(key)], env),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until(lambda: _answers(f"{base}/health", trusted), 30, "GET /health over HTTPS")
            form = urlencode({"token": "tls-admin-token-19"}).encode()
            status, headers, _ = ask(f"{base}/ui/login", {"Origin": base}, form, trusted)
            assert status == 303
            said = headers["Set-Cookie"]
            assert said.startswith(f"kaeru_ui_{port}=") and "tls-admin-token-19" not in said
            assert "secure" in [part.strip().lower() for part in said.split(";")], said
        finally:
            stop(proc)
            count_served_cpu()


def _answers(url: str, context: ssl.SSLContext) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2, context=context) as response:
            return bool(response.status == 200)
    except OSError:
        return False


# --- cross-site request forgery -------------------------------------------------------------------
def test_a_page_on_another_port_cannot_post_an_edit_for_the_signed_in_person(site: Site, page: Any) -> None:
    node = fresh_node(site, "Cross-port target")
    sign_in(page, site)
    fields = {"i": "web", "op": "layer", "node": node, "layer": "frozen", "back": "/ui/"}
    with attacker(edit_form(site.base, fields)) as port:
        page.goto(f"http://127.0.0.1:{port}/prize.html")
        page.click("#win")
        page.wait_for_load_state()
    assert "not sent by this viewer" in page.inner_text("main"), page.content()[:1000]
    assert layer_of(site, node) != "frozen"


def test_with_no_token_set_a_page_of_another_loopback_name_cannot_post_an_edit(page: Any, tmp_path: Path) -> None:
    vault = new_vault("sqlite", tmp_path)
    made = kaeru(vault, "call", "note", json.dumps({"initiative": "proj", "text": "keys rotate monthly"}), as_json=True)
    node = made.json()["data"]["primary"]["id"]
    with http_server(subprocess_env(vault.env()), tmp_path) as server:
        assert ask(f"{server.base}/ui/")[0] == 200, "open to this account: no token anywhere"
        fields = {"i": "proj", "op": "layer", "node": node, "layer": "frozen", "back": "/ui/"}
        with attacker(edit_form(server.base, fields)) as port:
            page.goto(f"http://localhost:{port}/prize.html")  # another site than 127.0.0.1
            page.click("#win")
            page.wait_for_load_state()
        assert "not sent by this viewer" in page.inner_text("main")
    read = kaeru(vault, "call", "read", json.dumps({"initiative": "proj", "node": node}), as_json=True)
    assert read.json()["data"]["hits"][0]["layer"] == "warm"


def test_a_post_is_accepted_only_from_the_viewers_own_origin(site: Site) -> None:
    node = fresh_node(site, "Origin target")
    cookie, csrf = session(site)
    edit = urlencode({"i": "web", "op": "layer", "node": node, "layer": "cold", "csrf": csrf}).encode()
    other = f"http://127.0.0.1:{free_port()}"
    for headers in (
        {"Origin": other},
        {"Origin": "http://localhost:" + str(site.server.port)},
        {"Origin": "null"},
        {"Referer": f"{other}/page"},
        {},  # neither Origin nor Referer
    ):
        status, _, body = ask(f"{site.base}/ui/edit", {"Cookie": cookie, **headers}, edit)
        assert status == 403 and "not sent by this viewer" in body, (headers, status)
    assert layer_of(site, node) != "cold"
    status, _, _ = ask(f"{site.base}/ui/edit", {"Cookie": cookie, "Referer": f"{site.base}/ui/node"}, edit)
    assert status == 303 and layer_of(site, node) == "cold"
    # Signing in and out are changes too.
    login = urlencode({"token": ADMIN}).encode()
    status, headers, _ = ask(f"{site.base}/ui/login", {"Origin": other}, login)
    assert status == 403 and "Set-Cookie" not in headers
    status, _, _ = ask(
        f"{site.base}/ui/logout", {"Cookie": cookie, "Origin": other}, urlencode({"csrf": csrf}).encode()
    )
    assert status == 403 and ask(f"{site.base}/ui/", {"Cookie": cookie})[0] == 200


def test_a_signed_in_edit_must_carry_its_sessions_csrf_token(site: Site) -> None:
    node = fresh_node(site, "Token target")
    cookie, csrf = session(site)
    _, theirs = session(site)
    assert csrf and theirs and csrf != theirs
    fields = {"i": "web", "op": "layer", "node": node, "layer": "hot"}
    own = {"Cookie": cookie, "Origin": site.base}
    for sent in ({}, {"csrf": ""}, {"csrf": theirs}):
        status, _, body = ask(f"{site.base}/ui/edit", own, urlencode({**fields, **sent}).encode())
        assert status == 403 and "Reload the page" in body, (sent, status)
    assert layer_of(site, node) != "hot"
    assert ask(f"{site.base}/ui/edit", own, urlencode({**fields, "csrf": csrf}).encode())[0] == 303
    assert layer_of(site, node) == "hot"
    # A bearer header is no cookie a browser adds by itself: its Origin is checked, no form token.
    bearer = {"Authorization": f"Bearer {ADMIN}", "Origin": site.base}
    status, _, _ = ask(f"{site.base}/ui/edit", bearer, urlencode({**fields, "layer": "cold"}).encode())
    assert status == 303 and layer_of(site, node) == "cold"


# --- framing and the security headers -------------------------------------------------------------
def test_every_answer_carries_the_security_headers(site: Site) -> None:
    cookie, _ = session(site)
    node = site.fixture.ids["decision"]
    answers = {
        "page": ask(f"{site.base}/ui/node?i=web&id={node}", {"Cookie": cookie}),
        "sign-in form": ask(f"{site.base}/ui/"),
        "stylesheet": ask(f"{site.base}/ui/static/style.css"),
        "sign-in link": ask(f"{site.base}/ui/login?{urlencode({'token': ADMIN})}"),
        "foreign post": ask(f"{site.base}/ui/login", {"Origin": "http://evil.example"}, b"token=x"),
        "refused page": ask(f"{site.base}/ui/graph?i=payroll", {"Authorization": f"Bearer {site.fixture.alice}"}),
    }
    assert [answers[k][0] for k in answers] == [200, 401, 200, 303, 403, 403]
    for what, (_, headers, _) in answers.items():
        got = {name: headers.get(name) for name in ("Content-Security-Policy", "X-Frame-Options")}
        assert got == {"Content-Security-Policy": POLICY, "X-Frame-Options": "DENY"}, (what, got)
        assert headers.get("X-Content-Type-Options") == "nosniff", what
        assert headers.get("Referrer-Policy") == "same-origin", what


def test_a_page_of_another_site_cannot_frame_the_viewer(site: Site, page: Any) -> None:
    sign_in(page, site)
    target = f"{site.base}/ui/node?i=web&id={site.fixture.ids['decision']}"
    with attacker(f'<iframe src="{target}" width="800" height="600"></iframe>') as port:
        for other in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):  # same site, and another
            page.goto(f"{other}/prize.html")
            [framed] = [f for f in page.frames if f != page.main_frame]
            assert framed.locator("form.edit").count() == 0 and framed.locator("header .who").count() == 0, other
    page.goto(target)
    assert page.locator("form.edit").count() == 3  # the same page, opened as itself


def test_every_page_renders_under_the_policy(site: Site, page: Any) -> None:
    """No page needs more than the policy allows (no inline style, script or foreign resource):
    Chromium reports nothing it refused, the stylesheet applies and recall's bars are drawn."""
    from tests.web.test_viewer import views

    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text))
    page.goto(f"{site.base}/ui/login")
    sign_in(page, site)
    for name, path, _ in views(site):
        response = page.goto(site.base + path)
        assert response.status == 200 and response.headers["content-security-policy"] == POLICY, name
    assert [m for m in refused if "Content Security Policy" in m or "Refused" in m] == []
    assert page.evaluate("getComputedStyle(document.querySelector('header')).display") == "flex"
    widths = page.locator("li.hit svg.shares rect.share").evaluate_all("l => l.map(r => r.getBBox().width)")
    assert widths and all(w > 0 for w in widths)
    page.goto(f"{site.base}/ui/graph?i=web")
    assert page.locator(".legend .swatch circle").count() >= 3


# --- the size of a posted form --------------------------------------------------------------------
def _raw(site: Site, head: str, chunks: tuple[bytes, ...] = ()) -> bytes:
    """A request sent by hand (a length it does not keep, a body that does not end); its answer's
    first line."""
    with socket.create_connection(("127.0.0.1", site.server.port), timeout=30) as sock:
        sock.sendall(head.encode())
        try:
            for chunk in chunks:
                sock.sendall(chunk)
        except OSError:
            pass  # the server answered and closed before the rest was sent
        return sock.recv(4096).split(b"\r\n", 1)[0]


def test_a_form_declared_over_the_limit_is_refused_before_it_is_sent(site: Site) -> None:
    cookie, _ = session(site)
    host = f"127.0.0.1:{site.server.port}"
    for path, extra in (("/ui/login", ""), ("/ui/edit", f"Cookie: {cookie}\r\n")):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: {site.base}\r\n{extra}"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {300 * 1024 * 1024}\r\n\r\n"
        )
        assert _raw(site, head).startswith(b"HTTP/1.1 413 "), path


def test_a_chunked_form_is_counted_and_cut_at_the_limit(site: Site) -> None:
    head = (
        f"POST /ui/login HTTP/1.1\r\nHost: 127.0.0.1:{site.server.port}\r\nOrigin: {site.base}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    piece = b"a" * 16384
    chunk = b"%x\r\n" % len(piece) + piece + b"\r\n"
    # Past the limit, and never ended (no last chunk): only a count can refuse it.
    assert _raw(site, head, (chunk,) * (BODY_LIMIT // len(piece) + 2)).startswith(b"HTTP/1.1 413 ")


def test_the_longest_form_a_page_offers_is_under_the_limit_and_accepted(site: Site) -> None:
    initiative = "東" * 128  # the longest name, each character 9 bytes once form-encoded
    made = mcp(site, "note", {"initiative": initiative, "name": "Long form", "text": "the longest form"})
    node = made["data"]["primary"]["id"]
    cookie, _ = session(site)
    _, _, html = ask(f"{site.base}/ui/node?{urlencode({'i': initiative, 'id': node})}", {"Cookie": cookie})
    form = html.split('data-op="flag">', 1)[1].split("</form>", 1)[0]
    assert f'maxlength="{REASON_CHARS}"' in form
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form))
    body = urlencode({**{k: unescape(v) for k, v in fields.items()}, "reason": "東" * REASON_CHARS}).encode()
    assert len(body) < BODY_LIMIT
    status, headers, _ = ask(f"{site.base}/ui/edit", {"Cookie": cookie, "Origin": site.base}, body)
    assert status == 303
    _, _, after = ask(site.base + headers["Location"].split("#")[0], {"Cookie": cookie})
    assert 'id="edited">flag: applied<' in after


# --- the notice after an edit ---------------------------------------------------------------------
def test_a_head_of_the_sign_in_link_opens_no_session(site: Site) -> None:
    """A link checker or a chat's preview asks only for the headers of the link `kaeru ui` printed:
    no session is opened and no cookie set (one was, session 40's review); a GET still signs in."""
    link = f"{site.base}/ui/login?{urlencode({'token': ADMIN})}"
    request = urllib.request.Request(link, method="HEAD")
    opener = urllib.request.build_opener(_NoRedirect)
    with opener.open(request, timeout=30) as response:
        assert response.status == 200 and "Set-Cookie" not in response.headers
    status, headers, _ = ask(link)
    assert status == 303 and headers["Set-Cookie"].startswith("kaeru_ui_")


def test_the_notice_is_never_text_from_the_url(site: Site) -> None:
    said = "Your sign-in expired. Sign in again at http://kaeru-login.example/ with your token"
    for query in ({"refused": "1", "edited": said}, {"edited": said}):
        status, _, body = ask(f"{site.base}/ui/?{urlencode(query)}", {"Authorization": f"Bearer {ADMIN}"})
        assert status == 200 and "kaeru-login.example" not in body and 'id="edited"' not in body


def test_an_edits_notice_is_shown_to_whoever_made_it(site: Site) -> None:
    node = fresh_node(site, "Notice target")
    cookie, csrf = session(site)
    edit = urlencode({"i": "web", "op": "flag", "node": node, "reason": "check it", "csrf": csrf}).encode()
    status, headers, _ = ask(f"{site.base}/ui/edit", {"Cookie": cookie, "Origin": site.base}, edit)
    assert status == 303
    back = site.base + headers["Location"].split("#")[0]
    assert re.search(r"[?&]edited=[\w-]{8,16}$", back) and "applied" not in back
    assert 'id="edited">flag: applied<' in ask(back, {"Cookie": cookie})[2]
    other, _ = session(site, site.fixture.alice)
    status, _, body = ask(back, {"Cookie": other})
    assert status == 200 and 'id="edited"' not in body


def test_behind_a_proxy_the_name_the_operator_admitted_may_post(tmp_path: Path) -> None:
    """A TLS-terminating proxy may drop the port from `Host` (nginx's `$host`) or pass its own: the
    exact-origin check refused the viewer's own sign-in form there, though KAERU_ALLOWED_HOSTS
    admitted the proxy's name (review, session 40). That name's origins count as the viewer's own;
    another port of a loopback name still does not."""
    vault = new_vault("sqlite", tmp_path)
    env = subprocess_env(
        vault.env(), KAERU_AUTH_TOKEN="proxied-admin-token-42", KAERU_ALLOWED_HOSTS="kaeru.example.org"
    )
    login = urlencode({"token": "proxied-admin-token-42"}).encode()
    with http_server(env, tmp_path) as server:
        for host, origin in (
            ("kaeru.example.org", "https://kaeru.example.org:8443"),  # the port dropped from Host
            (f"127.0.0.1:{server.port}", "https://kaeru.example.org"),  # the proxy's own Host
        ):
            status, headers, _ = ask(f"{server.base}/ui/login", {"Host": host, "Origin": origin}, login)
            assert status == 303 and "Set-Cookie" in headers, (host, origin, status)
        other = f"http://127.0.0.1:{free_port()}"
        assert ask(f"{server.base}/ui/login", {"Origin": other}, login)[0] == 403
