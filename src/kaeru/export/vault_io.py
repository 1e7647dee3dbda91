"""Reading a whole vault (or some initiatives) into an `amg` archive, and writing one into a vault."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from kaeru.errors import KaeruError
from kaeru.export import amg
from kaeru.export.amg_v1 import v1_ended_initiatives, v1_slot_only
from kaeru.export.import_report import Held, ImportReport, Statistics
from kaeru.export.screen import numbered
from kaeru.export.staged import spooled_beside
from kaeru.service.mutation import give_writers_a_turn
from kaeru.service.outcomes import Issue
from kaeru.service.token_history import TOKEN_OPERATIONS as _LISTED_TOKEN_OPERATIONS
from kaeru.storage.base import AuditRecord, EndedInitiative, Session, SlotState, Store

if TYPE_CHECKING:
    from kaeru.service.former_names import FormerNames

Progress = Callable[[str, int], None]


def _noop(stage: str, count: int) -> None:
    return None


#: Audit operations that record how records came into this vault (an archive import, a copy), not
#: memory: an amg export leaves them out unless asked (`copy` moves them), so export → import →
#: export stays byte-identical (decision 15.N4).
PROVENANCE_OPERATIONS = frozenset({"import", "copy"})
#: Audit operations about the vault's own tokens (those `kaeru token history` lists), which an archive
#: never carries: an export leaves their records out and an import skips them (an archive written
#: before holds them), so `kaeru token history` never lists another vault's tokens as this one's.
#: Taken from that list, so a new token operation is left out of archives without a second edit.
TOKEN_OPERATIONS = frozenset(_LISTED_TOKEN_OPERATIONS)


@dataclass
class Frame:
    """What an export knows besides the records it streams: the records around them (few), the
    counts, and the newest time recorded (the header's `exported_at`)."""

    initiatives: list[dict[str, Any]] = field(default_factory=list)
    ended: list[dict[str, Any]] = field(default_factory=list)
    slots: list[dict[str, Any]] = field(default_factory=list)
    omissions: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    exported_at: str | None = None
    #: Distinct nodes and edges among the revisions (revisions of one node, or edge, come together).
    distinct_nodes: int = 0
    distinct_edges: int = 0

    def header(self) -> dict[str, Any]:
        counts = {
            "initiatives": len(self.initiatives),
            "ended_initiatives": len(self.ended),
            "node_revisions": self.counts.get("node", 0),
            "edge_revisions": self.counts.get("edge", 0),
            "slot_revisions": len(self.slots),
            "audit": self.counts.get("audit", 0),
        }
        return amg.header(self.initiatives, self.exported_at, counts, self.omissions)


def walk_vault(
    store: Store,
    initiatives: Sequence[str] | None,
    frame: Frame,
    progress: Progress = _noop,
    *,
    provenance: bool = False,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The node, edge and audit records of an export of `initiatives` (all when None), one at a time
    in that order, from one read snapshot; `frame` gets the rest once the walk is done (ended
    initiatives depend on the records walked). Nothing but the few initiative and slot records is
    held: memory stays flat as the vault grows."""
    with store.read() as session:
        every = session.all_initiatives()
        wanted = set(initiatives or [])  # once: a scope may name every initiative of a large vault
        chosen = every if initiatives is None else [i for i in every if i.name in wanted]
        missing = sorted(wanted - {i.name for i in chosen})
        if missing:
            frame.omissions.append({"reason": f"unknown initiatives: {', '.join(missing)}", "count": len(missing)})
        ended = session.ended_initiatives()
        history = session.name_history(None)
        keys: dict[int, amg.InitiativeKey] = {i.id: (i.name, None) for i in every}
        keys.update({e.id: (e.name, e.ended_at) for e in ended})
        scope = None if initiatives is None else [i.id for i in chosen]
        frame.initiatives = [
            amg.initiative_record(i, history.get(i.id, [])) for i in sorted(chosen, key=lambda i: i.name)
        ]
        # A scoped export keeps only the edges between the nodes it holds; a whole-vault export holds
        # every node, so it keeps no set of them.
        node_ids: set[str] | None = None if scope is None else set()
        named: set[int] = set()
        counts = frame.counts
        counts.update(node=0, edge=0, audit=0)
        newest = ""
        last_id = None
        for entry in session.export_revisions(scope):
            record = amg.node_record(entry, keys)
            named.update(entry.node.initiatives)
            if node_ids is not None:
                node_ids.add(entry.node.id)
            if entry.node.id != last_id:
                frame.distinct_nodes += 1
                last_id = entry.node.id
            newest = max(newest, record["recorded_at"])
            counts["node"] += 1
            if counts["node"] % 1000 == 0:
                progress("nodes", counts["node"])
            yield "node", record
        progress("nodes", counts["node"])
        skipped = 0
        last_edge = None
        for made in session.export_edges(None):
            edge = made.edge
            if node_ids is None or (edge.src in node_ids and edge.dst in node_ids):
                record = amg.edge_record(made)
                if (edge.src, edge.dst, edge.edge_type) != last_edge:
                    frame.distinct_edges += 1
                    last_edge = (edge.src, edge.dst, edge.edge_type)
                newest = max(newest, record["recorded_at"])
                counts["edge"] += 1
                yield "edge", record
            elif edge.src in node_ids or edge.dst in node_ids:
                skipped += 1
        node_ids = None
        if skipped:
            frame.omissions.append(
                {"reason": "edge revisions to nodes outside the exported initiatives", "count": skipped}
            )
        progress("edges", counts["edge"])
        slots = list(session.export_slots(scope))
        named.update(s.initiative_id for s in slots)
        frame.slots = [amg.slot_record(s, keys) for s in slots]
        # By initiative name (not the vault's internal number), so the order survives an import.
        frame.slots.sort(key=lambda r: (r["initiative"], r.get("initiative_ended_at") or "", r["slot"], r["rev_no"]))
        for audit in session.export_audit(scope):
            if audit.operation in TOKEN_OPERATIONS or (not provenance and audit.operation in PROVENANCE_OPERATIONS):
                continue
            if audit.initiative_id is not None:
                named.add(audit.initiative_id)
            counts["audit"] += 1
            yield "audit", amg.audit_record(audit, keys)
        # Ended initiatives: all of them in a whole-vault export, else those the records name.
        frame.ended = [
            amg.ended_record(e, history.get(e.id, []))
            for e in sorted(ended, key=lambda e: (e.name, e.ended_at, e.id))
            if scope is None or e.id in named
        ]
        frame.exported_at = newest or None
        progress("audit", counts["audit"])


def read_archive(
    store: Store, initiatives: Sequence[str] | None = None, progress: Progress = _noop, *, provenance: bool = False
) -> amg.Archive:
    """Everything the vault holds about `initiatives` (all when None), in the amg order, held whole
    (a markdown export, tests); with `provenance`, also the vault's own `import`/`copy` records.
    `write_amg` streams the same archive instead."""
    archive = amg.Archive()
    frame = Frame()
    # Nodes stay in the order the store gives them: the order the vault first recorded them (then by
    # revision), which an import reproduces, so reads listing nodes in recording order survive it.
    groups = {"node": archive.nodes, "edge": archive.edges, "audit": archive.audit}
    for kind, record in walk_vault(store, initiatives, frame, progress, provenance=provenance):
        groups[kind].append(record)
    archive.initiatives, archive.ended, archive.slots = frame.initiatives, frame.ended, frame.slots
    archive.omissions = frame.omissions
    return archive


class SpoolFailed(OSError):
    """A scratch file of `write_amg` could not be written; `filename` is its folder (where space ran out)."""


def write_amg(
    store: Store,
    write: Callable[[bytes], object],
    initiatives: Sequence[str] | None = None,
    progress: Progress = _noop,
    *,
    provenance: bool = False,
    with_header: bool = True,
    beside: Path | None = None,
) -> Frame:
    """The amg archive of `initiatives` (all when None), byte for byte what `read_archive(...).lines()`
    gives, handed to `write` in pieces: node and edge records wait in one scratch file and audit
    records in another (beside the file `beside`, on its file system, else in the temporary folder;
    `SpoolFailed` names where one could not be written) while the vault is walked, as the header,
    which counts them, and the ended initiatives, which they name, come first (decision 15.P3)."""
    frame = Frame()
    with spooled_beside(beside) as body, spooled_beside(beside) as tail:
        try:  # a store's failure is its own error, not an OSError: what is caught is the spool's
            for kind, record in walk_vault(store, initiatives, frame, progress, provenance=provenance):
                (tail if kind == "audit" else body).write(amg.dumps(record).encode() + b"\n")
            body.flush(), tail.flush()
        except OSError as exc:
            raise SpoolFailed(exc.errno, exc.strerror, str(beside.parent) if beside else tempfile.gettempdir()) from exc
        if with_header:
            write(amg.dumps(frame.header()).encode() + b"\n")
        for record in [*frame.initiatives, *frame.ended]:
            write(amg.dumps(record).encode() + b"\n")
        _pour(body, write)
        for record in frame.slots:
            write(amg.dumps(record).encode() + b"\n")
        _pour(tail, write)
    return frame


def _pour(source: IO[bytes], write: Callable[[bytes], object]) -> None:
    source.seek(0)
    while block := source.read(1 << 20):
        write(block)


Finish = Callable[[Session, ImportReport], None]

#: Records written per write transaction: each chunk holds the write lock for tens of milliseconds,
#: so other processes sharing the vault get their turn between chunks (decision 15.P2).
CHUNK = 500

#: A record to write: (line, kind, record, the redaction issues screening gave it).
Screened = tuple[int, str, dict[str, Any], list[Issue]]


def write_archive(
    store: Store,
    archive: amg.Archive,
    progress: Progress = _noop,
    finish: Finish | None = None,
    *,
    issues: Sequence[tuple[int, Issue]] = (),
) -> ImportReport:
    """Import an archive held whole (see `write_records`); `issues` are the redactions screening made,
    by the `id()` of the record each is about."""
    v1_ended = {r["key"]: r for r in v1_ended_initiatives(archive)}  # (names live initiatives' histories too)
    by_record: dict[int, list[Issue]] = {}
    for record_id, issue in issues:
        by_record.setdefault(record_id, []).append(issue)
    return write_records(
        store,
        ((line, kind, record, by_record.get(id(record), [])) for line, kind, record in numbered(archive)),
        progress,
        finish,
        v1=_V1(v1_ended, v1_slot_only(archive, v1_ended)) if v1_ended else None,
    )


@dataclass
class _V1:
    """A version 1 archive's initiatives merged away or deleted (see `amg_v1.v1_ended_initiatives`)."""

    ended: dict[amg.InitiativeKey, dict[str, Any]]
    #: Those named by slot revisions only, restored before any node.
    slot_only: list[dict[str, Any]]


def write_records(
    store: Store,
    records: Iterable[Screened],
    progress: Progress = _noop,
    finish: Finish | None = None,
    *,
    v1: _V1 | None = None,
) -> ImportReport:
    """Write archive records, in archive order, `CHUNK` to a write transaction; a record already
    present (same id and revision, same edge revision, slot revision or audit record) is skipped,
    and one the vault holds otherwise is left out with every later revision of its node, edge or
    slot (`import_report.Held`).

    Resumable and idempotent: a run stopped part way (a crash, a kill) left whole chunks behind, and
    running it again skips them and writes the rest. `finish` runs in the last transaction (the
    import's own audit record), with the counts of what this run wrote (decision 15.P2). When the
    vault refuses a chunk (`Unavailable`: a full disk, the database gone — or any refusal) after
    earlier chunks of this run wrote records, the run stops there and the report says so
    (`stopped`, with the committed counts): the caller answers `partial`, not `rejected` or
    `internal`, which say nothing was applied (decisions 212, 463).
    """
    report = ImportReport()
    held = Held(report)
    ids: dict[amg.InitiativeKey, int] = {}
    ended_ids: set[int] = set()
    present_audit: set[tuple[str, str, str | None]] | None = None
    v1_started = False

    def restore_ended(session: Session, record: dict[str, Any]) -> None:
        key = record.get("key") or (record["name"], record["ended_at"])
        ended = EndedInitiative(0, record["name"], record.get("created_at"), record["ended_at"])
        ids[key], created = session.restore_ended_initiative(ended, amg.spans_of(record))
        ended_ids.add(ids[key])
        if created:
            report.ended_initiatives += 1

    def one(session: Session, kind: str, record: dict[str, Any], issues: list[Issue]) -> bool | None:
        """Write `record`: True when written, False when already present, None when it has no
        place here (an initiative already present, a slot revision of no initiative, a revision
        that diverged from the vault's history: counted in `conflicts`; a token's audit record,
        not counted)."""
        nonlocal present_audit, v1_started
        if kind == "initiative":
            if record.get("ended_at") is not None:
                key = (record["name"], record["ended_at"])
                ended_id, created = session.restore_ended_initiative(
                    EndedInitiative(0, record["name"], record.get("created_at"), record["ended_at"]),
                    amg.spans_of(record),
                )
                ids[key] = ended_id
                ended_ids.add(ended_id)
                if not created:
                    return None
                report.ended_initiatives += 1
                return True
            existed = session.initiative_by_name(record["name"]) is not None
            if not existed:
                say_if_known(session, record["name"])
            initiative = session.restore_initiative(
                record["name"], record["created_at"], record["last_activity"], record.get("properties") or {}
            )
            if not existed and record.get("names"):
                session.restore_name_history(initiative.id, amg.spans_of(record))
            ids[(initiative.name, None)] = initiative.id
            if existed:
                return None
            report.initiatives += 1
            report.touched.add(initiative.id)
            return True
        if v1 is not None and not v1_started:
            # A version 1 archive's `#<n>` initiatives named by slot revisions only come before nodes.
            v1_started = True
            for ended_record in v1.slot_only:
                restore_ended(session, ended_record)
        if kind == "node":
            if not (new := held.node(session, record)):
                return new
            for key in amg.node_keys(record):
                if v1 is not None and key in v1.ended and key not in ids:
                    restore_ended(session, v1.ended[key])
                elif key not in ids and key[1] is None:  # a live initiative outside the archive's scope
                    # (a node shared with it): made when the vault lacks it, and counted, as the
                    # archive's own are; an import of `alpha` answered 1 initiative and made 2.
                    name = key[0]
                    if made := session.initiative_by_name(name) is None:
                        say_if_known(session, name)
                    ids[key] = session.restore_initiative(name, record["recorded_at"], record["recorded_at"], {}).id
                    if made:
                        report.initiatives += 1
            session.put_node(
                amg.to_node(record, ids), request_id=record.get("request_id"), actor=record.get("actor") or "import"
            )
            report.node_revisions += 1
            report.touched.update(ids[k] for k in amg.node_keys(record) if k[1] is None and k in ids)
            if report.node_revisions % 1000 == 0:
                progress("nodes", report.node_revisions)
        elif kind == "edge":
            if not (new := held.edge(session, record)):
                return new
            session.put_edge(amg.to_edge(record), request_id=record.get("request_id"), actor=record.get("actor"))
            report.edge_revisions += 1
        elif kind == "slot":
            initiative_id = ids.get(ref) if (ref := amg.record_key(record)) is not None else None
            if initiative_id is None:
                return None
            if not (new := held.slot(session, initiative_id, record)):
                return new
            session.put_slot(
                SlotState(
                    initiative_id,
                    record["slot"],
                    record["node_id"],
                    int(record["rev_no"]),
                    record["revision"],
                    record["updated_at"],
                )
            )
            report.slot_revisions += 1
            if record.get("initiative_ended_at") is None:
                report.touched.add(initiative_id)
        elif kind == "audit":
            if record["operation"] in TOKEN_OPERATIONS:
                return None  # another vault's tokens, which did not come with it
            if present_audit is None:
                present_audit = {(a.at, a.operation, a.request_id) for a in session.export_audit(None)}
            if (record["at"], record["operation"], record["request_id"]) in present_audit:
                return False
            owner = ids.get(ref) if (ref := amg.record_key(record)) is not None else None
            session.append_audit(
                AuditRecord(
                    record["at"],
                    record["operation"],
                    record["actor"],
                    record["request_id"],
                    owner,
                    list(record["affected"]),
                    list(record["changes"]),
                )
            )
            report.audit += 1
            if owner is not None and record.get("initiative_ended_at") is None:
                report.touched.add(owner)
        report.redactions.extend(issues)
        return True

    known: tuple[Session, FormerNames] | None = None

    def say_if_known(session: Session, name: str) -> None:
        """Before the import makes the initiative `name`: the `new_initiative` warning a write gives
        when the name is close to a live one's or was another's (SPEC 1.3: one project, one name).
        The live names are read once a chunk: those the chunk makes are the archive's own, which no
        suggestion names anyway."""
        nonlocal known
        if known is None or known[0] is not session:
            from kaeru.service.former_names import FormerNames

            known = (session, FormerNames(session))
        own = {key[0] for key in ids if key[1] is None}  # the archive's own: no spelling of another's
        if (warning := new_initiative_warning(known[1], name, own)) is not None:
            report.warnings.append(warning)

    batch: list[Screened] = []
    at_line = 0
    statistics = Statistics()

    def flush(last: bool) -> None:
        nonlocal at_line
        held.fresh()
        with store.write() as session:
            for line, kind, record, issues in batch:
                at_line = line
                if one(session, kind, record, issues) is False:
                    report.skipped += 1
                elif due := statistics.due(report):  # the tables grew: the next look-ups are planned anew
                    session.gather_statistics(due)
            if last:
                for initiative_id in sorted(ended_ids):  # an ended initiative holds no slot now
                    session.clear_slots(initiative_id)
                if finish is not None:
                    finish(session, report)
        batch.clear()
        if not last:
            give_writers_a_turn()

    committed = ImportReport()
    try:
        for item in records:
            batch.append(item)
            if len(batch) >= CHUNK:
                flush(False)
                committed = _committed(report)
        flush(True)
    except KaeruError as exc:
        if not committed.wrote():
            raise  # nothing of this run is in the vault: a plain refusal says it
        # Chunks of this run are committed: whatever the vault refused, the answer says what is there.
        committed.stopped = exc
        committed.stopped_at_line, committed.refused_line = batch[0][0] if batch else 0, at_line
        progress("stopped", committed.node_revisions)
        return committed
    progress("done", report.node_revisions)
    return report


def _committed(report: ImportReport) -> ImportReport:
    """A copy of `report` as of a committed chunk (the next chunk's counts may roll back)."""
    copied = ImportReport(
        touched=set(report.touched),
        redactions=list(report.redactions),
        warnings=list(report.warnings),
        diverged={k: replace(d, revisions=list(d.revisions)) for k, d in report.diverged.items()},
    )
    for name, count in report.counts().items():
        setattr(copied, name, count)
    return copied


def new_initiative_warning(known: FormerNames, name: str, own: set[str]) -> Issue | None:
    """`new_initiative` for an initiative an import is about to make, when the vault knows the name
    as another's (renamed or merged: an archive from before the rename) or holds one close to it
    (`Alpha` beside `alpha`) besides the archive's `own`; None when neither: an import into a new
    vault makes every initiative, and says nothing of it. `known`: what the import's transaction
    has read of the vault's names (every initiative's record, read for each initiative an import
    made, slowed it with each one)."""
    from kaeru.domain.similar import suggest  # imported when first needed (decision 16.S1)

    moved = known.of(name)
    close = suggest(name, [other for other in known.names() if other not in own])
    if moved is None and not close:
        return None
    why = f" ({moved.said()}: an archive written before that names it still)" if moved is not None else ""
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    target = moved.current if moved is not None and moved.current is not None else next(iter(close), None)
    merge = f" If they are one project, merge {name!r} into {target!r} (`initiative`, action merge)." if target else ""
    return Issue("new_initiative", f"the import created a new initiative {name!r}{why}.{hint}{merge}", "path")
