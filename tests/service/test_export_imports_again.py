"""A vault's own export imports again under the default policy (security probe, finding 5): the
write path screens at least what the import screen does, so nothing a write stored can make its
vault's backup refused. Every string field of every write tool's input schema is tried with a
secret in it; whatever the write path accepted is exported and imported into a fresh vault under
`reject` (decision 355). Both backends."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault

#: A correctly shaped fake GitHub token (rule github_pat), put after a field's value.
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
#: A secret that fits a name pattern (`^[a-z][a-z0-9_-]*$`, `^\S+$`), put in place of a value.
WHOLE = "sk-" + "q7w8e9r0t1y2u3i4o5p6"
P = "pond"

Run = Callable[[str, dict[str, Any]], dict[str, Any]]
Args = dict[str, Any]


class Made:
    """Fresh nodes for one call: each call, and each of its variants, acts on nodes of its own, so
    that what one of them did (a node forgotten, a claim decided) cannot refuse the next."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.count = itertools.count()

    def _id(self, tool: str, args: Args) -> str:
        answer = self.run(tool, {"initiative": P, **args})
        assert answer["state"] == "applied", answer
        node_id: str = answer["data"]["primary"]["id"]
        return node_id

    def name(self, stem: str) -> str:
        return f"{stem}-{next(self.count)}"

    def note(self, kind: str = "observation") -> str:
        return self._id("note", {"text": f"the heron waits {next(self.count)}", "kind": kind})

    def reference(self) -> str:
        return self._id("note", {"text": "the manual", "kind": "reference", "source": "page one"})

    def claim(self) -> str:
        return self._id("claim", {"text": f"the pump fails when cold {next(self.count)}"})

    def task(self) -> str:
        return self._id("task", {"text": f"oil the pump {next(self.count)}"})

    def flagged(self) -> str:
        node = self.note()
        flag = self.run("review", {"initiative": P, "action": "flag", "target": node, "reason": "doubtful"})
        assert flag["state"] == "applied", flag
        return node

    def path(self) -> Args:
        """`from` and `to` of a path of one edge, for a chain."""
        start, end = self.note(), self.note()
        linked = self.run("link", {"initiative": P, "from": start, "to": end, "edge_type": "causal", "weight": 0.9})
        assert linked["state"] == "applied", linked
        return {"from": start, "to": end}

    def initiative(self) -> str:
        name = self.name("side")
        assert self.run("note", {"initiative": name, "text": "a side project"})["state"] == "applied"
        return name


REMINDER = {"after": "2026-12-03", "window_days": 2}

#: One call of each write tool — several for a tool whose fields go with different actions — that
#: together carry every string field of the write tools' input schemas (checked below).
CALLS: list[tuple[str, Callable[[Made], Args]]] = [
    (
        "note",
        lambda m: {
            "text": "seen at noon",
            "name": m.name("noon"),
            "tags": ["pump"],
            "url": "https://example.org/pump",
            "link_to": m.note(),
            "edge_type": "refers_to",
            "occurred_at": "2026-01-01T00:00:00Z",
            "branch": "main",
            "reminder": REMINDER,
            "options": {"slot": "lead"},
            "request_id": m.name("r"),
        },
    ),
    ("note", lambda m: {"text": "the doc", "kind": "reference", "source": "chapter one"}),
    (
        "note",
        lambda m: {
            "text": "not on fridays",
            "kind": "rule",
            "applicability": {"task": m.task(), "through": "2026-12-01"},
        },
    ),
    (
        "claim",
        lambda m: {
            "text": "valves stick",
            "about": m.note(),
            "evidence": {"method": "looked"},
            "initial_status": "supported",
            "options": {"slot": "guess"},
        },
    ),
    ("claim", lambda m: {"text": "valves leak", "evidence": {"node": m.note()}}),
    (
        "revise",
        lambda m: {
            "node": m.note("rule"),
            "patch": {
                "body": "a new body",
                "description": "one line",
                "name": m.name("renamed"),
                "reminder": REMINDER,
                "applicability": {"task": m.task(), "through": "2026-12-01"},
            },
        },
    ),
    ("replace", lambda m: {"node": m.reference(), "source": "page two"}),
    ("link", lambda m: {"from": m.note(), "to": m.note(), "edge_type": "refers_to", "weight": 0.5}),
    ("link", lambda m: {"action": "chain", **m.path(), "name": m.name("path"), "summary": "why"}),
    ("verdict", lambda m: {"hypothesis": m.claim(), "status": "supported", "evidence": {"method": "tested"}}),
    ("verdict", lambda m: {"hypothesis": m.claim(), "status": "refuted", "evidence": {"node": m.note()}}),
    ("review", lambda m: {"action": "flag", "target": m.note(), "reason": "doubtful"}),
    ("review", lambda m: {"action": "close", "target": m.flagged(), "resolution": "fine after all"}),
    ("slot", lambda m: {"slot": "owner", "node": m.note()}),
    ("layer", lambda m: {"nodes": [m.note()], "layer": "hot"}),
    ("forget", lambda m: {"node": m.note(), "reason": "obsolete"}),
    ("evolve", lambda m: {"mode": "supersede", "source": m.note(), "new_body": "the fix", "new_name": m.name("fix")}),
    ("evolve", lambda m: {"mode": "synthesise", "sources": [m.note(), m.note()], "new_body": "both"}),
    (
        "task",
        lambda m: {
            "text": "oil it",
            "name": m.name("oil"),
            "tags": ["x"],
            "due": "3d",
            "status": "open",
            "link_to": m.note(),
            "branch": "main",
            "reminder": REMINDER,
            "options": {"slot": "next"},
        },
    ),
    ("task_update", lambda m: {"task": m.task(), "status": "done", "due": "2026-12-01"}),
    ("initiative", lambda m: {"action": "set_board", "columns": [{"key": "todo", "label": "To do"}, {"key": "done"}]}),
    ("initiative", lambda m: {"initiative": m.name("shelf"), "action": "attach", "node": m.note()}),
    ("initiative", lambda m: {"initiative": m.initiative(), "action": "rename", "to": m.name("moved")}),
    ("initiative", lambda m: {"initiative": m.initiative(), "action": "merge", "to": P}),
]

