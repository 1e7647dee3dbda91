"""What an archive import wrote, skipped and left out, and why it stopped (`vault_io.write_records`).

Two vaults that parted (one archive imported into both) and then each revised the same node hold
two different "revision 2"s. An import skipped the archive's (the vault's kept, decision 315) but
then wrote the archive's revision 3 on top of the vault's 2: the archive's text became current,
its history said it changed the vault's text, which it never saw, and the warning said the vault's
were kept. A revision builds on the one before it, so once a node's (edge's, slot's) revision in the
archive differs from the vault's, none of its later ones is written either (`Held`): the warning
names them all, and the vault's history stays whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from kaeru.domain.model import Edge
from kaeru.errors import KaeruError
from kaeru.service.outcomes import FailedStep, Issue
from kaeru.storage.base import Session

#: How many diverged histories an import names (the rest are counted).
CONFLICTS_NAMED = 5


@dataclass
class Diverged:
    """A node's, edge's or slot's history that this vault and the archive tell apart from one revision
    on (decisions 315, 463): the archive's revisions of it from there on were not written."""

    what: str
    #: Where it is, said after its revisions (a slot's initiative), or "".
    where: str
    revisions: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        first, last = self.revisions[0], self.revisions[-1]
        said = f"revision {first}" if len(self.revisions) == 1 else f"revisions {first} to {last}"
        return f"{self.what} {said}{self.where}"


@dataclass
class ImportReport:
    initiatives: int = 0
    #: Initiatives merged away or deleted that this run restored (records name them).
    ended_initiatives: int = 0
    node_revisions: int = 0
    edge_revisions: int = 0
    slot_revisions: int = 0
    audit: int = 0
    skipped: int = 0
    #: Records not written because the vault holds another record of the same node, edge or slot
    #: revision — another vault's edit, not this archive's (decision 315) — or because they come
    #: after such a revision in their node's (edge's, slot's) history, which the vault does not have.
    conflicts: int = 0
    #: Those histories, by node, edge or slot, in the order met.
    diverged: dict[tuple[Any, ...], Diverged] = field(default_factory=dict)
    #: The vault's ids of the live initiatives that received new records (for the import's audit).
    touched: set[int] = field(default_factory=set)
    #: What screening redacted in the records written (not in those skipped as already present).
    redactions: list[Issue] = field(default_factory=list)
    #: Other warnings of the run: an initiative it made that the vault may know by another name.
    warnings: list[Issue] = field(default_factory=list)
    #: Set when the vault stopped the run after some chunks were committed (`write_records`): why,
    #: the archive line of the first record not written, and of the record refused (0: unknown).
    #: The counts are then the committed ones.
    stopped: KaeruError | None = None
    stopped_at_line: int = 0
    refused_line: int = 0

    def counts(self) -> dict[str, int]:
        found = ((f.name, getattr(self, f.name)) for f in fields(self) if not f.name.endswith("line"))
        return {name: value for name, value in found if isinstance(value, int)}

    def wrote(self) -> bool:
        """Whether this run wrote any record (a skipped one was already there)."""
        return any(v for k, v in self.counts().items() if k not in ("skipped", "conflicts"))

    def conflict(self, key: tuple[Any, ...], what: str, rev_no: int, where: str = "") -> None:
        """The archive's revision `rev_no` of `key` (`what`, `where`) is not written: it differs
        from the vault's, or comes after one that does."""
        self.conflicts += 1
        self.diverged.setdefault(key, Diverged(what, where)).revisions.append(rev_no)

    def diverged_words(self, archive: str = "archive", vault: str = "this vault") -> str:
        """The records left out as `conflict` says, named (the first few histories) and counted."""
        shown = list(self.diverged.values())
        named = ", ".join(str(d) for d in shown[:CONFLICTS_NAMED])
        more = f", and {len(shown) - CONFLICTS_NAMED} more" if len(shown) > CONFLICTS_NAMED else ""
        return (
            f"{self.conflicts} record(s) of the {archive} were not written ({named}{more}): {vault} holds another "
            f"record of the first revision named of each (both changed it since they parted), and the later ones "
            f"build on the {archive}'s; {vault}'s were kept"
        )

    def failed_step(self) -> FailedStep:
        """What a run the vault stopped part way left undone, for a `partial` answer (decision 212)."""
        stopped, line, refused = self.stopped, self.stopped_at_line, self.refused_line
        assert stopped is not None
        which = f" at line {refused}" if refused and refused != line else ""
        then = (
            "import the same archive again to write them (what is already there is skipped)"
            if stopped.retryable
            else "importing the same archive again skips what is there and stops at the same record"
        )
        return FailedStep(
            f"records from line {line}",
            stopped.code,
            f"the vault refused the chunk from line {line}{which} ({stopped.message}); the records before it "
            f"are imported, the rest are not: {then}",
        )


