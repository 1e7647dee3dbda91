"""The markdown export: an Obsidian-friendly folder rendered from a vault's amg records (deterministic).

Each live node is one page `<tier>/<type>/<slug>.md` with YAML front matter (with the properties
that say which rules apply and what a node is: `CARRIED_PROPERTIES`) and `## Outgoing` /
`## Incoming` wikilinks that keep edge types and weights; README.md, INDEX.md (by tier and type,
provenance trees, open questions) and LOG.md (the audit trail) sit at the top.

Written as the records stream by, never holding the vault whole (decision 127): a node's records go
to a spool file and only what orders, names and links the pages is kept per live node — the rest of
a page is read back from the spool when it is written; the audit trail is written to LOG.md as it
comes. (Rendered from the archive held whole, 100,000 nodes took 546 MB of memory.)

Exported again into the same folder, the pages an earlier export wrote of nodes this one does not
write there are removed (`stale_pages`); every other file is left alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple

from kaeru.domain.currentness import decide
from kaeru.domain.model import Currentness, EdgeType, NodeType
from kaeru.export.page_names import FRAME_NAMES, same, slug, slug_base, tails
from kaeru.export.staged import PRIVATE_FOLDER, private_file


def _yaml(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class _Node(NamedTuple):
    """What a page needs known before any page is written: its order, its name, whether it is
    live, and where its latest record sits in the spool."""

    tier: str
    node_type: str
    created_at: str
    #: `_slug_base` of its name (a page's name is kept only in the spool).
    slug_base: str
    open_question: bool
    retracted: bool
    offset: int
    #: Its status (a refuted hypothesis is not current: `_currentness`).
    status: str | None


class _Edge(NamedTuple):
    src: str
    dst: str
    edge_type: str
    weight: float


@dataclass
class Written:
    """The files written (relative path, sha256, bytes) and what the pages hold."""

    files: list[tuple[str, str, int]] = field(default_factory=list)
    #: The path of each page written, by its node's id (`stale_pages` keeps a person's copy of one).
    ids: dict[str, str] = field(default_factory=dict)
    live_nodes: int = 0
    live_edges: int = 0


def write_folder(
    records: Iterable[tuple[str, dict[str, Any]]], header: Callable[[], dict[str, Any]], target: Path
) -> Written:
    """Write the export of `records` (an amg walk: `(kind, record)`, nodes, edges and audit in the
    archive's order) into `target`; `header` gives the archive's header once the walk is over."""
    target.mkdir(parents=True, exist_ok=True)
    out = Written()
    latest: dict[str, _Node] = {}
    edges: dict[tuple[str, str, str], tuple[bool, float]] = {}
    with tempfile.TemporaryFile() as spool, _File(target, "LOG.md", out) as log:
        log.write("# Log\n\n")
        for kind, record in records:
            if kind == "node":
                offset = spool.tell()
                spool.write(json.dumps(record, ensure_ascii=False).encode() + b"\n")
                open_question = record["node_type"] == "hypothesis" and record["status"] == "open"
                latest[record["id"]] = _Node(
                    sys.intern(record["tier"]),
                    sys.intern(record["node_type"]),
                    record["created_at"],
                    slug_base(record["name"]),
                    open_question,
                    record["retracted"],
                    offset,
                    sys.intern(record["status"]) if isinstance(record["status"], str) else None,
                )
            elif kind == "edge":
                edges[(record["src"], record["dst"], record["edge_type"])] = (record["retracted"], record["weight"])
            elif kind == "audit":
                who = f"{record['actor']}" + (f" ({record['request_id']})" if record["request_id"] else "")
                log.write(f"- {record['at']} {record['operation']} by {who}: {len(record['affected'])} node(s)\n")
        _pages(spool, latest, edges, header(), target, out)
    out.files.sort()
    return out


def _pages(
    spool: IO[bytes],
    latest: dict[str, _Node],
    edges: dict[tuple[str, str, str], tuple[bool, float]],
    header: dict[str, Any],
    target: Path,
    out: Written,
) -> None:
    """Every live node's page, then README.md and INDEX.md."""
    live = {i: n for i, n in latest.items() if not n.retracted}
    latest.clear()
    live_edges = [
        _Edge(src, dst, kind, weight)
        for (src, dst, kind), (retracted, weight) in edges.items()
        if not retracted and src in live and dst in live
    ]
    edges.clear()
    ordered = sorted(live, key=lambda i: (live[i].tier, live[i].node_type, live[i].created_at, i))
    taken = {same(name) for name in FRAME_NAMES}
    slugs = {i: slug(live[i].slug_base, i, taken) for i in ordered}
    outgoing: dict[str, list[_Edge]] = defaultdict(list)
    incoming: dict[str, list[_Edge]] = defaultdict(list)
    for edge in sorted(live_edges, key=lambda e: (e.src, e.dst, e.edge_type)):
        outgoing[edge.src].append(edge)
        incoming[edge.dst].append(edge)
    stale = _currentness(live, incoming, slugs)
    for node_id in ordered:
        node = live[node_id]
        spool.seek(node.offset)
        record = json.loads(spool.readline())
        rel = f"{node.tier}/{node.node_type}/{slugs[node_id]}.md"
        with _File(target, rel, out) as page:
            page.write(_page(record, slugs, outgoing[node_id], incoming[node_id], stale.get(node_id)))
    out.live_nodes, out.live_edges = len(live), len(live_edges)
    out.ids = {i: f"{n.tier}/{n.node_type}/{slugs[i]}.md" for i, n in live.items()}
    with _File(target, "README.md", out) as readme:
        readme.write(
            "\n".join(
                [
                    "# kaeru memory export",
                    "",
                    f"Initiatives: {', '.join(header['initiatives']) or '(none)'}. Exported as of {header['exported_at']}.",
                    f"{len(live)} live nodes, {len(live_edges)} live edges. One page per node under `<tier>/<type>/`;",
                    "links keep their edge type and weight. INDEX.md lists everything; LOG.md is the audit trail.",
                    "The lossless form of this vault is the `amg` archive (docs/amg.md).",
                    "",
                ]
            )
        )
    with _File(target, "INDEX.md", out) as index:
        _index(index, ordered, live, slugs, outgoing, stale)


#: The keys a page's front matter opens with, in this order (`_page`): part of how a page an earlier
#: export wrote is told from a note of the person's (`stale_pages`).
_PAGE_KEYS = ("id", "type", "tier", "layer")
#: How much of a file is read to tell whether it is a page of ours: its front matter and `# name`,
#: besides its `properties:` line, passed over whatever its length (`_head`).
_PAGE_HEAD = 64 * 1024


#: The node properties a page carries (`properties:`, one line of JSON after the other keys): what
#: says which rules apply and what a node is — a rule's `applicability` (the day it ends, the task it
#: is scoped to) and `constraint_state`, a task's `due`, a saved chain's steps, a `reminder`, `url`,
#: `branch` and `occurred_at`. Without them `kaeru import-from kaeru-md` of an export brought an
#: expired rule back in force, a task's rule as every task's and a chain as a node naming no steps.
#: Left out: what kaeru keeps of its own work (an import's mark, hygiene's, a task's `done_at`, which
#: its column gives), and a reference's `source` digest, which the page's text no longer matches.
CARRIED_PROPERTIES = ("applicability", "branch", "chain", "constraint_state", "due", "occurred_at", "reminder", "url")


def carried_properties(properties: dict[str, Any]) -> dict[str, Any]:
    """What a page says of `properties`: the carried ones, not at the value they have when none is
    said (a rule in force is `constraint_state: active`), and a reminder without the day it was first
    shown (the vault's record of a sight, not what it reminds of)."""
    out = {k: properties[k] for k in CARRIED_PROPERTIES if k in properties}
    if out.get("constraint_state") == "active":
        del out["constraint_state"]
    if isinstance(reminder := out.get("reminder"), dict) and "seen" in reminder:
        out["reminder"] = {k: v for k, v in reminder.items() if k != "seen"}
    return out


class _NotCurrent(NamedTuple):
    """A page's node that is no longer current, and the pages of what superseded it."""

    currentness: str
    superseded_by: list[str]

    def said(self) -> str:
        """How INDEX.md marks its line."""
        if self.superseded_by:
            return f" ({self.currentness} by {', '.join(f'[[{s}]]' for s in self.superseded_by)})"
        return f" ({self.currentness})"


def _currentness(
    live: dict[str, _Node], incoming: dict[str, list[_Edge]], slugs: dict[str, str]
) -> dict[str, _NotCurrent]:
    """The live nodes that are not current, by the rule a read applies (`domain.currentness`) to
    the verdict edges the export holds: a person reading the folder saw a superseded decision as
    any other, with `status: null` and nothing else to tell it."""
    verdict_types = (EdgeType.SUPERSEDES, EdgeType.FALSIFIES)
    found: dict[str, _NotCurrent] = {}
    for node_id, node in live.items():
        verdicts = [(e.src, EdgeType(e.edge_type)) for e in incoming.get(node_id, ()) if e.edge_type in verdict_types]
        if not verdicts and node.status is None:
            continue
        state, successors = decide(NodeType(node.node_type), node.status, False, verdicts)
        if state != Currentness.CURRENT:
            found[node_id] = _NotCurrent(state.value, [slugs[s] for s in successors])
    return found


def _page(
    record: dict[str, Any],
    slugs: dict[str, str],
    outgoing: list[_Edge],
    incoming: list[_Edge],
    not_current: _NotCurrent | None = None,
) -> str:
    front = {
        "id": record["id"],
        "type": record["node_type"],
        "tier": record["tier"],
        "layer": record["layer"],
        "status": record["status"],
        "initiatives": record["initiatives"],
        "tags": record["tags"],
        "created_at": record["created_at"],
        "recorded_at": record["recorded_at"],
        "revision": record["revision"],
    }
    if not_current is not None:  # only then: the pages of current nodes read as before
        front["currentness"] = not_current.currentness
        if not_current.superseded_by:
            front["superseded_by"] = [f"[[{s}]]" for s in not_current.superseded_by]
    lines = ["---", *[f"{k}: {_yaml(v)}" for k, v in front.items()]]
    if carried := carried_properties(record["properties"]):
        lines.append(f"properties: {json.dumps(carried, ensure_ascii=False, sort_keys=True)}")
    lines += ["---", "", f"# {record['name']}", ""]
    if record["description"]:
        lines += [f"> {record['description']}", ""]
    if record["body"]:
        lines += [record["body"], ""]
    if outgoing:
        lines += ["## Outgoing", ""]
        lines += [f"- {e.edge_type} ({e.weight:g}) → [[{slugs[e.dst]}]]" for e in outgoing]
        lines.append("")
    if incoming:
        lines += ["## Incoming", ""]
        lines += [f"- [[{slugs[e.src]}]] → {e.edge_type} ({e.weight:g})" for e in incoming]
        lines.append("")
    return "\n".join(lines)


def _index(
    index: _File,
    ordered: list[str],
    live: dict[str, _Node],
    slugs: dict[str, str],
    outgoing: dict[str, list[_Edge]],
    stale: dict[str, _NotCurrent],
) -> None:
    """INDEX.md: the pages by tier and type (a page no longer current marked so), the provenance
    trees, the open questions (lines joined by newlines as they are written)."""
    lines = _Joined(index)
    lines.add("# Index", "")
    group: tuple[str, str] | None = None
    for node_id in ordered:  # sorted by tier and type first: each group's pages come together
        node = live[node_id]
        if (node.tier, node.node_type) != group:
            if group is not None:
                lines.add("")
            lines.add(f"## {node.tier} / {node.node_type}", "")
            group = (node.tier, node.node_type)
        lines.add(f"- [[{slugs[node_id]}]]" + (stale[node_id].said() if node_id in stale else ""))
    if group is not None:
        lines.add("")
    roots = [i for i in ordered if any(e.edge_type == "derived_from" for e in outgoing.get(i, ()))]
    if roots:
        lines.add("## Provenance", "")
        for root in roots:
            lines.add(f"- [[{slugs[root]}]]")
            lines.add(
                *(f"  - derived from [[{slugs[e.dst]}]]" for e in outgoing[root] if e.edge_type == "derived_from")
            )
        lines.add("")
    questions = [i for i in ordered if live[i].open_question]
    if questions:
        lines.add("## Open questions", "", *(f"- [[{slugs[i]}]]" for i in questions), "")


class _Joined:
    """Lines written as joining them with newlines would give them: a newline before every line
    but the first."""

    def __init__(self, file: _File) -> None:
        self._file, self._first = file, True

    def add(self, *lines: str) -> None:
        for line in lines:
            self._file.write(line if self._first else "\n" + line)
            self._first = False


class _File:
    """One file of the export, written as UTF-8 and hashed as it goes; recorded in `out` when closed."""

    def __init__(self, target: Path, rel: str, out: Written) -> None:
        self.rel, self.out = rel, out
        path = target / rel
        path.parent.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
        self._raw = private_file(path)
        self._hash = hashlib.sha256()
        self._size = 0

    def write(self, text: str) -> None:
        data = text.encode()
        self._raw.write(data)
        self._hash.update(data)
        self._size += len(data)

    def __enter__(self) -> _File:
        return self

    def __exit__(self, *exc: object) -> None:
        self._raw.close()
        self.out.files.append((self.rel, self._hash.hexdigest(), self._size))


def stale_pages(target: Path, written: Iterable[str], ids: Mapping[str, str] | None = None) -> list[str]:
    """The pages in the export folder `target` that an earlier export wrote and this one (`written`:
    the relative paths it wrote) did not: a node forgotten since or outside the initiatives exported
    now, or whose name no longer meets another's (its page lost the id's tail). Left there, a
    forgotten secret or a wrong fact lived on in the person's copy (decision 166 keeps every other
    file). A page is ours only if it sits at `<tier>/<type>/<name>.md`, its front matter opens with
    this export's keys naming that tier and type and a node id, and its name is the slug of its
    `# name` line (with the id's tail where two names met): a note of the person's, or a page they
    renamed, moved or retitled, is kept. A page of a node this export still writes (`ids`: its
    page's path by node id) is removed under the name with the id's tail, which only kaeru gives, or
    under its title's name when this export names its page after that same title (with the id's
    tail: the name became reserved, or meets another's as names are now compared) — left, two pages
    of one id stayed after an upgrade and `import-from kaeru-md` refused the folder. A person's copy
    of a page, retitled and named after its new title, looked like an earlier export's page of a
    renamed node, and was removed (review of decision 477) — a renamed node's old page is kept.
    Symbolic links are not followed. A name that meets a page written, composed and case-folded, is
    that page on a file system that stores names decomposed (HFS+) or matches them whatever their
    case, and kept; elsewhere it is another file, and looked at as any other."""
    ids = ids or {}
    keep = {same(rel): rel for rel in written}
    found: list[str] = []
    for tier in _folders(target):
        for kind in _folders(Path(tier.path)):
            for entry in _entries(Path(kind.path)):
                rel = f"{tier.name}/{kind.name}/{entry.name}"
                if not entry.name.endswith(".md") or _written(target, keep.get(same(rel)), Path(entry.path)):
                    continue
                if entry.is_file(follow_symlinks=False) and _ours(Path(entry.path), tier.name, kind.name, ids):
                    found.append(rel)
    return sorted(found)


def _written(target: Path, wrote: str | None, path: Path) -> bool:
    """Whether `path` is the file the page `wrote` (a name alike composed and case-folded) goes to."""
    try:
        return wrote is not None and (target / wrote).samefile(path)
    except OSError:  # no file of that name: `path` is another
        return False


def remove_empty_folders(target: Path, removed: list[str]) -> None:
    """The type and tier folders under `target` that removing the pages `removed` (from
    `stale_pages`, moved away by `staged.staged_folder`) left empty."""
    for folder in sorted({str(Path(rel).parent) for rel in removed}, reverse=True):
        for empty in (target / folder, (target / folder).parent):
            try:
                empty.rmdir()
            except OSError:  # not empty: other pages, or the person's own files
                break


def removed_said(removed: list[str], left: list[str], shown: int = 20) -> str:
    """The issue's message for the pages removed and left: every page named up to `shown` of each."""

    def listed(rels: list[str]) -> str:
        more = f" and {len(rels) - shown} more" if len(rels) > shown else ""
        return ", ".join(rels[:shown]) + more

    said = []
    if removed:
        said.append(
            f"removed {len(removed)} page(s) an earlier export wrote here of nodes this one no longer writes "
            f"there (forgotten, outside the exported initiatives, or now under a name without the id's tail): {listed(removed)}"
        )
    if left:
        said.append(f"could not remove {len(left)} such page(s): {listed(left)}")
    return "; ".join(said)


def _entries(path: Path) -> list[os.DirEntry[str]]:
    """What the folder `path` holds; nothing where it cannot be read (gone, not a folder, not ours
    to read): the export is written, and what cannot be looked at is left as it is."""
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except OSError:
        return []


def _folders(path: Path) -> list[os.DirEntry[str]]:
    """The folders in `path` that a page's tier or type could be: not hidden, not a link."""
    return [e for e in _entries(path) if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)]