#: Compared with what is stored, never stored: a secret there is a conflict.
COMPARED = {"expected_revision", "expected_slot_revision", "options.expected_slot_revision"}
#: Tools that write but store none of their arguments: `archive` reads or writes a file, `context`
#: stamps what it showed.
NOT_MEMORY = {"archive", "context"}


def schema_fields(schema: dict[str, Any]) -> set[str]:
    """Every path (`a.b`, `a[]`) at which `schema` takes a free string (enums left out: a fixed word
    holds no secret); a node reference (id, name, or an object of them) is one field."""
    defs = schema.get("$defs", {})
    found: set[str] = set()

    def walk(node: dict[str, Any], path: str) -> None:
        if "$ref" in node:
            node = {**defs[node["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
        alternatives = node.get("oneOf") or node.get("anyOf") or []
        types = node.get("type")
        free = (types == "string" or (isinstance(types, list) and "string" in types)) and "enum" not in node
        if free or any(alt.get("type") == "string" for alt in alternatives):
            found.add(path)
        else:
            for alt in alternatives:
                walk(alt, path)
        for key, sub in (node.get("properties") or {}).items():
            walk(sub, f"{path}.{key}" if path else key)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]")

    walk(schema, "")
    return found


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Where `value` holds a string, as key/index paths."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, sub in value.items():
            yield from leaves(sub, (*path, key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from leaves(sub, (*path, i))


def field_of(path: tuple[Any, ...]) -> str:
    return "".join("[]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path))


def with_secret(args: Args, path: tuple[Any, ...], whole: bool) -> Args:
    out = copy.deepcopy(args)
    at: Any = out
    for step in path[:-1]:
        at = at[step]
    at[path[-1]] = WHOLE if whole else f"{at[path[-1]]} {SECRET}"
    return out


def test_the_calls_carry_every_string_field_of_every_write_tool(service: Service) -> None:
    """A field added to a write tool must be added to `CALLS`, and so tried with a secret."""
    specs = build_server(service).registry.specs
    carried: dict[str, set[str]] = {}
    made = Made(build_server(service).registry.run)
    for tool, build in CALLS:
        carried.setdefault(tool, set()).update(field_of(p) for p in leaves({"initiative": P, **build(made)}))
    for name, spec in specs.items():
        if spec.read_only or name in NOT_MEMORY:
            continue
        # `request_id` is one field, stored alike by every tool: `note` tries it.
        missing = schema_fields(spec.input_schema) - carried.get(name, set()) - COMPARED - {"request_id"}
        assert not missing, f"{name}: no call in CALLS carries {sorted(missing)}"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "exports"
    path.mkdir()
    return path


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_what_a_vault_accepted_imports_again_under_reject(
    backend: str, tmp_path: Path, root: Path, policy: str
) -> None:
    """Each string field of each call is tried with a secret after its value and with one in its
    place; then the vault is exported and its archive imported into a fresh vault under `reject`."""
    written = new_vault(backend, tmp_path)
    settings = written.settings(secret_policy=policy, export_root=root)
    store = open_store(settings)
    accepted: set[str] = set()
    try:
        run = build_server(Service(store, settings)).registry.run
        made = Made(run)
        for tool, build in CALLS:
            base = {"initiative": P, **build(made)}
            for path, whole in itertools.product(leaves(base), (False, True)):
                answer = run(tool, with_secret({"initiative": P, **build(made)}, path, whole))
                if answer["state"] != "rejected":
                    accepted.add(f"{tool}.{field_of(path)}")
            assert run(tool, base)["state"] in ("applied", "unchanged"), (tool, base)
        exported = run("archive", {"action": "export", "path": "own.amg"})
        assert exported["state"] == "applied", exported["issues"]
    finally:
        store.close()
        drop_vault(written)
    imported = import_into_fresh(backend, tmp_path, root, "own.amg")
    assert imported["state"] == "applied", imported["issues"]
    if policy == "reject":
        assert not accepted, sorted(accepted)  # request ids and slot names too (decision 362)


def import_into_fresh(backend: str, tmp_path: Path, root: Path, name: str) -> dict[str, Any]:
    """The answer of `archive import` of `name` into a fresh vault of `backend` under `reject`."""
    spec: VaultSpec = new_vault(backend, tmp_path)
    settings = spec.settings(secret_policy="reject", export_root=root)
    store = open_store(settings)
    try:
        answer: dict[str, Any] = build_server(Service(store, settings)).registry.run(
            "archive", {"action": "import", "path": name}
        )
        return answer
    finally:
        store.close()
        drop_vault(spec)
