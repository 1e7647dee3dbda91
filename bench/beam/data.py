"""Loading beam-dev: messages as turns, the answerable probing questions and their evidence.

The data is vendored in bench/data/beam-dev (evaluation only; never packaged). Every file is checked
against `SHA256SUMS` there, and that list against the hash pinned here, on every load.

What is read, and only that: each message's `role`, `content`, `id` and `time_anchor` (the date of
the batch it opens), and each question's `question` and `source_chat_ids`. The note text is
`"<role>: <content>"` exactly as the data README says (the ` ->-> 1,2` markers stay: they are noise
for every system alike). Question categories are read only to report figures per category.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.locomo.data import Conversation, DataError, Turn, rfc3339, sha256_of

SUMS_FILE = "SHA256SUMS"
#: The hash of `SHA256SUMS` (which lists every file of the folder with its own hash).
SUMS_SHA256 = "f68348c7898319c4a0f62e2d0e5fba42dc96d00dac06a7da593e0d1be0ac3641"

CHAT_FILE = "chat.json"
QUESTIONS_FILE = "probing_questions.json"

#: The README's ten categories, numbered for reports in their (alphabetical) file order.
CATEGORIES = {
    1: "abstention",
    2: "contradiction_resolution",
    3: "event_ordering",
    4: "information_extraction",
    5: "instruction_following",
    6: "knowledge_update",
    7: "multi_session_reasoning",
    8: "preference_following",
    9: "summarization",
    10: "temporal_reasoning",
}
KNOWLEDGE_UPDATE = "knowledge_update"


class BeamConversation(Conversation):
    """A LoCoMo-shaped conversation (so the LoCoMo harness's product side ingests it unchanged),
    stored in its own initiative `beam-<number>`."""

    @property
    def initiative(self) -> str:
        return f"beam-{self.sample_id}"


@dataclass(frozen=True)
class BeamQuestion:
    conv_index: int
    sample_id: str  # the conversation's folder number
    category: int
    position: int  # within its category's list
    text: str
    evidence: tuple[str, ...]  # message ids (as text); knowledge_update: the updated messages
    original: tuple[str, ...] = ()  # knowledge_update: the original messages (not evidence)

    @property
    def key(self) -> str:
        return f"{self.sample_id}#{CATEGORIES[self.category]}#{self.position}"


@dataclass
class BeamDataset:
    conversations: list[BeamConversation]
    questions: list[BeamQuestion]
    hashes: dict[str, Any]
    counts: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)


def verify_hashes(data_dir: Path) -> dict[str, Any]:
    """Every file listed in SHA256SUMS against its hash, and SHA256SUMS against `SUMS_SHA256`.

    Raises:
        DataError: a file is missing or differs.
    """
    sums = data_dir / SUMS_FILE
    if not sums.is_file():
        raise DataError(f"{sums} not found")
    actual = sha256_of(sums)
    if actual != SUMS_SHA256:
        raise DataError(f"{SUMS_FILE}: sha256 {actual}, expected {SUMS_SHA256}")
    checked = 0
    for line in sums.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        expected, name = line.split(maxsplit=1)
        path = data_dir / name.strip()
        if not path.is_file():
            raise DataError(f"{path} not found")
        if sha256_of(path) != expected:
            raise DataError(f"{name}: sha256 differs from {SUMS_FILE}")
        checked += 1
    return {SUMS_FILE: {"sha256": actual, "files_verified": checked, "verified": True}}


def parse_anchor(text: str) -> datetime:
    """`March-15-2024` → 2024-03-15 00:00 UTC.

    Raises:
        DataError: the text is not in that form.
    """
    try:
        return datetime.strptime(text.strip(), "%B-%d-%Y").replace(tzinfo=UTC)
    except ValueError as exc:
        raise DataError(f"unrecognised time_anchor {text!r}") from exc


def build_conversation(index: int, number: str, batches: list[dict[str, Any]]) -> BeamConversation:
    """Messages in order; each dated by the last `time_anchor` seen, later ones a second apart."""
    turns: list[Turn] = []
    seen: set[str] = set()
    anchor: datetime | None = None
    previous: datetime | None = None
    for batch in batches:
        for exchange in batch["turns"]:
            for message in exchange:
                if message.get("time_anchor"):
                    found = parse_anchor(message["time_anchor"])
                    if previous is not None and found <= previous:
                        raise DataError(f"{number}: time_anchor {message['time_anchor']} goes back in time")
                    anchor, offset = found, 0
                if anchor is None:
                    raise DataError(f"{number}: a message before the first time_anchor")
                msg_id = str(message["id"])
                if msg_id in seen:
                    raise DataError(f"{number}: duplicate message id {msg_id}")
                seen.add(msg_id)
                at = anchor + timedelta(seconds=offset)
                offset += 1
                previous = at
                turns.append(Turn(msg_id, len(turns), f"{message['role']}: {message['content']}", rfc3339(at), False))
    if not turns or previous is None:
        raise DataError(f"{number}: no messages")
    return BeamConversation(index, number, turns, previous)


def _ids(raw: Any, repair: bool, stats: dict[str, int]) -> list[str]:
    """Message ids of a `source_chat_ids` list; nested lists (a few questions group ids) are
    flattened when `repair`, else dropped."""
    out: list[str] = []
    for item in raw or []:
        if isinstance(item, list):
            if repair:
                stats["flattened_lists"] += 1
                out.extend(str(i) for i in item)
            else:
                stats["dropped_lists"] += 1
        else:
            out.append(str(item))
    return list(dict.fromkeys(out))


def load(
    data_dir: Path,
    limit_conversations: int | None = None,
    limit_questions: int | None = None,
    repair_evidence: bool = False,
    only: str | None = None,
) -> BeamDataset:
    """The conversations (numeric folders, in order) and their scored questions.

    Evidence: a list `source_chat_ids` names the evidence; for knowledge_update the dict's
    `updated_info` does (its `original_info` is kept for current-first). Other dict shapes
    (contradiction_resolution, temporal_reasoning) define no evidence in the README and are not
    scored; nor are questions left without evidence. Ids that name no message are dropped.
    """
    hashes = verify_hashes(data_dir)
    folders = sorted((p for p in data_dir.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name))
    if only is not None:  # one conversation alone (its own vault: a one-project memory)
        folders = [p for p in folders if p.name == only]
    if limit_conversations is not None:
        folders = folders[:limit_conversations]
    conversations: list[BeamConversation] = []
    questions: list[BeamQuestion] = []
    stats = {"flattened_lists": 0, "dropped_lists": 0, "dropped_ids": 0, "unscored_shapes": 0, "no_evidence": 0}
    selected = 0
    by_name = {v: k for k, v in CATEGORIES.items()}
    for index, folder in enumerate(folders):
        conv = build_conversation(index, folder.name, json.loads((folder / CHAT_FILE).read_text(encoding="utf-8")))
        conversations.append(conv)
        known = {t.dia_id for t in conv.turns}
        probing = json.loads((folder / QUESTIONS_FILE).read_text(encoding="utf-8"))
        mine: list[BeamQuestion] = []
        for name, items in probing.items():
            if name not in by_name:
                raise DataError(f"{folder.name}: unknown question category {name!r}")
            for position, item in enumerate(items):
                raw = item.get("source_chat_ids")
                original: list[str] = []
                if isinstance(raw, dict):
                    if name != KNOWLEDGE_UPDATE:
                        stats["unscored_shapes"] += 1
                        continue
                    evidence = _ids(raw.get("updated_info"), repair_evidence, stats)
                    original = _ids(raw.get("original_info"), repair_evidence, stats)
                else:
                    evidence = _ids(raw, repair_evidence, stats)
                kept = [i for i in evidence if i in known]
                stats["dropped_ids"] += len(evidence) - len(kept)
                if not kept:
                    stats["no_evidence"] += 1
                    continue
                mine.append(
                    BeamQuestion(
                        index,
                        folder.name,
                        by_name[name],
                        position,
                        item["question"],
                        tuple(kept),
                        tuple(i for i in original if i in known),
                    )
                )
        if limit_questions is not None:
            mine = mine[:limit_questions]
        selected += len(mine)
        questions.extend(mine)
    counts = {
        "conversations": len(conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "questions_evaluated": selected,
        "knowledge_update": sum(1 for q in questions if CATEGORIES[q.category] == KNOWLEDGE_UPDATE),
        "by_category": {name: sum(1 for q in questions if q.category == number) for number, name in CATEGORIES.items()},
    }
    return BeamDataset(conversations, questions, hashes, counts, stats)