#: Records of a kind an import writes before the statistics of the tables they fill are first
#: gathered, and how many times they grow before the next time (`Statistics`).
FIRST, GROWTH = 16, 4


class Statistics:
    """When an import has the vault gather the planner statistics of the tables it fills
    (`Session.gather_statistics`): for each kind of record, once this run wrote `FIRST` of them,
    then each time their count has grown `GROWTH`-fold. PostgreSQL plans the per-record look-ups by
    the statistics (a new vault's say "empty") and keeps a prepared statement's plan until they
    change, so without them each look-up read a whole table: an import of a vault with histories
    was quadratic. A few times a run (the logarithm of the count), each a bounded sample."""

    def __init__(self) -> None:
        self._at: dict[str, int] = {}

    def due(self, report: ImportReport) -> list[str]:
        """The kinds whose tables are due, counted as gathered."""
        written = {
            "node": report.node_revisions,
            "edge": report.edge_revisions,
            "slot": report.slot_revisions,
            "audit": report.audit,
        }
        due = [kind for kind, n in written.items() if n >= max(FIRST, GROWTH * self._at.get(kind, 0))]
        self._at.update((kind, written[kind]) for kind in due)
        return due


class Held:
    """What the vault holds of each record an import meets: written already (skip it), another
    record of the same revision or a revision after one (a conflict), or nothing (write it).
    Edge revisions are looked up a source node at a time (an archive holds them by source), within
    one write transaction (`fresh` starts the next)."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self._edges: tuple[str, dict[tuple[str, str, int], Edge]] | None = None

    def fresh(self) -> None:
        self._edges = None

    def node(self, session: Session, record: dict[str, Any]) -> bool | None:
        """True: write the node revision; False: the vault holds it; None: a conflict (counted)."""
        key, rev = ("node", record["id"]), int(record["rev_no"])
        held = session.revision_of(record["id"], rev)
        if held == record["revision"] or (held is None and key not in self.report.diverged):
            return held is None
        self.report.conflict(key, f"node {record['id']}", rev)
        return None

    def edge(self, session: Session, record: dict[str, Any]) -> bool | None:
        src, dst, edge_type, rev = record["src"], record["dst"], record["edge_type"], int(record["rev_no"])
        key = ("edge", src, dst, edge_type)
        # Read whole only when the vault holds that revision (a new vault's import holds none).
        there = session.has_edge_revision(src, dst, edge_type, rev)
        held = self._edge(session, src).get((dst, edge_type, rev)) if there else None
        if held is None and key not in self.report.diverged:
            return True
        if held is not None and _same_edge(held, record):
            return False
        self.report.conflict(key, f"edge {src} -{edge_type}-> {dst}", rev)
        return None

    def slot(self, session: Session, initiative_id: int, record: dict[str, Any]) -> bool | None:
        key, rev = ("slot", initiative_id, record["slot"]), int(record["rev_no"])
        known = {s.rev_no: s.revision for s in session.slot_history(initiative_id, record["slot"])}
        held = known.get(rev)
        if held == record["revision"] or (held is None and key not in self.report.diverged):
            return held is None
        where = record.get("initiative") or ""
        self.report.conflict(key, f"slot {record['slot']!r}", rev, f" of {where!r}" if where else "")
        return None

    def _edge(self, session: Session, src: str) -> dict[tuple[str, str, int], Edge]:
        if self._edges is None or self._edges[0] != src:
            log = session.edge_log([src])
            self._edges = (src, {(e.dst, e.edge_type.value, e.rev_no): e for e in log if e.src == src})
        return self._edges[1]


def _same_edge(held: Edge, record: dict[str, Any]) -> bool:
    """Whether the vault's edge revision is the archive's: the same weight, state and times (its
    properties may differ only by what screening redacted)."""
    mine = (held.weight, held.retracted, held.created_at, held.recorded_at)
    return mine == (record["weight"], bool(record["retracted"]), record["created_at"], record["recorded_at"])