def _ours(path: Path, tier: str, node_type: str, ids: Mapping[str, str]) -> bool:
    """Whether the file at `path` (in `<tier>/<type>/`) is a page this export writes (`stale_pages`)."""
    try:
        with path.open("rb") as raw:
            lines = _head(raw)
    except OSError:
        return False
    if len(lines) < len(_PAGE_KEYS) + 3 or lines[0] != "---":
        return False
    front: dict[str, Any] = {}
    for line, key in zip(lines[1 : len(_PAGE_KEYS) + 1], _PAGE_KEYS, strict=True):
        name, sep, value = line.partition(": ")
        try:
            front[key] = json.loads(value) if name == key and sep else None
        except ValueError:
            return False
    node_id = front["id"]
    if not isinstance(node_id, str) or not node_id or (front["tier"], front["type"]) != (tier, node_type):
        return False
    try:
        end = lines.index("---", 1)
    except ValueError:
        return False
    title = next((line for line in lines[end + 1 :] if line.strip()), "")
    if not title.startswith("# "):
        return False
    base = slug_base(title[2:])
    stem = unicodedata.normalize("NFC", path.name[: -len(".md")])
    short, whole = tails(base, node_id)
    numbered = stem.startswith(f"{whole}-") and stem[len(whole) + 1 :].isdigit()
    if stem in (short, whole) or numbered:
        return True
    now = ids.get(node_id)  # where this export writes the node's page: after the same title, it moved
    return stem == base and (now is None or same(Path(now).stem) in {same(n) for n in (base, short, whole)})


def _head(raw: IO[bytes]) -> list[str]:
    """The lines of a page up to the first with text after its front matter, at most `_PAGE_HEAD`
    bytes of them: what `_ours` reads. One `properties:` line in the front matter is passed over
    whatever its length, not kept: a `url` may be megabytes (a `data:` URL), and a page whose line
    pushed its `# name` out of reach was not told as ours, so it stayed after its node was forgotten."""
    lines: list[str] = []
    budget, closed, passed = _PAGE_HEAD, False, False
    while budget > 0 and (line := raw.readline(budget)):
        if lines and not closed and not passed and line.startswith(b"properties: "):
            passed = True
            while line and not line.endswith(b"\n"):
                line = raw.readline(_PAGE_HEAD)
            lines.append("properties:")
            continue
        budget -= len(line)
        text = line.decode("utf-8", errors="replace").removesuffix("\n")
        lines.append(text)
        if (len(lines) == 1 and text != "---") or (closed and text.strip()):
            break  # no front matter (not a page of ours), or the first line after it
        closed = closed or (len(lines) > 1 and text == "---")
    return lines
