"""What an archive's records must say of each other: each node's, edge's and slot's revisions rise.

An import writes a node's revisions in file order, each the next one of the node (`put_node`, and
`put_edge`'s guard for an edge), so an archive holding a node's revisions 1, 5, 2 wrote 1 and 5 and
then failed on 2 as "changed concurrently … retry" — after the chunks before it were committed, and
again on every retry. kaeru writes a node's, edge's and slot's revisions in rising order, each once,
and a node keeps its type and tier over its revisions (`evolve` settles or retypes a node into a new
one). The first pass of an import holds each record against the ones before it, so an archive that
breaks this is refused, its line and field named, before anything of it is written.

Held per node and edge: its last revision number (with the node's type and tier) under a 16-byte
key — the first pass's one cost that grows with the archive: a dict entry a node or edge, its key
and number Python objects of their own.
"""

from __future__ import annotations

from typing import Any

from kaeru.domain.model import EdgeType, NodeType, Tier

_TYPES = [t.value for t in NodeType]
_TIERS = [t.value for t in Tier]
_EDGE_TYPES = [t.value for t in EdgeType]


def _packed(node_id: str) -> bytes:
    """The 16 bytes of a node id (one `shape` has checked: a UUID's canonical text)."""
    return bytes.fromhex(node_id.replace("-", ""))


class Lineage:
    """The revisions of the archive's nodes, edges and slots met so far, to check each next one."""

    def __init__(self) -> None:
        #: Per node: its last revision number, type and tier, packed into one int (`_node`).
        self._nodes: dict[bytes, int] = {}
        self._edges: dict[bytes, int] = {}
        self._slots: dict[tuple[Any, ...], int] = {}

    def check(self, kind: str, record: dict[str, Any]) -> list[tuple[str, str]]:
        """Each `(field, what is wrong)` of `record` (of `kind`, one `shape` passed) against the
        records of the same node, edge or slot before it in the archive."""
        rev = int(record.get("rev_no") or 0)
        if kind == "node":
            return self._node(record, rev)
        if kind == "edge":
            key = _packed(record["src"]) + _packed(record["dst"]) + bytes([_EDGE_TYPES.index(record["edge_type"])])
            what = f"edge {record['src']} -{record['edge_type']}-> {record['dst']}"
            return _rises(self._edges, key, rev, what)
        if kind == "slot":
            slot = (record.get("initiative"), record.get("initiative_ended_at"), record["slot"])
            return _rises(self._slots, slot, rev, f"slot {record['slot']!r} of {record.get('initiative')!r}")
        return []

    def _node(self, record: dict[str, Any], rev: int) -> list[tuple[str, str]]:
        key = _packed(record["id"])
        node_type, tier = _TYPES.index(record["node_type"]), _TIERS.index(record["tier"])
        before = self._nodes.get(key)
        self._nodes[key] = max(before or 0, rev << 6 | node_type << 1 | tier)
        if before is None:
            return []
        what = f"node {record['id']}"
        last = before >> 6
        found = [] if rev > last else [("rev_no", _not_rising(what, rev, last))]
        if (before >> 1) & 31 != node_type:
            was = _TYPES[(before >> 1) & 31]
            found.append(
                (
                    "node_type",
                    f"{what} is {was!r} in its revision {last}: a node keeps its type "
                    "(`evolve` with new_type makes a new node)",
                )
            )
        if before & 1 != tier:
            found.append(
                (
                    "tier",
                    f"{what} is {_TIERS[before & 1]!r} in its revision {last}: a node keeps its tier "
                    "(`evolve` settle and unsettle make a new node)",
                )
            )
        return found


def _rises(seen: dict[Any, int], key: Any, rev: int, what: str) -> list[tuple[str, str]]:
    last = seen.get(key)
    seen[key] = rev if last is None else max(last, rev)
    return [] if last is None or rev > last else [("rev_no", _not_rising(what, rev, last))]


def _not_rising(what: str, rev: int, last: int) -> str:
    said = "again" if rev == last else f"after its revision {last}"
    return (
        f"revision {rev} of {what} comes {said} in the archive: the revisions of a node, edge or slot "
        "rise in file order, each once, as kaeru writes them"
    )
