"""Audit records as read-only `audit_event` nodes (SPEC §1.7), for `search filters.types=[audit_event]`.

Audit records live in their own append-only table (so they never crowd ordinary reads); this module
presents them in the node shape, with a stable id derived from their sequence number.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence

from kaeru.domain.model import Layer, Node, NodeType, Tier, Visibility
from kaeru.domain.text import tokens as text_tokens
from kaeru.service import grants
from kaeru.storage.base import AuditRecord, Session

PREFIX = "audit:"
_NAMESPACE = uuid.UUID("6f0b7a52-4c1e-4d8e-9a63-6b2f0f9e1c11")


def audit_node(seq: int, record: AuditRecord) -> Node:
    payload = {
        "operation": record.operation,
        "actor": record.actor,
        "request_id": record.request_id,
        "affected": record.affected,
        "changes": record.changes,
    }
    return Node(
        id=str(uuid.uuid5(_NAMESPACE, f"audit:{seq}")),
        rev_no=1,
        revision=f"1-audit{seq}",
        node_type=NodeType.AUDIT_EVENT,
        tier=Tier.OPERATIONAL,
        name=f"audit:{record.operation}",
        body=json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str),
        description=None,
        tags=(f"op:{record.operation}", f"actor:{record.actor}"),
        layer=Layer.WARM,
        visibility=Visibility.LOCAL,
        status=None,
        properties={"audit_seq": seq, **{k: v for k, v in payload.items() if k != "changes"}},
        initiatives=(record.initiative_id,) if record.initiative_id is not None else (),
        created_at=record.at,
        recorded_at=record.at,
    )


def matching(
    session: Session,
    initiative_ids: Sequence[int],
    query_tokens: Sequence[str],
    match_all: bool,
    prefix: bool,
    limit: int,
) -> list[str]:
    """Cursor items (`audit:<seq>`) of the newest audit records whose text matches the query, newest first."""
    out: list[str] = []
    records = _granted(session, session.audit_records(initiative_ids, limit))
    for seq, record in records:
        if query_tokens:
            words = set(text_tokens(audit_node(seq, record).body))
            hits = [any(w.startswith(t) for w in words) if prefix else t in words for t in query_tokens]
            if not (all(hits) if match_all else any(hits)):
                continue
        out.append(f"{PREFIX}{seq}")
    return out


def load(session: Session, items: Sequence[str]) -> dict[str, Node]:
    seqs = [int(i[len(PREFIX) :]) for i in items if i.startswith(PREFIX)]
    return {f"{PREFIX}{seq}": audit_node(seq, rec) for seq, rec in session.audit_by_seq(seqs).items()}


def _granted(session: Session, records: list[tuple[int, AuditRecord]]) -> list[tuple[int, AuditRecord]]:
    """The records a token limited to some initiatives may see: none naming a node or an initiative
    outside them (decision 15.K2)."""
    if grants.granted_ids(session) is None:
        return records
    texts = [json.dumps([r.affected, r.changes], default=str, ensure_ascii=False) for _, r in records]
    visible = grants.visible_ids(session, grants.mentioned_ids(texts))
    every = session.initiative_name_list()  # the names alone: no initiative's row made into a record
    hidden = [json.dumps(n, ensure_ascii=False) for n in set(every) - set(grants.visible_names(every))]
    return [
        pair
        for pair, text in zip(records, texts, strict=True)
        if grants.mentioned_ids(text) <= visible and not any(name in text for name in hidden)
    ]
