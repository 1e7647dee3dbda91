"""NodeRef resolution with explicit ambiguity and helpful misses (SPEC §2.3)."""

from __future__ import annotations

import re
from typing import Any

from kaeru.domain.currentness import decide
from kaeru.domain.model import Currentness, EdgeType, Node, NodeType
from kaeru.domain.refs import NodeRef, parse_ref
from kaeru.errors import AmbiguousRef, InvalidArgument, NotFound
from kaeru.service import grants
from kaeru.storage.base import Initiative, Session

#: An auto-name's suffix: the last six hex digits of the node's id (decision 12).
_AUTO_SUFFIX = re.compile(r"[0-9a-f]{6}")
#: The most candidates an ambiguous name lists.
MAX_LISTED = 10
#: The most `consolidated_to` steps `settled_into` follows (settle, unsettle, settle … of one memory).
MAX_SETTLES = 16


def settled_into(session: Session, node: Node) -> Node | None:
    """The live node a retracted `node` was settled or unsettled into (`evolve` retracts the source
    and links it `consolidated_to` its successor; decision 296); None when it was forgotten."""
    for _ in range(MAX_SETTLES):
        onward = [e for e in session.live_edges([node.id], [EdgeType.CONSOLIDATED_TO]) if e.src == node.id]
        found = session.get_node(onward[0].dst) if onward else None
        if found is None or not grants.node_visible(found, grants.granted_ids(session)):
            return None
        if not found.retracted:
            return found
        node = found
    return None


def resolve_node(
    session: Session, raw: Any, scope: Initiative | None, field: str, parsed: NodeRef | None = None
) -> Node:
    """The live node `raw` names. `scope` is the call's initiative (None when it does not exist yet);
    `parsed`: `raw` already parsed by the caller (`parse_ref`).

    Raises:
        InvalidArgument: `raw` is not a NodeRef.
        AmbiguousRef: a name matches several live nodes (candidates listed).
        NotFound: nothing matches (with where the name lives elsewhere, or close names).
    """
    try:
        ref = parsed if parsed is not None else parse_ref(raw)
    except ValueError as exc:
        raise InvalidArgument(str(exc), field=field) from exc
    if ref.id:
        node = session.get_node(ref.id)
        if node is not None and not grants.node_visible(node, grants.granted_ids(session)):
            node = None  # outside the token's grants: the same miss as an id that does not exist
        if node is not None and not node.retracted:
            return node
        if node is not None:
            successor = settled_into(session, node)
            if successor is not None:  # settled or unsettled: the memory lives on under another id
                raise NotFound(
                    f"node {ref.id} was settled into {successor.id} ({successor.name!r}) at {node.recorded_at}; "
                    "name that node, or `read` this one with `at` before then",
                    field=field,
                )
            raise NotFound(
                f"node {ref.id} was forgotten at {node.recorded_at}; `read` it with `at` before then, "
                "or `trail` its history",
                field=field,
            )
        if not ref.bare:
            raise NotFound(f"no node with id {ref.id}", field=field)
    assert ref.name is not None
    if ref.initiative is not None:
        grants.check_name(ref.initiative, field)
        target = session.initiative_by_name(ref.initiative)
        if target is None:
            from kaeru.service.former_names import unknown_hint  # imported when first needed (16.S1)

            extra = unknown_hint(session, ref.initiative)
            raise NotFound(f"no initiative named {ref.initiative!r}{extra}", field=field)
        scope = target
    matches = session.live_nodes_named(ref.name, [scope.id]) if scope is not None else []
    named = f"named {ref.name!r}"
    if not matches and scope is not None:
        # An auto-name without its id suffix ("write-docs" for "write-docs-a51c80"): the name an
        # agent reads in the text it wrote (decision 292).
        matches = [
            n
            for n in session.live_nodes_suffixed(ref.name, [scope.id], MAX_LISTED + 1)
            if _AUTO_SUFFIX.fullmatch(n.name[len(ref.name) + 1 :])
        ]
        named = f"named {ref.name!r} and an id's end"
    if len(matches) > 1:
        # The board is a node the server names `board`; a task the agent named so is the one meant.
        own = [n for n in matches if n.node_type not in (NodeType.BOARD, NodeType.AUDIT_EVENT)]
        matches = own if own else matches
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        matches, said = _by_currentness(session, matches)
        listed = "; ".join(
            f"{n.id} ({n.node_type.value}, {n.name!r}, {said[n.id]}, recorded {n.recorded_at})"
            for n in matches[:MAX_LISTED]
        )
        current = [n.id for n in matches if said[n.id] == Currentness.CURRENT.value]
        only = f" {current[0]} is the only current one." if len(current) == 1 else ""
        raise AmbiguousRef(
            f"{len(matches)} live nodes are {named} in {scope.name if scope else '?'!r}: {listed}.{only} "
            "Pass one of these ids instead.",
            field=field,
            details={"candidates": [n.id for n in matches]},
        )
    raise NotFound(_miss_message(session, ref.name, scope), field=field)


