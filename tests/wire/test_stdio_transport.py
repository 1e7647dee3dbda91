"""kaeru's own stdio transport, byte for byte: what a client that writes raw JSON-RPC lines sees.

The server reads the pipe on the event loop and writes answers straight to the descriptor (no SDK
reader/writer tasks), so these check the things that transport now owns: a malformed or blank line
does not end the session, a message far larger than a pipe buffer arrives whole in both directions,
tool calls are answered in order, stray output cannot corrupt the stream, a line the SDK cannot parse
(not JSON, nested too deep, a lone surrogate) is still answered, and end of input ends the process cleanly.
Each server is forked from the worker's server zygote through its launcher (decision 432), its pipes
and exit status its own.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.wire.support import KAERU_SERVE, initialize_request, tools_call_request

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _exchange(server_env: dict[str, str], lines: list[bytes], tmp_path: Path) -> tuple[list[dict[str, Any]], int]:
    """Feed `lines` to a fresh `kaeru serve`, close its input, and return every answer and the exit code."""
    with (tmp_path / "stderr.log").open("wb") as err:
        proc = subprocess.run(
            server_argv(KAERU_SERVE, server_env),
            input=b"".join(lines),
            stdout=subprocess.PIPE,
            stderr=err,
            env=server_env,
            timeout=90,
            check=False,
        )
    count_served_cpu()
    answers = [json.loads(raw) for raw in proc.stdout.splitlines() if raw.strip()]
    return answers, proc.returncode


def test_bad_lines_do_not_end_the_session_and_big_messages_arrive_whole(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    # ~1.5 MB of text: far beyond a 64 KiB pipe buffer on the way in, and back out again via `read`.
    body = " ".join(f"pelican{i} migrates across the estuary" for i in range(40_000))
    lines = [
        _line(initialize_request(1)),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        b"this is not json\n",
        b"\n",
        b'{"jsonrpc": "2.0", "id": 2, "method": \n',
        _line({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        _line(tools_call_request(4, "note", {"initiative": "pipe", "text": body, "request_id": "big-1"})),
        _line(tools_call_request(5, "search", {"initiatives": ["pipe"], "text": "pelican39999"})),
        _line({"jsonrpc": "2.0", "id": 6, "method": "ping"}),
    ]
    answers, code = _exchange(server_env, lines, tmp_path)

    assert code == 0, (tmp_path / "stderr.log").read_text()
    by_id = {a["id"]: a for a in answers if "id" in a and a["id"] is not None}
    assert by_id[3]["result"] == {} and by_id[6]["result"] == {}
    # Tool calls are answered in the order they were asked (a ping need not wait for the calls
    # before it: they run off the event loop, decision 15.P1), and every answer arrives even though
    # the input closed right after the last line.
    ordered = [a["id"] for a in answers if a.get("id") in (1, 4, 5)]
    assert ordered == [1, 4, 5]
    assert sorted(a["id"] for a in answers if a.get("id") in (1, 3, 4, 5, 6)) == [1, 3, 4, 5, 6]
    note = by_id[4]["result"]["structuredContent"]
    assert note["state"] == "applied"
    node_id = note["data"]["primary"]["id"]
    search = by_id[5]["result"]["structuredContent"]
    assert [hit["id"] for hit in search["data"]["hits"]] == [node_id]


def test_a_large_answer_is_written_whole(server_env: dict[str, str], tmp_path: Path) -> None:
    # 60,000 characters, read back whole: the answer carries it twice (structured and text), ~120 KB.
    body = "albatross " * 6_000
    first = [
        _line(initialize_request(1)),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line(tools_call_request(2, "note", {"initiative": "pipe", "text": body.strip()})),
    ]
    answers, _ = _exchange(server_env, first, tmp_path)
    node_id = answers[-1]["result"]["structuredContent"]["data"]["primary"]["id"]

    second = [
        _line(initialize_request(1)),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line(tools_call_request(2, "read", {"initiative": "pipe", "node": node_id, "budget_chars": 64_000})),
    ]
    answers, code = _exchange(server_env, second, tmp_path)
    assert code == 0
    result = answers[-1]["result"]
    assert result["structuredContent"]["state"] == "ok"
    assert result["structuredContent"]["data"]["hits"][0]["body"] == body.strip()
    # The compact text carries the body whole too (decision 18.C1).
    assert body.strip() in result["content"][0]["text"]


def test_a_request_with_a_lone_surrogate_is_answered_not_left_waiting(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """JSON may escape half a surrogate pair (`"\\ud800"`); that is not Unicode text and the SDK's
    parser refuses the line. The caller still gets an answer with its request's id — for a tool
    call the usual `rejected` result naming the argument — nothing is stored, and the session goes on."""
    lines = [
        _line(initialize_request(1)),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line(
            tools_call_request(2, "note", {"initiative": "half", "text": "heron \ud800 sighting", "request_id": "r-2"})
        ),
        _line(
            tools_call_request(
                3, "search", {"initiatives": ["half"], "text": "heron", "filters": {"tags": ["x\udc00"]}}
            )
        ),
        _line({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"_meta": {"note": "\ud83d"}}}),
        _line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"reason": "\ud800"}}),
        _line(tools_call_request(5, "note", {"initiative": "half", "text": "egret sighting"})),
        _line(tools_call_request(6, "search", {"initiatives": ["half"], "text": "heron sighting"})),
        # In a key, not a value: the refusal named the key as it was, and writing an answer holding
        # a lone surrogate killed the server (decision 239).
        _line(tools_call_request(7, "note", {"initiative": "half", "text": "t", "k\ud800": 1})),
        _line({"jsonrpc": "2.0", "id": 8, "method": "ping", "params": {"_meta": {"\udc00": "v"}}}),
        _line(tools_call_request(9, "note", {"initiative": "half", "text": "still serving"})),
    ]
    answers, code = _exchange(server_env, lines, tmp_path)

    assert code == 0, (tmp_path / "stderr.log").read_text()
    by_id = {a["id"]: a for a in answers if a.get("id") is not None}
    assert sorted(by_id) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    keyed = by_id[7]["result"]["structuredContent"]
    assert [(i["code"], i["field"]) for i in keyed["issues"]] == [("invalid_argument", "k\\ud800")], keyed
    assert by_id[8]["error"]["code"] == -32602 and "params._meta.\\udc00" in by_id[8]["error"]["message"]
    assert by_id[9]["result"]["structuredContent"]["state"] == "applied"
    note = by_id[2]["result"]
    assert note["isError"] is True
    assert note["structuredContent"]["state"] == "rejected"
    assert note["structuredContent"]["request_id"] == "r-2"
    assert [(i["code"], i["field"]) for i in note["structuredContent"]["issues"]] == [("invalid_argument", "text")]
    search = by_id[3]["result"]["structuredContent"]
    assert [(i["code"], i["field"]) for i in search["issues"]] == [("invalid_argument", "filters.tags[0]")]
    assert by_id[4]["error"]["code"] == -32602 and "params._meta.note" in by_id[4]["error"]["message"]
    assert by_id[5]["result"]["structuredContent"]["state"] == "applied"
    found = by_id[6]["result"]["structuredContent"]["data"]
    assert [h["id"] for h in found["hits"]] == [by_id[5]["result"]["structuredContent"]["data"]["primary"]["id"]]


def _nested(depth: int) -> dict[str, Any]:
    outer: dict[str, Any] = {}
    inner = outer
    for _ in range(depth):
        inner["a"] = {}
        inner = inner["a"]
    return outer


def test_a_line_the_parser_refuses_is_answered_not_left_waiting(server_env: dict[str, str], tmp_path: Path) -> None:
    """A line that is not JSON gets JSON-RPC's parse error; a request nested past the parser's
    recursion limit gets an answer with its id — for a call of a tool, the usual `rejected` result
    on `arguments` — and the session goes on. (Both were only logged: the caller waited forever.)"""
    deep = _nested(400)
    lines = [
        _line(initialize_request(1)),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        b"{not json\n",
        _line(tools_call_request(2, "note", {"initiative": "deep", "text": "x", "options": deep, "request_id": "d-2"})),
        _line({"jsonrpc": "2.0", "id": "p-3", "method": "ping", "params": {"_meta": deep}}),
        _line({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"_meta": deep}}),
        b"[1, 2]\n",
        _line(tools_call_request(4, "note", {"initiative": "deep", "text": "the session goes on"})),
    ]
    answers, code = _exchange(server_env, lines, tmp_path)

    assert code == 0, (tmp_path / "stderr.log").read_text()
    unnamed = [a for a in answers if a.get("id") is None]
    assert [a["error"]["code"] for a in unnamed] == [-32700, -32600], unnamed
    by_id = {a["id"]: a for a in answers if a.get("id") is not None}
    assert sorted(by_id, key=str) == [1, 2, 4, "p-3"]
    refused = by_id[2]["result"]
    assert refused["isError"] is True
    envelope = refused["structuredContent"]
    assert envelope["state"] == "rejected" and envelope["request_id"] == "d-2"
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", "arguments")]
    assert by_id["p-3"]["error"]["code"] == -32600
    assert by_id[4]["result"]["structuredContent"]["state"] == "applied"


#: Note calls enough that their answers (several hundred bytes each) overflow a pipe's buffer: the
#: server cannot have answered them all before its reader goes.
GONE_CALLS = 200


def _search_line(request_id: int) -> bytes:
    return _line(tools_call_request(request_id, "search", {"initiatives": ["gone"], "text": "pipe"}))


def _reader_leaves_early(server_env: dict[str, str], lines: list[bytes], tmp_path: Path, stdin: str) -> tuple[int, str]:
    """`… | kaeru serve | head -c 1`: every line given at once (on a pipe closed after them, or as a
    file), the first byte of the answers read, then the reader gone; the exit code and stderr."""
    given = tmp_path / "calls.jsonl"
    given.write_bytes(b"".join(lines))
    log = tmp_path / "gone.log"
    with log.open("wb") as errors, given.open("rb") as source:
        proc = subprocess.Popen(
            server_argv(KAERU_SERVE, server_env),
            stdin=subprocess.PIPE if stdin == "pipe" else source,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=server_env,
        )
        try:
            assert proc.stdout is not None
            if proc.stdin is not None:
                proc.stdin.write(given.read_bytes())  # far less than a pipe's buffer: never blocks
                proc.stdin.close()
            proc.stdout.read(1)
            proc.stdout.close()
            code = proc.wait(90)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            count_served_cpu()
    return code, log.read_text()


@pytest.mark.parametrize("stdin", ["pipe", "file"])
def test_a_reader_gone_ends_the_session_cleanly_and_a_retry_replays_what_was_stored(
    server_env: dict[str, str], tmp_path: Path, stdin: str
) -> None:
    """The tester's `… | kaeru serve | head -c 1`: the server exited 1 with a traceback for every
    answer it could not write. Now it ends cleanly, with one line on stderr; the calls applied
    before the reader went stay applied, none after it starts, and sending every call again with
    the same `request_id`s replays the applied ones and applies the rest: each note stored once."""
    calls = [
        _line(tools_call_request(i, "note", {"initiative": "gone", "text": f"pipe note {i}", "request_id": f"r{i}"}))
        for i in range(1, GONE_CALLS + 1)
    ]
    opening = [_line(initialize_request(0)), _line({"jsonrpc": "2.0", "method": "notifications/initialized"})]

    code, said = _reader_leaves_early(server_env, opening + calls, tmp_path, stdin)

    assert code == 0, said
    assert "Traceback" not in said and len(said.splitlines()) <= 1, said
    assert "the client stopped reading" in said
    answers, code = _exchange(server_env, [*opening, _search_line(-1), *calls, _search_line(-2)], tmp_path)
    assert code == 0
    by_id = {a["id"]: a["result"]["structuredContent"] for a in answers if a.get("id") not in (None, 0)}
    stored_before = by_id[-1]["data"]["total"]
    notes = [by_id[i] for i in range(1, GONE_CALLS + 1)]
    assert all(n["state"] == "applied" for n in notes), [n for n in notes if n["state"] != "applied"][:1]
    assert sum(n["replayed"] for n in notes) == stored_before
    assert by_id[-2]["data"]["total"] == GONE_CALLS


def test_a_line_over_the_limit_is_answered_and_the_session_goes_on(server_env: dict[str, str], tmp_path: Path) -> None:
    """One line over 64 MiB (the bound of a message, as over HTTP) ended the server with a
    traceback: the calls before it went unanswered, and every call after it was lost."""
    over = "x" * (65 * 1024 * 1024)
    lines = [
        _line(initialize_request(1)),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line(tools_call_request(2, "note", {"initiative": "pipe", "text": "before the big line", "request_id": "b"})),
        _line(tools_call_request(3, "note", {"initiative": "pipe", "text": over, "meta": {"id": 99}})),
        _line({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
    ]
    answers, code = _exchange(server_env, lines, tmp_path)
    assert code == 0 and "Traceback" not in (tmp_path / "stderr.log").read_text()
    by_id = {a["id"]: a for a in answers}
    assert by_id[2]["result"]["structuredContent"]["state"] == "applied"
    assert by_id[3]["error"]["code"] == -32600 and "64 MiB" in by_id[3]["error"]["message"]
    assert by_id[4]["result"] == {}


def test_arguments_that_are_no_object_are_refused_naming_them(server_env: dict[str, str], tmp_path: Path) -> None:
    """A model that sends its arguments as a JSON string (or a list) got "Invalid request
    parameters" with no word of which; it is a `rejected` envelope naming `arguments` now."""
    text = json.dumps({"initiative": "pipe", "text": "sent as text"})
    call = {"jsonrpc": "2.0", "method": "tools/call"}
    lines = [
        _line(initialize_request(1)),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line({**call, "id": 2, "params": {"name": "note", "arguments": text}}),
        _line({**call, "id": 3, "params": {"name": "search", "arguments": ["pipe"]}}),
        _line(tools_call_request(4, "search", {"initiatives": ["pipe"], "text": "sent"})),
    ]
    answers, code = _exchange(server_env, lines, tmp_path)
    by_id = {a["id"]: a["result"]["structuredContent"] for a in answers if a.get("id") in (2, 3, 4)}
    assert code == 0
    for request_id, kind in ((2, "a string holding JSON: send the object itself"), (3, "a list")):
        envelope = by_id[request_id]
        assert envelope["state"] == "rejected" and envelope["issues"][0]["field"] == "arguments"
        assert kind in envelope["issues"][0]["message"]
    assert by_id[4]["data"]["total"] == 0, "nothing was written"


