"""What the operator of `kaeru serve --http` reads in its log (stderr), from a real server: refused
tokens, `internal` answers, a failing health check, the start-up advice and the stop (session 53)."""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.backends import VaultSpec
from tests.cli.test_doctor import _sql
from tests.wire.bearer_clients import bearer_client, token_of
from tests.wire.support import HttpServer, call_ok, http_server, initialize_request, raw_post, structured

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

#: A log line as the operator reads it: ISO time in UTC, level, logger, message.
LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ")
WRONG = "kaeru_not-a-token-zq81"
ADMIN = "operator-log-admin-token-7c1"


def _lines(server: HttpServer, needle: str) -> list[str]:
    return [line for line in server.output().splitlines() if needle in line]


def _refused_count(server: HttpServer, where: str, reason: str) -> int:
    """How many refusals of `reason` on `where` from 127.0.0.1 the log accounts for: one per first
    line, plus each summary's count."""
    firsts = _lines(server, f"refused {where} from 127.0.0.1: {reason}")
    summary = re.compile(rf"refused {where} from 127\.0\.0\.1 (\d+) more times since the first: {re.escape(reason)}$")
    more = [int(m.group(1)) for line in _lines(server, where) if (m := summary.search(line))]
    return len(firsts) + sum(more)


def _health(server: HttpServer) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"{server.base}/health", timeout=15) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode()


def _health_turns(server: HttpServer, status: int) -> tuple[int, str]:
    """`/health`'s answer once it is `status` (a verdict is answered again for a second), or the last."""
    deadline = time.monotonic() + 20
    answer = _health(server)
    while answer[0] != status and time.monotonic() < deadline:
        time.sleep(0.2)
        answer = _health(server)
    return answer


