"""Folders of Markdown notes: any notes with front matter and `[[wikilinks]]` (Obsidian,
basic-memory), and the original kaeru's Markdown export (`<tier>/<type>/<slug>.md` pages).

A note becomes a node keyed by its path (a kaeru page by its `id`); its `[[links]]` become edges.
A link in a list item written `- <relation> [[Target]]` (basic-memory's relations) is typed by
`relations.relation_edge` (an inverse name such as `blocked_by` turns the edge round); any other
link is `refers_to` (which note a link names: `markdown_links`). A link naming no note in the
folder is left out and counted. A folder with no note, or a kaeru export read as `markdown`, is
refused: either would import nothing the user meant. A `.md` path that is no readable file (a broken
symbolic link, a folder so named) is left out and said, and so are bytes that are not UTF-8: an
import went down with a traceback at the first such file, or changed the bytes without a word.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaeru.domain.model import (
    NOTE_KIND_TYPES,
    EdgeType,
    HypothesisStatus,
    Layer,
    NodeType,
    NoteKind,
    Tier,
    default_tier,
)
from kaeru.errors import InvalidArgument
from kaeru.export.importers import page_properties
from kaeru.export.importers.core import Batch, Item, Link
from kaeru.export.importers.markdown_links import LinkIndex, code_free, is_attachment
from kaeru.export.importers.relations import edge_type_of, normal, relation_edge
from kaeru.service.outcomes import Issue

MARKDOWN = "markdown"
KAERU_MD = "kaeru-md"
#: The kaeru export's files that are not pages.
KAERU_FRAME = {"README.md", "INDEX.md", "LOG.md"}
#: The first line of a kaeru export's README.md: this server's, and the original kaeru's.
KAERU_README = ("# kaeru memory export", "# kaeru vault")
#: Tags the server derives again from the text: not carried over.
DERIVED = ("topic:", "lang:")

#: A `[[target#anchor|label]]` link; `wikilinks` finds them.
WIKILINK = re.compile(r"!?\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]")
#: Where every link begun before it ends, or none does: no part of a link holds `]` or a new line.
_LINK_STOP = re.compile(r"[\]\n]")
RELATION_ITEM = re.compile(r"^\s*[-*+]\s+([A-Za-z][\w -]{0,60}?)\s+\[\[")
KAERU_EDGE_ITEM = re.compile(r"^\s*-\s+([a-z_]+)\s+\([0-9.]+\)\s+→\s+\[\[")
#: A board column's key (`tasks._KEY`): what a task's `status:` tag may name.
COLUMN_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
#: The status a task (the default board's first column) and a claim have when none is given.
OPEN = HypothesisStatus.OPEN.value


@dataclass
class Page:
    path: str
    front: dict[str, Any]
    text: str


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML front matter's simple keys (scalars, `[a, b]` and `- a` lists) and the rest."""
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        return {}, text
    front: dict[str, Any] = {}
    current: str | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        stripped = line.strip()
        if stripped.startswith("- ") and current is not None and line[:1] in (" ", "-"):
            if not isinstance(front.get(current), list):
                front[current] = []
            front[current].append(_scalar(stripped[2:]))
            continue
        if ":" not in line or line[:1].isspace():
            continue
        key, _, value = line.partition(":")
        current = key.strip()
        front[current] = _value(value.strip())
    return front, "\n".join(lines[end + 1 :])


def _value(raw: str) -> Any:
    if raw == "":
        return None
    if raw.startswith("[") and raw.endswith("]"):
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, RecursionError):  # RecursionError: nested past the parser's depth
            return flow_list(raw[1:-1])
    return _scalar(raw)


