"""The amg round trip: export a vault, import it into a fresh vault, and compare.

The fresh vault is an embedded SQLite vault opened in process with the same factory the tests use
(for a PostgreSQL source too: the archive is the portable form). Promises checked:

- the fresh vault's own export is byte-identical to the source's;
- `read` and `trail history` of every node the archive holds, and a `search` listing everything plus
  one word search per initiative, answer the same on both vaults.
"""

from __future__ import annotations

import difflib
import json
import shutil
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kaeru.export import amg
from kaeru.export.vault_io import read_archive, write_archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import drop_vault, new_vault

Ask = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def archive_text(store: Store) -> str:
    """The amg archive of a whole vault, exactly as `archive export` writes it."""
    return "\n".join(read_archive(store).lines()) + "\n"


def touched(text: str, previous: str) -> set[str]:
    """Ids of the nodes whose records changed between two exports: new node revisions, and both
    ends of new edge revisions (a new supersedes edge changes how its target reads)."""
    old = set(previous.splitlines())
    ids: set[str] = set()
    for line in text.splitlines()[1:]:
        if line in old:
            continue
        record = json.loads(line)
        if record.get("kind") == "node":
            ids.add(record["id"])
        elif record.get("kind") == "edge":
            ids.update((record["src"], record["dst"]))
    return ids


def probes(text: str, only: set[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The reads whose answers an imported vault must reproduce, derived from the archive: searches
    over everything, and `read` + `trail history` of every node (or of the nodes in `only`)."""
    archive = amg.parse(text.splitlines())
    names = sorted(r["name"] for r in archive.initiatives)
    if not names:
        return []
    latest: dict[str, dict[str, Any]] = {}
    for record in archive.nodes:
        if record["id"] not in latest or int(record["rev_no"]) > int(latest[record["id"]]["rev_no"]):
            latest[record["id"]] = record
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"initiatives": names, "filters": {"current": "all"}, "limit": 50, "budget_chars": 64000}),
    ]
    for name in names:
        bodies = [r["body"] for r in latest.values() if name in r["initiatives"] and r["body"]]
        words = [w for body in bodies for w in body.split() if w.isalpha() and len(w) > 5]
        if words:
            calls.append(("search", {"initiatives": [name], "text": words[0], "limit": 50, "budget_chars": 64000}))
    for node_id, record in sorted(latest.items()):
        if only is not None and node_id not in only:
            continue
        initiative = record["initiatives"][0] if record["initiatives"] else names[0]
        calls.append(("read", {"initiative": initiative, "node": {"id": node_id}, "budget_chars": 64000}))
        calls.append(("trail", {"initiative": initiative, "node": {"id": node_id}, "kind": "history"}))
    return calls


def _comparable(envelope: dict[str, Any]) -> str:
    """The answer as text, without cursor tokens (sealed with the vault's own key, so they differ)."""
    continuation = envelope.get("continuation")
    if isinstance(continuation, dict):
        continuation = {**continuation, "cursor": "<cursor>"}
        if isinstance(continuation.get("next_arguments"), dict):
            continuation["next_arguments"] = {**continuation["next_arguments"], "cursor": "<cursor>"}
        envelope = {**envelope, "continuation": continuation}
    return json.dumps(envelope, sort_keys=True, indent=0)


def _diff(want: str, got: str) -> str:
    lines = difflib.unified_diff(want.splitlines(), got.splitlines(), "source", "imported", n=2, lineterm="")
    return "\n".join(list(lines)[:40])


async def check(
    label: str,
    text: str,
    ask_source: Ask,
    workdir: Path,
    previous: str | None = None,
    backend: str = "sqlite",
    ranked_apart: bool = False,
) -> None:
    """Import `text` (the source's export) into a fresh vault and compare it with the source.

    With `previous` (the export checked after the step before), only the nodes whose records changed
    since are read one by one; the searches always cover everything. The fresh vault is on `backend`;
    when that is not the source's (`ranked_apart`), word searches are compared without their ranking
    order — the backends' full-text engines score differently, and nothing promises the same order.

    Raises:
        AssertionError: naming `label` (the step after which the check ran) and the first difference.
    """
    spec = new_vault(backend, workdir / f"roundtrip-{uuid.uuid4().hex[:8]}")
    if backend == "sqlite":
        _empty_sqlite_vault(spec.vault_dir)
    fresh = open_store(spec.settings())
    try:
        write_archive(fresh, amg.parse(text.splitlines()))
        again = archive_text(fresh)
        assert again == text, f"after {label}: re-export of the imported vault differs:\n{_first_diff(text, again)}"
        registry = build_server(Service(fresh, spec.settings())).registry
        for tool, args in probes(text, None if previous is None else touched(text, previous)):
            want = await ask_source(tool, args)
            got = registry.run(tool, args)
            if ranked_apart and tool == "search" and "text" in args:
                got, want = _unranked(got), _unranked(want)
            assert _comparable(got) == _comparable(want), (
                f"after {label}: {tool} {args} answers differently on the imported vault:\n"
                f"{_diff(_comparable(want), _comparable(got))}"
            )
    finally:
        fresh.close()
        drop_vault(spec)


#: An empty SQLite vault of the current schema, made once per process by `open_store`.
_TEMPLATE: list[Path] = []


def _empty_sqlite_vault(vault_dir: Path) -> None:
    """Put a copy of a freshly made, empty SQLite vault at `vault_dir`: the same file `open_store`
    makes there (a scenario checks a round trip after each of its ~10 steps, and applying every
    migration to a new file each time was a sixth of the scenarios' run time). Its copies share
    the template's cursor secret, which no comparison reads (`_comparable` masks cursors)."""
    if not _TEMPLATE:
        template = new_vault("sqlite", Path(tempfile.mkdtemp(prefix="kaeru-roundtrip-template-")))
        open_store(template.settings()).close()
        _TEMPLATE.append(template.vault_dir)
    [template_dir] = _TEMPLATE
    assert [p.name for p in template_dir.iterdir()] == ["vault.sqlite3"], "closed cleanly: no log beside it"
    shutil.copytree(template_dir, vault_dir)


def remove_template() -> None:
    """Remove the template vault, if this process made one: at the end of the session, by
    `tests/scenarios/conftest.py` (an `atexit` hook here left it behind: pytest-xdist's workers did
    not run it, and every run of the suite added a folder to the system's temporary place)."""
    while _TEMPLATE:
        shutil.rmtree(_TEMPLATE.pop().parent, ignore_errors=True)


def _unranked(envelope: dict[str, Any]) -> dict[str, Any]:
    data = envelope.get("data") or {}
    hits = sorted(data.get("hits", []), key=lambda hit: str(hit.get("id")))
    return {**envelope, "data": {**data, "hits": hits}}


def _first_diff(a: str, b: str) -> str:
    for number, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False), start=1):
        if x != y:
            return f"line {number}:\n  source:   {x[:1500]}\n  imported: {y[:1500]}"
    return f"line counts {len(a.splitlines())} vs {len(b.splitlines())}"