def test_every_call_read_from_a_file_is_answered(server_env: dict[str, str], tmp_path: Path) -> None:
    """`kaeru serve < calls.jsonl`: the SDK's transport, which served a regular file, cancelled the
    calls still running at the file's end — each note was stored and never answered, so a caller
    without request ids wrote again on every run. Every call is answered, as through a pipe."""
    given = tmp_path / "calls.jsonl"
    opening = [_line(initialize_request(0)), _line({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    calls = [_line(tools_call_request(i, "note", {"initiative": "file", "text": f"filed note {i}"})) for i in (1, 2, 3)]
    given.write_bytes(
        b"".join([*opening, *calls, _line(tools_call_request(4, "search", {"initiatives": ["file"], "text": "filed"}))])
    )
    with given.open("rb") as source, (tmp_path / "stderr.log").open("wb") as err:
        done = subprocess.run(
            server_argv(KAERU_SERVE, server_env),
            stdin=source,
            stdout=subprocess.PIPE,
            stderr=err,
            env=server_env,
            timeout=90,
            check=False,
        )
    count_served_cpu()
    answers = {a["id"]: a for raw in done.stdout.splitlines() if raw.strip() and "id" in (a := json.loads(raw))}
    assert done.returncode == 0 and sorted(answers) == [0, 1, 2, 3, 4]
    assert [answers[i]["result"]["structuredContent"]["state"] for i in (1, 2, 3)] == ["applied"] * 3
    assert answers[4]["result"]["structuredContent"]["data"]["total"] == 3
