"""`--pooled`: every conversation of a run in ONE initiative — a long memory of one project.

Shared by `python -m bench.locomo --pooled` and `python -m bench.beam --pooled`. The conversations
are concatenated, conversation after conversation in the usual order, into one conversation whose
initiative is `<set>-pooled`; each turn keeps its text and `occurred_at` (as the harness gives
them), and its id becomes `<sample_id>/<turn id>` so ids stay unique across conversations. Every
question keeps its key and is asked of the pooled conversation, its evidence namespaced the same
way. The in-harness baselines are built from the pooled conversation's turns, so BM25 ranks the
same corpus that `recall` searches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypeVar

from bench.locomo.data import Conversation, Turn

POOLED_ID = "pooled"
C = TypeVar("C", bound=Conversation)
Q = TypeVar("Q")


def turn_id(sample_id: str, dia_id: str) -> str:
    """A turn's id in the pool: unique across conversations."""
    return f"{sample_id}/{dia_id}"


def pool_conversations(conversations: Sequence[C]) -> C:
    """One conversation of the same class holding every turn of `conversations`, in order."""
    if not conversations:
        raise ValueError("nothing to pool")
    turns: list[Turn] = []
    for conv in conversations:
        for turn in conv.turns:
            turns.append(replace(turn, dia_id=turn_id(conv.sample_id, turn.dia_id), order=len(turns)))
    ends_at = max(c.ends_at for c in conversations)
    return type(conversations[0])(0, POOLED_ID, turns, ends_at)


def pool_question(q: Q, id_fields: Sequence[str] = ("evidence",)) -> Q:
    """`q` asked of the pooled conversation (index 0), its turn ids (`id_fields`) namespaced."""
    sample_id: str = getattr(q, "sample_id")  # noqa: B009 — any question dataclass with a sample_id
    changes: dict[str, Any] = {"conv_index": 0}
    for name in id_fields:
        changes[name] = tuple(turn_id(sample_id, t) for t in getattr(q, name))
    return replace(q, **changes)  # type: ignore[type-var]


def pool(
    conversations: Sequence[C], questions: Sequence[Q], id_fields: Sequence[str] = ("evidence",)
) -> tuple[C, list[Q]]:
    """The pooled conversation and every question re-addressed to it."""
    return pool_conversations(conversations), [pool_question(q, id_fields) for q in questions]


def describe(conversations: Sequence[Conversation], pooled: Conversation) -> dict[str, Any]:
    """What the report says of the pool (the smoke tests read it)."""
    return {
        "conversations": [c.sample_id for c in conversations],
        "initiative": pooled.initiative,
        "turns": len(pooled.turns),
        "turn_id": "<sample_id>/<turn id>",
    }
