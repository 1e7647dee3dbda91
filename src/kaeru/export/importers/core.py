"""Writing what another memory held into an initiative: screened, chunked, idempotent.

An importer (`memory_jsonl`, `notes`) reads its source into a `Batch` of `Item`s (future nodes, each
with a key stable in its source) and `Link`s (future edges between keys). `apply` writes the batch
through `run_mutation` — the tools' one write path, audited as `import_from` — in chunks of
`CHUNK` items, each its own transaction, after screening every text against the same limits and
secret policy as a tool write (nothing is written if anything is refused; decision 19.I1).

Idempotency (decision 19.I2): each imported node carries `properties.imported_from` = `{format, key,
sha256}` (the digest of what the source said). A re-import finds its nodes by key in the initiative:
the same digest → unchanged (even when a person revised the node since: their edit wins); a
different digest → the node is revised to what the source now says (history keeps the old text;
what a person added in kaeru stays: `reimport`; another node type → a new node of it superseding
the old one: `retype`); a new key → a new node, unless a node of that key was forgotten in kaeru (it
stays forgotten). An edge already live with the same weight
and labels is left as it is; one this import wrote that the source no longer says is retracted —
unless the reader could not read part of the source (a truncated line, a file it could not open):
what it did not read it may still say, so nothing is removed and the report says so.

The imported nodes are read once, in the first chunk, and the map kept as chunks write: reading them
again for every chunk made an import's time grow with the square of the file's size.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import EdgeType, HypothesisStatus, Layer, Node, NodeType, Tier, default_tier
from kaeru.domain.naming import MAX_NAME_CHARS
from kaeru.domain.surrogates import refusal_of_lone_surrogate
from kaeru.errors import InvalidArgument, KaeruError, SecretDetected, Unavailable
from kaeru.export.importers import edges, page_properties, reimport, retype
from kaeru.export.importers.reimport import MARK
from kaeru.export.screen import LISTED, Refusal, secret_advice, too_many_tags
from kaeru.service import tasks
from kaeru.service.checks import check_name, check_tag, check_text, normalise_initiative, screen_secrets
from kaeru.service.mutation import WriteContext, give_writers_a_turn, retag, run_mutation
from kaeru.service.outcomes import Issue

if TYPE_CHECKING:
    from kaeru.service import Service

#: Items written per transaction: a chunk holds the write lock briefly (decision 15.P5's reasoning).
CHUNK = 500
OPERATION = "import_from"
#: What a reader says of a part of the source it could not read (a line, a file).
UNREAD = frozenset({"line_skipped", "file_skipped"})

Progress = Callable[[str, int, int], None]


def _quiet(stage: str, done: int, total: int) -> None:
    return None


@dataclass
class Item:
    """One future node. `key` identifies it in its source (an entity name, a note's path, an id)."""

    key: str
    name: str
    body: str
    node_type: NodeType
    tags: list[str] = field(default_factory=list)
    layer: Layer = Layer.WARM
    tier: Tier | None = None  # the source's, when not its type's default (a kaeru page's `tier: archival`)
    #: Where it was read from, for refusals ("line 12", "notes/a.md").
    origin: str = ""
    #: Extra properties kept as they are (screened like every text).
    extra: dict[str, Any] = field(default_factory=dict)
    #: Tags of the source the node does not get, counted in the digest only: a kaeru page's
    #: `status:open`, which an earlier reader kept (an import of an unchanged page stays unchanged).
    digest_tags: list[str] = field(default_factory=list)
    #: The keys of the items `extra` names (a kaeru page's rule's task, a chain's steps): written
    #: with the ids of those items' nodes (`page_properties.bind`), so the item comes after them.
    refs: list[str] = field(default_factory=list)
    #: The digest of what the source said, once `extra` names nodes of this vault (`bind`): a re-import
    #: compares what the source says, not the ids it became (what was written, when a name was not bound).
    said: str | None = None

    def digest(self) -> str:
        if self.said is not None:
            return self.said
        tags = sorted([*self.tags, *self.digest_tags])
        material = [self.name, self.body, self.node_type.value, tags, self.layer.value, self.extra]
        if self.tier is not None:  # only then: an item of its type's tier keeps the digest it had
            material.append(self.tier.value)
        return hashlib.sha256(json.dumps(material, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


@dataclass
class Link:
    src: str
    dst: str
    edge_type: EdgeType
    #: The source's own name for the relation when it is not one of kaeru's edge types.
    label: str | None = None
    origin: str = ""


@dataclass
class Batch:
    format: str
    items: list[Item] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    #: What the reader left out, with why (a malformed line, a link to nothing).
    skipped: list[Issue] = field(default_factory=list)


@dataclass
class Report:
    format: str
    initiative: str
    items: int = 0
    created: int = 0
    revised: int = 0
    unchanged: int = 0
    #: Items left out because a node of their key was forgotten in kaeru.
    forgotten: int = 0
    edges_added: int = 0
    #: Live edges given another label (or weight): one edge, so not "added".
    edges_revised: int = 0
    #: Edges an earlier import wrote that the source no longer says, retracted.
    edges_removed: int = 0
    edges_unchanged: int = 0
    #: Whether edges the source may no longer say were left unchecked: part of it was not read.
    edges_removal_skipped: bool = False
    issues: list[Issue] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return self.created + self.revised + self.edges_added + self.edges_revised + self.edges_removed

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "format": self.format,
            "initiative": self.initiative,
            "items": self.items,
            "created": self.created,
            "revised": self.revised,
            "unchanged": self.unchanged,
            "forgotten": self.forgotten,
            "edges_added": self.edges_added,
            "edges_revised": self.edges_revised,
            "edges_removed": self.edges_removed,
            "edges_unchanged": self.edges_unchanged,
            "edges_removal_skipped": self.edges_removal_skipped,
            "changes": self.changes,
            "issues": [
                {"code": i.code, "message": i.message, "field": i.field, "retryable": i.retryable} for i in self.issues
            ],
        }


def screen(batch: Batch, policy: str) -> list[Issue]:
    """Check every item against a tool write's limits and the secret `policy`, redacting in place
    under `redact`; raises the refusal of the whole batch (naming every refused field) if any."""
    refusals: list[Refusal] = []
    issues: list[Issue] = []

    def text(item: Item, line: int, field_name: str, value: str) -> str:
        try:
            check_text(field_name, value)
            if (lone := refusal_of_lone_surrogate({field_name: value})) is not None:
                raise lone  # a JSON `"\ud800"` in a page's front matter: not text any store holds
            cleaned, issue = screen_secrets(policy, field_name, value)
        except KaeruError as error:
            refusals.append(Refusal(line, f"{item.origin or item.key}: {field_name}", error.code, error.message))
            return value
        if issue is not None:
            issues.append(Issue(issue.code, f"{item.origin or item.key}: {issue.message}", field_name))
        return cleaned

    for line, item in enumerate(batch.items, 1):
        cleaned_name = clean_name(item.name)
        if cleaned_name != item.name:
            issues.append(
                Issue(
                    "name_cleaned",
                    f"{item.origin or item.key}: the name {_shown(item.name)} is imported as {cleaned_name!r} "
                    f"(a node name is one line of at most {MAX_NAME_CHARS} characters; the source's name stays "
                    f"in properties.{MARK}.key)",
                    "name",
                )
            )
            item.name = cleaned_name
        try:
            check_name("name", item.name)
        except KaeruError as error:
            refusals.append(Refusal(line, f"{item.origin or item.key}: name", error.code, error.message))
        item.name = text(item, line, "name", item.name)
        item.body = text(item, line, "body", item.body)
        # Counted as the write path counts them: a note of 64 tags exported came back refused (423).
        if (too_many := too_many_tags(item.tags)) is not None:
            refusals.append(Refusal(line, f"{item.origin or item.key}: tags", "invalid_argument", too_many))
        for i, tag in enumerate(item.tags):
            try:
                check_tag("tags", i, tag)
            except KaeruError as error:
                refusals.append(Refusal(line, f"{item.origin or item.key}: tags[{i}]", error.code, error.message))
            else:
                item.tags[i] = text(item, line, f"tags[{i}]", tag)
        item.extra = _walk(item.extra, partial(text, item, line, "properties"))
        item.key = text(item, line, "key", item.key)
    for line, link in enumerate(batch.links, len(batch.items) + 1):
        if link.label is not None:
            try:
                check_text("label", link.label)
                link.label, _ = screen_secrets(policy, "label", link.label)
            except KaeruError as error:
                refusals.append(Refusal(line, f"{link.origin}: relation", error.code, error.message))
    if refusals:
        listed = "; ".join(f"{r.field}: {r.message}" for r in refusals[:LISTED])
        more = f"; and {len(refusals) - LISTED} more" if len(refusals) > LISTED else ""
        message = f"nothing was imported: {len(refusals)} field(s) refused — {listed}{more}"
        if all(r.code == SecretDetected.code for r in refusals):
            raise SecretDetected(message + secret_advice(refusals, "source"), field="path")
        raise InvalidArgument(message, field="path")
    return issues


_SPACES = re.compile(r"\s+")


def clean_name(name: str) -> str:
    """`name` made a node name when only its whitespace (a line break, a tab) or its length stood in
    the way: whitespace runs → one space, trimmed, cut to the limit. A name the write path takes is
    returned as it is; one holding any other control character is left for `check_name` to refuse."""
    stripped = name.strip()
    if len(stripped) <= MAX_NAME_CHARS and not any(ord(ch) < 32 for ch in stripped):
        # A line break or tab at either end only: trimmed ("Alice\n" was stored so, and no read by
        # the name "Alice" found it); spaces there the write path trims itself.
        return stripped if any(ord(ch) < 32 for ch in name) else name
    cleaned = _SPACES.sub(" ", stripped)[:MAX_NAME_CHARS].rstrip()
    return cleaned if cleaned and not any(ord(ch) < 32 for ch in cleaned) else name


def _shown(name: str) -> str:
    return repr(name if len(name) <= 80 else name[:77] + "…")


def _walk(value: Any, clean: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {k: _walk(v, clean) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, clean) for v in value]
    return value


def apply(
    service: Service,
    initiative: str,
    batch: Batch,
    *,
    actor: str | None = None,
    progress: Progress = _quiet,
    chunk: int = CHUNK,
) -> Report:
    """Write `batch` into `initiative` (created if new); the counts of what changed."""
    rt = service.rt
    name = normalise_initiative(initiative)
    who = actor or rt.settings.actor
    report = Report(batch.format, name)
    report.issues.extend(batch.skipped)
    report.issues.extend(screen(batch, rt.settings.secret_policy))
    items = page_properties.ordered(_dedupe(batch.items, report))  # after the items they name
    report.items = len(items)
    ids: dict[str, str] = {}
    known = _Known(batch.format, labels=edges.labels_of(batch.links))
    touched: list[str] = []
    committed = [0]  # the report's changes as of the last committed chunk

    def run(label: str, body: Callable[[WriteContext], None]) -> None:
        outcome, _ = run_mutation(
            rt,
            operation=OPERATION,
            initiative=name,
            request_id=None,
            args={"format": batch.format, "part": label},
            actor=who,
            body=body,
        )
        report.issues.extend(outcome.issues)
        touched.extend(ref.id for ref in (*outcome.created, *outcome.affected))
        committed[0] = report.changes
        give_writers_a_turn()

    try:
        for start in range(0, len(items), chunk):
            part = items[start : start + chunk]
            run(f"nodes {start}", lambda ctx, part=part: _write_items(ctx, known, part, ids, report))  # type: ignore[misc]
            progress("nodes", min(start + chunk, len(items)), len(items))
        mine = set(ids.values())  # the nodes of the items the source has now (`ids` gains others below)
        links = batch.links
        for start in range(0, len(links), chunk * 4):
            part_links = links[start : start + chunk * 4]
            run(f"links {start}", lambda ctx, part=part_links: edges.write_links(ctx, known, part, ids, report))  # type: ignore[misc]
            progress("links", min(start + chunk * 4, len(links)), len(links))
        # An edge it wrote before joins two nodes there before; a link on a line or in a file the
        # reader could not read is not one the source dropped (a truncated file).
        report.edges_removal_skipped = report.revised + report.unchanged > 1 and any(
            i.code in UNREAD for i in batch.skipped
        )
        if report.revised + report.unchanged > 1 and not report.edges_removal_skipped:
            run(
                "links removed",
                lambda ctx: _removed(report, reimport.remove_stale(ctx, known.format, mine, known.said)),
            )
    except Unavailable as exc:
        if not committed[0]:
            raise
        # Earlier chunks are in the vault: say so, and how to finish (decision 212).
        raise Unavailable(
            f"stopped part way, after {committed[0]} changes were written: the vault refused the next chunk "
            f"({exc.message}); the same command again writes the rest (what is there is kept, once)"
        ) from exc
    if (kept := reimport.forgotten_issue(known.kept)) is not None:
        report.issues.append(kept)
    if (changed := retype.said(known.retyped)) is not None:
        report.issues.append(changed)
    if rt.embedder is not None and touched:
        from kaeru.service.recall import embed_nodes

        embed_nodes(rt, list(dict.fromkeys(touched)))
    return report


def _removed(report: Report, count: int) -> None:
    report.edges_removed += count


def _dedupe(items: Iterable[Item], report: Report) -> list[Item]:
    """One item per key, the last one read winning: a key read twice is a folder holding two pages
    of one `id` (kaeru-md). memory-jsonl merges an entity's copies itself, as its server keeps them."""
    by_key: dict[str, Item] = {}
    for item in items:
        if item.key in by_key:
            report.issues.append(
                Issue("duplicate_key", f"{item.origin or item.key}: {item.key!r} appears twice; the last one is kept")
            )
        by_key[item.key] = item
    return list(by_key.values())


@dataclass
class _Known:
    """The initiative's nodes imported from `format`, by key: read in the first chunk that needs
    them, then kept up to date as chunks write (each chunk commits before the next starts)."""

    format: str
    nodes: dict[str, Node] | None = None
    #: The keys of imported nodes forgotten in kaeru: read when an item's key matches no live node.
    gone: set[str] | None = None
    #: The forgotten ones' node ids, by key: read when an item names a key no node written has.
    gone_ids: dict[str, str] | None = None
    #: The items left out as forgotten (origin, name), and their keys.
    kept: list[tuple[str, str]] = field(default_factory=list)
    kept_keys: set[str] = field(default_factory=set)
    #: The items replaced by a node of the type the source now gives (origin, name, old, new type).
    retyped: list[tuple[str, str, str, str]] = field(default_factory=list)
    #: What this import's links make (src id, dst id, edge type): the edges it keeps.
    said: set[tuple[str, str, str]] = field(default_factory=set)
    #: The labels the whole source gives each relation (`edges.labels_of`).
    labels: dict[edges.Relation, list[str]] = field(default_factory=dict)

    def of(self, ctx: WriteContext) -> dict[str, Node]:
        if self.nodes is None:
            self.nodes = _imported(ctx, self.format)
        return self.nodes

    def forgotten(self, ctx: WriteContext, key: str) -> bool:
        if self.gone is None:
            self.gone = reimport.forgotten(ctx, self.format)
        return key in self.gone

    def node_of(self, ctx: WriteContext, ids: dict[str, str], key: str) -> str | None:
        """The id of the node of the item `key` names: written by this import, else by an earlier
        one (names that go round: `page_properties.ordered`), else the node of it a person forgot (an
        item named by another — a rule's task — stays the forgotten node, as a rule scoped to a
        forgotten task is not in force). Read the forgotten ones only when asked."""
        if key in ids:
            return ids[key]
        if (node := self.of(ctx).get(key)) is not None:
            return node.id
        if self.gone_ids is None:
            self.gone_ids = ctx.session.forgotten_marked(ctx.initiative.id, MARK, self.format)
        return self.gone_ids.get(key)


def _imported(ctx: WriteContext, fmt: str) -> dict[str, Node]:
    """The initiative's live nodes imported from `fmt`, by key. Of two holding one key (`evolve`
    carries the mark to a successor), the newest: the item's latest version, whatever order the
    store answers in."""
    found = ctx.session.nodes_with_property([ctx.initiative.id], MARK)
    out: dict[str, Node] = {}
    for node in ctx.session.nodes_by_ids(found).values():
        mark = node.properties.get(MARK)
        if isinstance(mark, dict) and mark.get("format") == fmt and isinstance(mark.get("key"), str):
            held = out.get(mark["key"])
            if held is None or (node.created_at, node.id) > (held.created_at, held.id):
                out[mark["key"]] = node
    return out


def _write_items(ctx: WriteContext, imported: _Known, items: list[Item], ids: dict[str, str], report: Report) -> None:
    known, fmt = imported.of(ctx), imported.format
    # A node revised keeps its type: its status is one of that type's (one retyped: of the item's).
    types = {i.key: known[i.key].node_type if i.key in known else i.node_type for i in items}
    # The board is read once a chunk, and only when the chunk holds a task.
    has_task = NodeType.TASK in {*types.values(), *(i.node_type for i in items)}
    cols = tasks.columns(ctx.session, ctx.initiative) if has_task else []
    for item in items:
        if item.refs:  # the items it names come before it (`page_properties.ordered`): written
            item, unbound = page_properties.bind(item, partial(imported.node_of, ctx, ids))
            report.issues.extend(unbound)
        existing = known.get(item.key)
        if existing is None and imported.forgotten(ctx, item.key):
            imported.kept.append((item.origin or item.key, item.name))
            imported.kept_keys.add(item.key)
            report.forgotten += 1
            continue
        status = _status_of(item, types[item.key], cols)
        if existing is None:
            node = ctx.create_node(
                node_type=item.node_type,
                body=item.body,
                name=item.name,
                tags=[*item.tags, f"status:{status}"] if status else item.tags,
                layer=item.layer,
                tier=item.tier,
                status=status,
                properties={**item.extra, MARK: reimport.mark(fmt, item, item.tags, status, item.node_type.value)},
            )
            report.created += 1
        elif existing.properties.get(MARK, {}).get("sha256") == item.digest():
            node = existing
            report.unchanged += 1
        else:
            locked = ctx.session.get_node(existing.id, for_update=True) or existing
            if retype.possible(ctx, locked, item):
                node = retype.replace(ctx, fmt, locked, item, _status_of(item, item.node_type, cols), cols)
                imported.retyped.append(
                    (item.origin or item.key, item.name, locked.node_type.value, item.node_type.value)
                )
                report.revised += 1
                known[item.key] = node
                ids[item.key] = node.id
                continue
            kept = reimport.status_kept(locked, item, status)
            source, tags, properties, type_kept = reimport.revised(locked, item, kept)
            if type_kept is not None:
                report.issues.append(type_kept)
            if locked.node_type == NodeType.TASK and kept != locked.status:
                reimport.moved(properties, kept in tasks.closing_keys(cols), ctx.now_s)
            node = ctx.update_node(
                locked,
                name=item.name,
                body=item.body,
                layer=item.layer,
                tier=item.tier or default_tier(locked.node_type),  # the type it keeps: its tier
                status=kept if kept is not None else locked.status,
                tags=retag(tuple(tags), item.name, item.body, locked.id),
                properties={**properties, MARK: reimport.mark(fmt, item, source, status, retype.written(locked, item))},
            )
            ctx.mark_affected(node)
            report.revised += 1
        known[item.key] = node
        ids[item.key] = node.id
    if ctx.outcome.created or ctx.outcome.affected:
        ctx.outcome.primary = (ctx.outcome.created or ctx.outcome.affected)[0]
    else:
        ctx.outcome.state = "unchanged"


def _status_of(item: Item, node_type: NodeType, cols: list[dict[str, str]]) -> str | None:
    """The status a task or hypothesis (`node_type`: the node's, kept on a re-import) is imported
    with (decision 298): the one its source gives (`status` in a page's front matter) when the
    board (`cols`) has that column or it is a hypothesis status, else the board's closing column for
    `done`, its first column or `open`. Without one, an imported task was on no board and an
    imported claim in no list of open claims."""
    given = item.extra.get("status")
    if node_type == NodeType.TASK:
        keys = [c["key"] for c in cols]
        if given in keys:
            return str(given)
        return tasks.terminal_key(cols) if given == "done" else keys[0]  # a finished task stays finished
    if node_type == NodeType.HYPOTHESIS:
        return given if given in {s.value for s in HypothesisStatus} else HypothesisStatus.OPEN.value
    return None