def _get(url: str, headers: dict[str, str] | None = None, method: str = "GET") -> int:
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers=headers or {}, method=method), timeout=15
        ) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_refused_tokens_are_logged_by_address_and_reason_without_the_token(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    token_of(vault, "alice")
    with http_server(server_env, tmp_path) as server:
        for _ in range(40):
            status, _ = raw_post(server.url, initialize_request(), {"Authorization": f"Bearer {WRONG}"})
            assert status == 401
        for _ in range(3):
            assert raw_post(server.url, initialize_request())[0] == 401
        login = f"{server.base}/ui/login?{urllib.parse.urlencode({'token': WRONG})}"  # the link `kaeru ui` prints
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(login, timeout=15)
        assert refused.value.code == 401
    log = server.output()
    assert WRONG not in log and "zq81" not in log, log
    # Each refusal is accounted for, in fewer lines than refusals (the first one, then counts).
    assert _refused_count(server, "/mcp", "unknown token") == 40, log
    assert len(_lines(server, "unknown token")) < 40, log
    assert _refused_count(server, "/mcp", "no token") == 3, log
    assert _refused_count(server, "/ui", "unknown token") == 1, log
    for line in _lines(server, "refused"):
        assert LINE.match(line), line
    # A clean stop says so, after the vault is closed: the last line of the log.
    assert re.search(r"INFO kaeru\.http: stopped on SIGTERM; vault closed$", log.strip().splitlines()[-1]), log


def test_health_fails_and_says_why_in_the_log_when_a_table_every_write_needs_is_gone(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    with http_server(server_env, tmp_path) as server:
        assert _health(server) == (200, "ok")
        _sql(vault, "ALTER TABLE nodes RENAME TO nodes_x")
        status, said = _health_turns(server, 503)
        assert status == 503 and said.startswith("internal:") and "nodes" not in said, (status, said)
        assert _health(server)[0] == 503
        _sql(vault, "ALTER TABLE nodes_x RENAME TO nodes")
        assert _health_turns(server, 200) == (200, "ok")
    log = server.output()
    # Said once for the two failed checks, with its reason; and once when it passes again.
    failing = _lines(server, "health check failing")
    assert len(failing) == 1 and LINE.match(failing[0]) and "nodes" in failing[0], log
    assert len(_lines(server, "health check passes again")) == 1, log


@pytest.mark.anyio
async def test_an_internal_answer_is_logged_once_and_a_limited_caller_is_not_told_the_sql(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    alice = token_of(vault, "alice")
    bob = token_of(vault, "bob", "--initiatives", "web")
    with http_server(server_env, tmp_path) as server:
        async with bearer_client(server.url, alice) as client:
            await call_ok(client, "note", {"initiative": "web", "text": "before the table went"})
        _sql(vault, "ALTER TABLE nodes RENAME TO nodes_x")
        async with bearer_client(server.url, alice) as client:
            whole = structured(
                await client.call_tool("note", {"initiative": "web", "text": "x", "request_id": "r-alice"})
            )
        async with bearer_client(server.url, bob) as client:
            cut = structured(await client.call_tool("note", {"initiative": "web", "text": "y", "request_id": "r-bob"}))
    log = server.output()

    issue = whole["issues"][0]
    assert whole["state"] == "rejected" and issue["code"] == "internal", whole
    assert "nodes" in issue["message"], issue  # who sees every initiative is told the whole error
    limited = cut["issues"][0]
    assert limited["code"] == "internal" and limited["message"].startswith("storage error: "), cut
    assert "nodes" not in limited["message"] and "the server's log has the whole message" in limited["message"], cut

    for request_id, actor, answer in (("r-alice", "alice", issue), ("r-bob", "bob", limited)):
        ref = re.search(r"\[log ref ([0-9a-f]+)\]", answer["message"])
        assert ref is not None, answer
        logged = _lines(server, f"ref {ref.group(1)}")
        assert len(logged) == 1, log
        assert LINE.match(logged[0]) and " ERROR kaeru.mcp: internal answer to note " in logged[0], logged
        assert f"actor {actor}" in logged[0] and f"request_id {request_id}" in logged[0], logged
        assert "storage error: " in logged[0] and "nodes" in logged[0], logged  # the whole storage message


def test_start_up_points_people_at_their_own_tokens_and_warns_of_a_token_named_as_the_admin(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    token_of(vault, "ops")  # the CLI acts as `agent` here: it lets `ops` be a token's name
    env = {**server_env, "KAERU_AUTH_TOKEN": ADMIN, "KAERU_ACTOR": "ops"}
    with http_server(env, tmp_path) as server:
        pass
    log = server.output()
    assert "--token-env KAERU_TOKEN " in log and "--token-env KAERU_AUTH_TOKEN" not in log, log
    warned = _lines(server, "the vault token 'ops' is named as this server's admin actor")
    assert len(warned) == 1 and LINE.match(warned[0]) and " WARNING " in warned[0], log
    assert ADMIN not in log


def test_health_reads_the_vaults_secret_from_meta_itself(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    # The secret every token check and node id needs: a SQLite store holds it from its opening, and
    # `/health` said `ok` with `meta` gone.
    with http_server(server_env, tmp_path) as server:
        _sql(vault, "ALTER TABLE meta RENAME TO meta_x")
        try:
            status, said = _health_turns(server, 503)
        finally:
            _sql(vault, "ALTER TABLE meta_x RENAME TO meta")
        assert status == 503 and said.startswith("internal:"), (status, said)
        assert _health_turns(server, 200) == (200, "ok")
    assert len(_lines(server, "health check failing")) == 1, server.output()


def test_a_flood_of_requests_refused_before_any_token_costs_a_few_lines_and_each_is_counted(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    with http_server(server_env, tmp_path) as server:
        for n in range(150):
            assert _get(server.url, method="DELETE") == 405
            status, _ = raw_post(server.url, initialize_request(), {"Host": f"rebind-{n}.example"})
            assert status == 421
        for n in range(5):
            kind = {"Content-Type": f"text/plain; tag=ct{n}"}
            assert raw_post(server.url, initialize_request(), kind)[0] == 400
            version = {"MCP-Protocol-Version": f"1999-0{n}-01"}
            assert raw_post(server.url, initialize_request(), version)[0] == 400
    log = server.output()
    assert _refused_count(server, "/mcp", "DELETE") == 150, log
    assert _refused_count(server, "/mcp", "Host not allowed") == 150, log
    assert _refused_count(server, "/mcp", "Content-Type not application/json") == 5, log
    assert _refused_count(server, "/mcp", "unknown MCP-Protocol-Version") == 5, log
    # A first line and one count for each reason, whatever the caller's headers said.
    assert len(_lines(server, "refused")) <= 8, log
    assert "rebind-" not in log and "ct3" not in log and "1999-0" not in log, log
    for line in _lines(server, "refused"):
        assert LINE.match(line) and " WARNING kaeru.http: " in line, line


def test_a_viewer_request_with_an_authorization_header_that_is_no_bearer_token_is_logged(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    with http_server(server_env, tmp_path) as server:
        for _ in range(3):
            assert _get(f"{server.base}/ui/", {"Authorization": "Basic YWxpY2U6c2VjcmV0"}) == 401
    log = server.output()
    assert _refused_count(server, "/ui", "not a bearer token") == 3, log
    assert "YWxpY2U6c2VjcmV0" not in log, log