def flow_list(inner: str) -> list[Any]:
    """The items of a YAML flow list `[my tag, "C++", 'a,b']` (between its brackets): a comma inside
    quotes, or inside a nested `[…]`/`{…}`, is part of its item. Split at every comma, `"a,b"` gave
    the tags `"a` and `b"`, quotes and all."""
    items: list[str] = []
    start, depth, quote, i = 0, 0, "", 0
    while i < len(inner):
        ch = inner[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1  # an escaped character, a quote among them
            elif ch == quote:
                quote = ""
        elif ch in "\"'" and not inner[start:i].strip():
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
        i += 1
    items.append(inner[start:])
    return [_scalar(item) for item in items if item.strip()]


def _scalar(raw: str) -> Any:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        if raw[0] == '"':
            try:
                return json.loads(raw)
            except json.JSONDecodeError:
                pass
        return raw[1:-1]
    return raw


def _tags(raw: Any) -> list[str]:
    if raw is None:
        return []
    values = raw if isinstance(raw, list) else re.split(r"[,\s]+", str(raw))
    out = [str(v).strip().lstrip("#") for v in values]
    return [t for t in dict.fromkeys(out) if t and not t.startswith(DERIVED)]


def pages(folder: Path, skipped: list[Issue], skip: set[str] | None = None) -> list[Page]:
    """Every `.md` file under `folder` (hidden folders such as `.obsidian` left out), by path. A path
    that is not a file one can read is left out, and one with bytes that are not UTF-8 read with
    U+FFFD in their place; each is said in `skipped`, naming the file."""
    found: list[Page] = []
    for path in sorted(folder.rglob("*.md")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or (skip and rel.as_posix() in skip):
            continue
        if not path.is_file():
            what = "a folder" if path.is_dir() else "a symbolic link to nothing" if path.is_symlink() else "no file"
            skipped.append(Issue("file_skipped", f"{rel.as_posix()}: left out, it is {what}, not a note", "path"))
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            skipped.append(
                Issue("file_skipped", f"{rel.as_posix()}: left out, it cannot be read ({exc.strerror})", "path")
            )
            continue
        # utf-8-sig: a byte-order mark (Windows editors) would hide the front matter's opening `---`.
        try:
            raw = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raw = data.decode("utf-8-sig", errors="replace")
            first = exc.start + (len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0)
            skipped.append(
                Issue(
                    "not_utf8",
                    f"{rel.as_posix()}: bytes that are not UTF-8 (the first at byte {first}) were "
                    "imported as U+FFFD; save the file as UTF-8 and import again",
                    "path",
                )
            )
        front, text = front_matter(raw.replace("\r\n", "\n"))
        found.append(Page(rel.as_posix(), front, text))
    return found


def wikilinks(line: str) -> Iterator[re.Match[str]]:
    """`WIKILINK.finditer(line)`, in time linear in the line. `finditer` tries the pattern at every
    `[[`, and an unclosed one reads on to the line's end (a target may hold `[`): `[[a[[a[[a…` took
    time quadratic in its length (decision 414). A link whose target is not empty fails only at the
    first `]` or new line after its `[[`, not followed by `]`; every `[[` before that point fails
    there too, so the next one worth trying comes after it."""
    pos = 0
    while (start := line.find("[[", pos)) >= 0:
        begin = start - 1 if start > pos and line[start - 1] == "!" else start
        if (match := WIKILINK.match(line, begin)) is not None:
            yield match
            pos = match.end()
            continue
        stop = _LINK_STOP.search(line, start + 2)
        if stop is None:  # no `]]` after this point: no link either
            return
        # An empty target (`[[#…`, `[[|…`) fails at once: a link may begin just after it.
        pos = start + 2 if line[start + 2] in "]|#\n" else stop.start()


def heading(line: str) -> str | None:
    r"""The title of a `# heading` line (no new line in it), without the closing `#`s and the spaces
    around them; None for any other line. What `^#\s+(.+?)\s*#*\s*$` matches, without its time:
    the lazy title tried the closing pattern after each of its characters, and that pattern
    backtracked over every run of spaces, so a heading with a long run of them took time cubic in
    its length (decision 414)."""
    title = line[1:].lstrip()
    if not line.startswith("#") or len(title) == len(line) - 1:
        return None
    if not title:  # `#` and spaces only: the title is the last space, if one is left for `\s+`
        return line[-1] if len(line) > 2 else None
    # The closing part is spaces, `#`s, spaces, at the end: the title is the rest, one character at least.
    return title[: max(1, len(title.rstrip().rstrip("#").rstrip()))]


def _split_title(text: str) -> tuple[str | None, str]:
    """The first `# heading` (if it comes before any other text) and the text without it."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        title = heading(line)
        if title is not None:
            return title, "\n".join(lines[i + 1 :])
        break
    return None, text


def read_markdown(folder: Path) -> Batch:
    """A folder of notes (Obsidian, basic-memory, any Markdown with front matter and wikilinks)."""
    batch = Batch(MARKDOWN)
    if _kaeru_export(folder):
        raise InvalidArgument(
            f"{folder} is a kaeru Markdown export (its README.md, INDEX.md and LOG.md say so): import it with "
            "`kaeru import-from kaeru-md`, which keeps its types, layers and typed links; read as `markdown`, "
            "README/INDEX/LOG would become notes and every link would be doubled by the pages' Incoming lists",
            field="path",
        )
    found = pages(folder, batch.skipped)
    if not found:
        raise InvalidArgument(f"no .md file under {folder}: is this the right folder?", field="path")
    index = LinkIndex()
    for page in found:
        index.add(page.path[:-3], page.front)
    unresolved: list[str] = []
    ambiguous: dict[str, str] = {}
    for page in found:
        key = page.path[:-3]
        heading, body = _split_title(page.text)
        title = page.front.get("title")
        name = str(title).strip() if isinstance(title, str | int | float) and str(title).strip() else None
        name = name or heading or Path(key).name
        if heading and heading != name:
            body = page.text
        raw_kind = str(page.front.get("kind") or page.front.get("type") or "").strip().lower()
        kind = NoteKind(raw_kind) if raw_kind in {k.value for k in NoteKind} else NoteKind.CONCEPT
        tags = [*(["kind:rule"] if kind == NoteKind.RULE else [f"kind:{kind.value}"]), *_tags(page.front.get("tags"))]
        extra: dict[str, Any] = {"path": page.path}
        if raw_kind and raw_kind != kind.value:
            extra["note_type"] = raw_kind
        batch.items.append(
            Item(
                key=key,
                name=name,
                body=body.strip() or name,
                node_type=NOTE_KIND_TYPES[kind],
                tags=tags,
                origin=page.path,
                extra=extra,
            )
        )
        for line in code_free(page.text.split("\n")):
            if "[[" not in line:
                continue
            relation = RELATION_ITEM.match(line)
            for n, match in enumerate(wikilinks(line)):
                named = match.group(1).strip()
                target, also = index.resolve(named)
                if target is None:
                    if not (match.group(0).startswith("!") and is_attachment(named)):
                        unresolved.append(f"{page.path} → {named}")
                    continue
                if also:
                    ambiguous.setdefault(named.lower(), f"[[{named}]] → {target}.md, not {', '.join(also)}")
                edge_type, label, backwards = EdgeType.REFERS_TO, None, False
                if n == 0 and relation is not None and normal(relation.group(1)):
                    edge_type, label, backwards = relation_edge(relation.group(1))
                src, dst = (target, key) if backwards else (key, target)
                batch.links.append(Link(src, dst, edge_type, label, page.path))
    _unresolved(batch, unresolved)
    if ambiguous:
        shown = "; ".join(list(ambiguous.values())[:10]) + ("; …" if len(ambiguous) > 10 else "")
        batch.skipped.append(
            Issue(
                "links_ambiguous",
                f"{len(ambiguous)} link name(s) name several notes as near the folder's root; each was linked "
                f"to the first by path (write the note's path in the link to choose): {shown}",
                "path",
            )
        )
    return batch


def read_kaeru(folder: Path) -> Batch:
    """The original kaeru's Markdown export (front matter `id`, `type`, `layer`, `tags`; `# name`;
    `## Outgoing` with `### <edge_type>` subsections of `[[slug]]` links). This server's own Markdown
    export (`- <edge_type> (<weight>) → [[slug]]` lines, and `properties:`: `page_properties`) reads too."""
    batch = Batch(KAERU_MD)
    found = [p for p in pages(folder, batch.skipped, KAERU_FRAME) if p.front.get("id")]
    if not found:
        raise InvalidArgument(
            f"no page under {folder} has an `id` in its front matter: is this a kaeru Markdown export? "
            "(a folder of other notes imports with `markdown`)",
            field="path",
        )
    slugs: dict[str, str] = {}
    for page in found:
        slugs.setdefault(Path(page.path).stem.lower(), str(page.front["id"]))
    named = page_properties.Folder({str(p.front["id"]): _node_type(p.front) for p in found}, slugs)
    unresolved: list[str] = []
    for page in found:
        key = str(page.front["id"])
        node_type = _node_type(page.front)
        if node_type in (NodeType.AUDIT_EVENT, NodeType.BOARD):
            continue  # server-written: a second board would hide the vault's own (decision 298)
        raw_layer = str(page.front.get("layer") or "")
        layer = Layer(raw_layer) if raw_layer in {v.value for v in Layer} else Layer.WARM
        # `tier: archival` on a summary, concept or entity (types either tier holds) was read as the
        # type's default tier; an unknown tier still is.
        raw_tier = str(page.front.get("tier") or "")
        tier = Tier(raw_tier) if raw_tier in {t.value for t in Tier} else None
        heading, rest = _split_title(page.text)
        body_lines: list[str] = []
        section: str | None = None
        edge_type: EdgeType | None = None
        for line in rest.split("\n"):
            if line.startswith("## "):
                section = line[3:].strip().lower()
                edge_type = None
                continue
            if section is None:
                body_lines.append(line)
            elif section == "outgoing":
                if line.startswith("### "):
                    edge_type, _ = edge_type_of(line[4:].strip())
                    continue
                ours = KAERU_EDGE_ITEM.match(line)
                typed = edge_type_of(ours.group(1))[0] if ours else edge_type
                for match in wikilinks(line):
                    target = slugs.get(match.group(1).strip().lower())
                    if target is None:
                        unresolved.append(f"{page.path} → {match.group(1).strip()}")
                    else:
                        batch.links.append(Link(key, target, typed or EdgeType.REFERS_TO, None, page.path))
        name = heading or Path(page.path).stem
        body = "\n".join(body_lines).strip()
        status, tags, unwritten = _kaeru_status(page.front, node_type, _tags(page.front.get("tags")))
        extra: dict[str, Any] = {"status": status} if status is not None else {}
        carried, refs, skipped = page_properties.read(page.front, page.path, node_type, tags, named)
        batch.skipped.extend(skipped)
        batch.items.append(
            Item(
                key=key,
                name=name,
                body=body or name,
                node_type=node_type,
                tags=tags,
                layer=layer,
                tier=tier if tier != default_tier(node_type) else None,
                origin=page.path,
                extra={**extra, **carried},
                digest_tags=unwritten,
                refs=refs,
            )
        )
    _unresolved(batch, unresolved)
    return batch


def _node_type(front: dict[str, Any]) -> NodeType:
    """A kaeru page's node type (`type`; one kaeru does not know: a concept)."""
    raw = str(front.get("type") or "").replace("-", "_")
    return NodeType(raw) if raw in {t.value for t in NodeType} else NodeType.CONCEPT


def _kaeru_status(
    front: dict[str, Any], node_type: NodeType, tags: list[str]
) -> tuple[str | None, list[str], list[str]]:
    """A kaeru page's status and its tags without the `status:` tags it was read from. This server's
    export says it in front matter; the original kaeru keeps it only in a `status:` tag (its
    reference §2.4), which was kept as a tag while the node was imported open — a done task open
    and tagged both `status:done` and `status:open`. A tag's status is taken when it is one the
    kind can hold (a hypothesis status; for a task a column key, which `core._status_of` places on
    the target board); the import writes the `status:` tag of the status it sets. Another tag stays
    as it was. The third list: the `status:` tags taken out when they say `open` (the status
    the import sets when none is given, so none is), for the digest only: the reader before kept
    them as tags, and a page unchanged since must import unchanged, not revised once each."""
    if front.get("status") not in (None, "null"):
        return str(front["status"]), tags, []
    for tag in tags:
        value = tag.removeprefix("status:")
        if tag.startswith("status:") and (
            (node_type == NodeType.TASK and COLUMN_KEY.match(value))
            or (node_type == NodeType.HYPOTHESIS and value in {s.value for s in HypothesisStatus})
        ):
            rest = [t for t in tags if not t.startswith("status:")]
            if value == OPEN:
                return None, rest, [t for t in tags if t.startswith("status:")]
            return value, rest, []
    return None, tags, []


def _kaeru_export(folder: Path) -> bool:
    """`folder` holds a kaeru export's frame: README.md opening with its heading, INDEX.md and LOG.md."""
    readme = folder / "README.md"
    if not all((folder / frame).is_file() for frame in KAERU_FRAME):
        return False
    try:
        first = readme.read_text(encoding="utf-8-sig", errors="replace").lstrip().split("\n", 1)[0]
    except OSError:
        return False
    return first.strip().startswith(KAERU_README)


def _unresolved(batch: Batch, unresolved: list[str]) -> None:
    if unresolved:
        shown = "; ".join(unresolved[:10]) + ("; …" if len(unresolved) > 10 else "")
        batch.skipped.append(
            Issue("links_unresolved", f"{len(unresolved)} link(s) name no note in the folder: {shown}", "path")
        )
