"""Another account on the same machine (decision 178): a `kaeru serve --http` with no token serves
requests without one only from the account that runs it; another account's get a 401 from `/mcp`
and the sign-in form from `/ui`, and are served with a token like anyone.

The other account is `nobody` (uid 65534), reached by a child process that drops to it — so these run
as root (CI does) and are skipped otherwise. Its client is the system Python with the standard
library only: the test's virtual environment may sit in a folder `nobody` cannot enter."""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.peers import UNKNOWN, owner
from tests.cli.support import kaeru
from tests.wire.support import (
    free_port,
    http_server,
    initialize_request,
    raw_post,
    stop,
    subprocess_env,
    tools_call_request,
    wait_until,
)

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel says who owns a socket on Linux"),
    pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="acting as another account needs root"),
    pytest.mark.timeout(120),
]

NOBODY = 65534
#: One request as another account: the status and body of a POST (or a GET when there is no body).
CLIENT = """
import json, sys, urllib.error, urllib.request
url, body, token = sys.argv[1], sys.argv[2], sys.argv[3]
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
if token:
    headers["Authorization"] = "Bearer " + token
request = urllib.request.Request(url, data=body.encode() or None, headers=headers)
try:
    with urllib.request.urlopen(request, timeout=15) as response:
        print(json.dumps([response.status, response.read().decode()]))
except urllib.error.HTTPError as error:
    print(json.dumps([error.code, error.read().decode()]))
"""


@functools.cache
def system_python() -> str:
    """A Python the other account can run (the test's own may live in root's home)."""
    for candidate in ("/usr/bin/python3", str(Path(sys.base_prefix) / "bin" / "python3")):
        ran = subprocess.run([candidate, "-I", "-c", "pass"], user=NOBODY, cwd="/", capture_output=True, check=False)
        if ran.returncode == 0:
            return candidate
    pytest.skip("no Python that the other account (nobody) may run")


def as_nobody(url: str, payload: Any = None, token: str = "") -> tuple[int, str]:
    body = json.dumps(payload) if payload is not None else ""
    done = subprocess.run(
        [system_python(), "-I", "-c", CLIENT, url, body, token],
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    status, text = json.loads(done.stdout)
    return int(status), str(text)


def test_the_kernel_names_the_owner_of_a_loopback_connection() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listening:
        server = listening.getsockname()
        with socket.create_connection(server) as _mine:
            accepted, client = listening.accept()
            with accepted:
                assert owner(client, server) == os.getuid()
        theirs = subprocess.Popen(
            [
                system_python(),
                "-I",
                "-c",
                f"import socket, sys; s = socket.create_connection({server!r}); sys.stdin.read()",
            ],
            user=NOBODY,
            cwd="/",
            stdin=subprocess.PIPE,
        )
        try:
            accepted, client = listening.accept()
            with accepted:
                assert owner(client, server) == NOBODY
                assert theirs.stdin is not None
                theirs.stdin.close()
                theirs.wait(10)
                # Closed by its process, the socket lingers ownerless (the kernel says uid 0, which
                # would pass for root's own): no owner.
                assert owner(client, server) is None
        finally:
            if theirs.poll() is None:
                theirs.kill()
    assert owner(("127.0.0.1", 1), server) is None
    assert UNKNOWN not in (owner(client, server), owner(("127.0.0.1", 1), server))


def test_without_a_token_only_the_servers_own_account_is_served(tmp_path: Path) -> None:
    vault = {"KAERU_VAULT": str(tmp_path / "vault")}
    with http_server(subprocess_env(vault), tmp_path) as server:
        status, _ = raw_post(server.url, initialize_request())
        assert status == 200  # this account: served as the local admin, as before
        status, _ = raw_post(server.url, initialize_request(), {"X-Forwarded-For": "10.9.8.7"})
        assert status == 200  # the connection is asked about, not a header
        status, body = as_nobody(server.url, initialize_request())
        assert status == 401
        assert "account that runs the server" in json.loads(body)["error_description"]
        status, page = as_nobody(f"{server.base}/ui/")
        assert status == 401 and "token" in page.lower()

        # A token serves any account: made while the server runs, it closes the door to tokenless
        # requests for everyone and opens it to its holder.
        made = kaeru(vault, "token", "add", "nobody-on-this-box", as_json=True)
        assert made.code == 0, made.stderr
        token = made.json()["token"]
        status, _ = as_nobody(server.url, initialize_request(), token)
        assert status == 200
        note = tools_call_request(2, "note", {"initiative": "web", "text": "written from another account"})
        status, body = as_nobody(server.url, note, token)
        assert status == 200 and json.loads(body)["result"]["structuredContent"]["state"] == "applied"
        status, _ = raw_post(server.url, initialize_request())
        assert status == 401  # the vault holds a token now: this account needs one too


#: Another account's client that first opens `idle` connections it never uses — to use up the
#: server's descriptors — then calls `note` without a token on the connection it opened first.
EXHAUSTING = """
import json, socket, sys, time
port, idle = int(sys.argv[1]), int(sys.argv[2])
first = socket.create_connection(("127.0.0.1", port))
time.sleep(0.3)
held = []
for _ in range(idle):
    try:
        held.append(socket.create_connection(("127.0.0.1", port), timeout=2))
    except OSError:
        break
time.sleep(1.0)
body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "note", "arguments": {"initiative": "web", "text": "planted"}}}).encode()
first.sendall(b"POST /mcp HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nContent-Type: application/json\\r\\n"
              b"Accept: application/json, text/event-stream\\r\\nContent-Length: %d\\r\\n\\r\\n" % (port, len(body)) + body)
first.settimeout(10)
print(first.recv(200).split(b"\\r\\n")[0].decode())
"""


def test_a_server_out_of_descriptors_refuses_another_account_rather_than_serving_it(tmp_path: Path) -> None:
    """Found in review: when the kernel could not be asked (no descriptor left for the question),
    the request was served as this account's; another account can bring that about by holding
    connections open."""
    vault = {"KAERU_VAULT": str(tmp_path / "vault")}
    assert kaeru(vault, "note", "--initiative", "web", "an existing note").code == 0
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            ["sh", "-c", 'ulimit -n 64 && exec "$@"', "sh", sys.executable, "-m", "kaeru", "serve", "--http",
             "--host", "127.0.0.1", "--port", str(port)],
            env=subprocess_env(vault),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            wait_until(lambda: _listening(port), 30, f"port {port}")
            done = subprocess.run(
                [system_python(), "-I", "-c", EXHAUSTING, str(port), "100"],
                user=NOBODY,
                cwd="/",
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            assert done.stdout.split()[:2] == ["HTTP/1.1", "401"], done.stdout
        finally:
            stop(proc)
    found = kaeru(vault, "search", "--initiative", "web", "planted", as_json=True)
    assert found.json()["data"]["total"] == 0


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True