def _by_currentness(session: Session, matches: list[Node]) -> tuple[list[Node], dict[str, str]]:
    """`matches` with the current ones first (each group in the store's order, newest recorded
    first), and each one's currentness as said ("superseded by <ids>"). Listed by recorded time
    alone, the versions of one fact renamed alike gave no hint which to pick, and hygiene's layer
    move, which records a node again, put a superseded one above the current one. A successor
    outside a limited token's grants is not named, as the node's view leaves it out (decision 15.K2)."""
    verdicts = session.verdicts_against([n.id for n in matches])
    decided = {n.id: decide(n.node_type, n.status, n.retracted, verdicts.get(n.id, ())) for n in matches}
    hidden = grants.hidden_ids(session, (s for _, successors in decided.values() for s in successors))
    said: dict[str, str] = {}
    for node_id, (state, successors) in decided.items():
        shown = [s for s in successors if s not in hidden]
        said[node_id] = f"{state.value} by {', '.join(shown)}" if shown else state.value
    ordered = sorted(matches, key=lambda n: said[n.id] != Currentness.CURRENT.value)
    return ordered, said


def _miss_message(session: Session, name: str, scope: Initiative | None) -> str:
    where = f" in initiative {scope.name!r}" if scope else ""
    message = f"no live node named {name!r}{where}"
    elsewhere = grants.visible_names(session.initiative_names(session.initiatives_holding_name(name)).values())
    if elsewhere:
        listed = ", ".join(repr(n) for n in sorted(elsewhere))
        return f"{message}; that name exists in {listed} — use {{initiative, name}} or its id"
    granted = grants.granted_ids(session)
    scopes = [scope.id] if scope else (sorted(granted) if granted is not None else None)
    candidates = session.name_candidates(name, scopes, 200)
    # The store pre-filters on the first three letters; a transposition touching them (`dpeloy`, `delpoy`) would
    # never reach `suggest`, so ask once more for each head with two adjacent letters swapped.
    for swapped in _head_transpositions(name):
        candidates.extend(session.name_candidates(swapped, scopes, 50))
    from kaeru.domain.similar import suggest  # imported when first needed (decision 16.S1)

    close = suggest(name, dict.fromkeys(candidates))
    if close:
        return f"{message}; did you mean {', '.join(repr(c) for c in close)}?"
    return message


def _head_transpositions(name: str) -> list[str]:
    """`name` with one adjacent pair among its first four letters swapped (each distinct variant): every
    swap that changes the first three letters the store pre-filters on (pairs 1-2, 2-3 and 3-4)."""
    stripped = name.strip()
    variants: list[str] = []
    for i in range(min(3, len(stripped) - 1)):
        if stripped[i] != stripped[i + 1]:
            variants.append(stripped[:i] + stripped[i + 1] + stripped[i] + stripped[i + 2 :])
    return variants
