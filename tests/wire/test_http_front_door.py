"""What a person and an everyday client meet at a real `kaeru serve --http`'s door.

The TypeScript SDK — Claude Code, Cursor, VS Code — asks for its optional event stream with a GET
on `/mcp` after every `initialize`, and takes the 405 as "no stream here" (decision 231): that is no
refusal for the operator's log to warn of beside a wrong token, which still is one. And the server's
own address, `/`, leads to the web viewer it serves, which its start-up banner names, as `kaeru ui`
does (before, `/` was a 404 and the banner named `/mcp` only)."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path

import pytest

from tests.backends import VaultSpec
from tests.wire.support import HttpServer, http_server, initialize_request, raw_post, subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ADMIN = "front-door-admin-token-5e3"
WRONG = "kaeru_not-this-token-q42"
#: A log line as the operator reads it: ISO time in UTC, level, logger, message.
LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: (.*)$")


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """A GET, its redirect not followed: (status, headers by their lower-case names, body)."""
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=15) as response:
            return int(response.status), _lower(response.headers), response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return int(error.code), _lower(error.headers), error.read().decode(errors="replace")


def _lower(headers: Message) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def _logged(server: HttpServer, level: str) -> list[str]:
    """The messages of the log's lines at `level`."""
    return [m.group(2) for line in server.output().splitlines() if (m := LINE.match(line)) and m.group(1) == level]


def test_the_event_stream_get_a_typescript_client_opens_is_no_warning_and_a_wrong_token_still_is(
    vault: VaultSpec, tmp_path: Path
) -> None:
    env = subprocess_env(vault.env(), KAERU_AUTH_TOKEN=ADMIN)
    # As the TypeScript SDK sends it after `initialize`: its token, the negotiated version, SSE only.
    stream = {"Authorization": f"Bearer {ADMIN}", "mcp-protocol-version": "2025-06-18", "Accept": "text/event-stream"}
    with http_server(env, tmp_path) as server:
        status, _ = raw_post(server.url, initialize_request(), {"Authorization": f"Bearer {ADMIN}"})
        assert status == 200
        for _ in range(3):
            status, headers, body = _get(server.url, stream)
            assert status == 405 and headers.get("allow") == "POST", (status, headers, body)
            assert "sends no event stream" in body, body
        status, _ = raw_post(server.url, initialize_request(), {"Authorization": f"Bearer {WRONG}"})
        assert status == 401
    warnings = _logged(server, "WARNING")
    assert "refused /mcp from 127.0.0.1: unknown token" in warnings, server.output()
    assert not [w for w in warnings if "GET" in w], server.output()
    assert WRONG not in server.output() and ADMIN not in server.output()


def test_the_servers_address_leads_to_the_viewer_the_banner_names(vault: VaultSpec, tmp_path: Path) -> None:
    with http_server(subprocess_env(vault.env()), tmp_path) as server:
        status, headers, _ = _get(f"{server.base}/")
        assert status == 307 and headers.get("location") == "/ui/", (status, headers)
        banner = [line for line in server.output().splitlines() if "web viewer" in line]
        assert banner == [f"the web viewer at {server.base}/ui/"], server.output()
        status, _, page = _get(f"{server.base}/ui/")
        assert status == 200 and "<html" in page, (status, page[:300])
        # The redirect answers the address only: another path is still not found, `/mcp` still MCP's.
        assert _get(f"{server.base}/nothing-here")[0] == 404
        assert raw_post(server.url, initialize_request())[0] == 200


def test_a_banner_of_a_server_that_asks_for_tokens_says_to_sign_in(vault: VaultSpec, tmp_path: Path) -> None:
    with http_server(subprocess_env(vault.env(), KAERU_AUTH_TOKEN=ADMIN), tmp_path) as server:
        banner = [line for line in server.output().splitlines() if "web viewer" in line]
        assert banner == [f"the web viewer at {server.base}/ui/ (sign in with a token)"], server.output()
        status, headers, _ = _get(f"{server.base}/")
        assert status == 307 and headers.get("location") == "/ui/", (status, headers)
