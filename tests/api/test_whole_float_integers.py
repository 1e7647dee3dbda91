"""A whole number sent as a float (`limit: 2.0`) is the integer it names, at every integer argument
of every tool. JSON Schema counts `2.0` an integer, so the schema accepted it, and the request was
built without coercion (`model_construct`): `recall`, `timeline`, `search` and `read` answered
`internal` (a float reached slicing), and `reminder.window_days: 2.0` was refused as "not a whole
number". The fields are read from the `tools/list` schemas, so a new integer argument is covered
(or fails `test_every_integer_argument_has_a_call`) without editing this file. Both backends."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from kaeru.mcp.pinned import pinned_listing
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.cli.support import kaeru, valid_envelope

LISTING = pinned_listing() or []
ArgPath = tuple[str, ...]


def _branches(schema: dict[str, Any], defs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`schema` and the subschemas a value there may match (`$ref`, `anyOf`, `oneOf`, `allOf`)."""
    if "$ref" in schema:
        yield from _branches(defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    yield schema
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key) or ():
            yield from _branches(branch, defs)


def _integer_paths(schema: dict[str, Any], defs: dict[str, Any], at: ArgPath = ()) -> Iterator[tuple[ArgPath, Any]]:
    """Each argument path under `schema` typed `integer`, objects followed down (three levels)."""
    for branch in _branches(schema, defs):
        kind = branch.get("type")
        if at and (kind == "integer" or (isinstance(kind, list) and "integer" in kind)):
            yield at, branch
        if len(at) < 3:
            for name, inner in (branch.get("properties") or {}).items():
                yield from _integer_paths(inner, defs, (*at, name))


def _fields() -> list[tuple[str, ArgPath, int]]:
    found: dict[tuple[str, ArgPath], int] = {}
    for tool in LISTING:
        schema = tool["inputSchema"]
        for path, spec in _integer_paths(schema, schema.get("$defs") or {}):
            low = spec.get("minimum", 0)
            value = spec.get("default") or max(low, 2)  # not 0: an offset of 0 is skipped, not used
            found.setdefault((tool["name"], path), min(value, spec.get("maximum", value)))
    return [(tool, path, value) for (tool, path), value in sorted(found.items())]


FIELDS = _fields()
WEB = "web"
REMINDER = {"after": "2026-03-10", "window_days": 3}


def _base(tool: str, node: str, mark: str = "") -> dict[str, Any] | None:
    """A call of `tool` the integer argument is set in (None: none written for it yet); `mark` makes
    a write's text its own (the same write twice is answered as a retry)."""
    ref = {"id": node}
    return {
        "initiatives": {},
        "context": {"initiative": WEB},
        "recall": {"initiatives": [WEB], "query": "heron"},
        "timeline": {"initiatives": [WEB], "anchor": ref},
        "search": {"initiatives": [WEB], "text": "heron"},
        "read": {"initiative": WEB, "node": ref},
        "trail": {"initiative": WEB, "node": ref},
        "note": {"initiative": WEB, "text": f"water the ferns{mark}", "reminder": dict(REMINDER)},
        "task": {"initiative": WEB, "text": f"repot the ferns{mark}", "reminder": dict(REMINDER)},
        "revise": {"initiative": WEB, "node": ref, "patch": {"reminder": dict(REMINDER)}},
    }.get(tool)


def _with(args: dict[str, Any], path: ArgPath, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(args)
    place = out
    for step in path[:-1]:
        place = place.setdefault(step, {})
    place[path[-1]] = value
    return out


def _written(run: Any, answer: dict[str, Any]) -> dict[str, Any]:
    """The properties of the node `answer` (a write) wrote, read back."""
    assert answer["state"] == "applied", answer
    node = answer["data"]["primary"]["id"]
    read = run("read", {"initiative": WEB, "node": {"id": node}})
    return dict(read["data"]["hits"][0]["properties"])


def test_the_listing_has_integer_arguments() -> None:
    assert LISTING and len(FIELDS) >= 10, FIELDS
    assert any(len(path) > 1 for _, path, _ in FIELDS), "nested integers (reminder.window_days) are found"


def test_every_integer_argument_has_a_call() -> None:
    missing = sorted({tool for tool, _, _ in FIELDS if _base(tool, "x") is None})
    assert not missing, f"write a call of {missing} in _base"


@pytest.mark.parametrize(("tool", "path", "value"), FIELDS, ids=[f"{t}:{'.'.join(p)}" for t, p, _ in FIELDS])
def test_a_whole_float_is_the_integer_it_names(service: Service, tool: str, path: ArgPath, value: int) -> None:
    """A read answers the float form as it answers the integer form; a write stores the integer."""
    run = build_server(service).registry.run

    def heron(name: str) -> str:
        made = run("note", {"initiative": WEB, "text": "the heron waits by the lighthouse " * 40, "name": name})
        return str(made["data"]["primary"]["id"])

    node = heron("heron")
    base = _base(tool, node)
    assert base is not None
    as_int = run(tool, _with(base, path, value))
    if as_int["state"] != "applied":  # a read: the same answer
        assert as_int["state"] == "ok", as_int
        assert run(tool, _with(base, path, float(value))) == as_int
        return
    other = _base(tool, heron("egret"), " again")
    assert other is not None
    as_float = run(tool, _with(other, path, float(value)))
    assert (as_float["state"], as_float["issues"]) == (as_int["state"], as_int["issues"]) == ("applied", [])
    stored = _written(run, as_float)
    assert stored == _written(run, as_int)
    held = stored
    for step in path[-2:-1]:
        held = held[step]
    assert type(held[path[-1]]) is int and held[path[-1]] == value, stored


def test_kaeru_call_takes_a_whole_float_too(vault: VaultSpec) -> None:
    """The terminal's `kaeru call` is validated by the same parser: `"limit": 2.0` pages by two."""
    for text in ("the heron waits", "the heron flies", "the heron sleeps"):
        assert kaeru(vault, "call", "note", "-a", f"initiative={WEB}", "-a", f"text={text}").code == 0
    found = kaeru(
        vault, "call", "recall", json.dumps({"initiatives": [WEB], "query": "heron", "limit": 2.0}), as_json=True
    )
    assert found.code == 0, (found.stdout, found.stderr)
    hits = valid_envelope(found, "recall", "read", "ok")["data"]["hits"]
    assert len(hits) == 2
