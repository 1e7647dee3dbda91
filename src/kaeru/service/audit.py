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
    for seq, record in session.audit_records(initiative_ids, limit):
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
