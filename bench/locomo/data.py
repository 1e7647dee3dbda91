"""Loading LoCoMo: turns, the questions of categories 1–4, and their corrected evidence.

The data is vendored in bench/data/locomo (evaluation only, CC BY-NC 4.0; never packaged).

How `errors.json` maps onto `locomo10.json` (verified on load, not assumed):
`question_id` is `locomo_<c>_qa<q>`, where `c` is the 0-based position of the conversation in the
file (0 = `conv-26`, …, 9 = `conv-50`; *not* the `sample_id`) and `q` is the 0-based position of the
question in that conversation's `qa` list, counting every category (5 included). Corrections are
matched by conversation and question text; the index disambiguates the few repeated questions and
must agree with the text match, and the entry's `cited_evidence` must equal the dataset's `evidence`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

DATASET_FILE = "locomo10.json"
ERRORS_FILE = "errors.json"

#: The published hashes (also in the data README, which is checked against these when present).
KNOWN_SHA256 = {
    DATASET_FILE: "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
    ERRORS_FILE: "f298ef46263fada20688a1d672be37d4f488c6da3b19343eea55ae5c1b5fe55e",
}

#: The usual reading of the numeric codes in the released file (category 5 = adversarial, not used).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

WRONG_CITATION = "WRONG_CITATION"

_MONTHS = {
    name: number
    for number, name in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}
_SESSION_TIME = re.compile(r"(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.IGNORECASE)
_QUESTION_ID = re.compile(r"locomo_(\d+)_qa(\d+)")
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")


class DataError(Exception):
    """The data is missing, altered, or not shaped as expected (the message says how)."""


@dataclass(frozen=True)
class Turn:
    dia_id: str
    order: int  # position in the conversation, 0-based
    text: str  # exactly what is stored as the note's text
    occurred_at: str  # RFC 3339, UTC
    has_image: bool
    speaker: str = ""
    session: int = 0  # 1-based session number
    session_at: str = ""  # the session's date_time as RFC 3339 (UTC), the same for all its turns
    session_label: str = ""  # the session's date_time as the data writes it (`1:56 pm on 8 May, 2023`)


@dataclass
class Conversation:
    index: int  # position in the file
    sample_id: str
    turns: list[Turn]
    ends_at: datetime  # the last session's start

    @property
    def initiative(self) -> str:
        return f"locomo-{self.sample_id}"


@dataclass(frozen=True)
class Question:
    conv_index: int
    qa_index: int
    sample_id: str
    category: int
    text: str
    evidence: tuple[str, ...]  # corrected, repaired, existing turns only; may be empty
    corrected: bool

    @property
    def key(self) -> str:
        return f"{self.sample_id}#{self.qa_index}"


@dataclass
class Dataset:
    conversations: list[Conversation]
    questions: list[Question]
    hashes: dict[str, dict[str, Any]]
    counts: dict[str, Any] = field(default_factory=dict)
    corrections: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def readme_hashes(data_dir: Path) -> dict[str, str]:
    """`file → sha256` as written in the data README (`- \\`name\\` … SHA-256 \\`hex\\``)."""
    readme = data_dir / "README.md"
    if not readme.is_file():
        return {}
    text = readme.read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for match in re.finditer(r"^- `([^`]+)`(.*?)(?=^- |^\S|\Z)", text, re.MULTILINE | re.DOTALL):
        sha = re.search(r"SHA-256\s+`([0-9a-f]{64})`", match.group(2))
        if sha:
            out[match.group(1)] = sha.group(1)
    return out


def verify_hashes(data_dir: Path) -> dict[str, dict[str, Any]]:
    """Each file's sha256 against the README's value (and the known one).

    Raises:
        DataError: a file is missing or its hash differs.
    """
    documented = readme_hashes(data_dir)
    out: dict[str, dict[str, Any]] = {}
    for name, known in KNOWN_SHA256.items():
        path = data_dir / name
        if not path.is_file():
            raise DataError(f"{path} not found")
        expected = documented.get(name, known)
        actual = sha256_of(path)
        if actual != expected or expected != known:
            raise DataError(f"{name}: sha256 {actual}, README says {documented.get(name)}, expected {known}")
        out[name] = {"sha256": actual, "readme_sha256": documented.get(name), "verified": True}
    return out


def parse_session_time(text: str) -> datetime:
    """`1:56 pm on 8 May, 2023` → 2023-05-08 13:56 UTC (the dataset gives no time zone).

    Raises:
        DataError: the text is not in that form.
    """
    m = _SESSION_TIME.fullmatch(text.strip())
    if not m or m.group(5).lower() not in _MONTHS:
        raise DataError(f"unrecognised session date_time {text!r}")
    hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "pm" else 0)
    return datetime(int(m.group(6)), _MONTHS[m.group(5).lower()], int(m.group(4)), hour, int(m.group(2)), tzinfo=UTC)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" [image: {caption}]"
    return text


def build_conversation(index: int, sample: dict[str, Any]) -> Conversation:
    conv = sample["conversation"]
    turns: list[Turn] = []
    seen: set[str] = set()
    ends_at: datetime | None = None
    number = 1
    while isinstance(conv.get(f"session_{number}"), list):
        start = parse_session_time(conv[f"session_{number}_date_time"])
        if ends_at is not None and start <= ends_at:
            raise DataError(f"{sample['sample_id']}: session {number} does not start after the previous one")
        ends_at = start
        for i, raw in enumerate(conv[f"session_{number}"]):
            dia_id = raw["dia_id"]
            if dia_id in seen:
                raise DataError(f"{sample['sample_id']}: duplicate turn id {dia_id}")
            seen.add(dia_id)
            # Later turns of a session get later seconds, so time order is dialogue order.
            turns.append(
                Turn(
                    dia_id,
                    len(turns),
                    turn_text(raw),
                    rfc3339(start + timedelta(seconds=i)),
                    bool(raw.get("blip_caption")),
                    str(raw["speaker"]),
                    number,
                    rfc3339(start),
                    str(conv[f"session_{number}_date_time"]).strip(),
                )
            )
        number += 1
    if ends_at is None:
        raise DataError(f"{sample['sample_id']}: no sessions")
    return Conversation(index, sample["sample_id"], turns, ends_at)


def _split_evidence(raw: str, repair: bool) -> list[str]:
    """One evidence string → turn ids; with `repair`, fix the malformed forms seen in the data.

    `D8:6; D9:17` and `D9:1 D4:4 D4:6` (several ids in one string), `D:11:26` (stray colon) and
    `D30:05` (zero-padded) name existing turns; anything else is kept as is (and later dropped).
    """
    if not repair:
        return [raw]
    out: list[str] = []
    for piece in re.split(r"[;,\s]+", raw.strip()):
        if not piece:
            continue
        m = _EVIDENCE_ID.fullmatch(piece)
        out.append(f"D{int(m.group(1))}:{int(m.group(2))}" if m else piece)
    return out


def match_corrections(
    raw: list[dict[str, Any]], errors: list[dict[str, Any]]
) -> tuple[dict[tuple[int, int], list[str]], dict[str, Any]]:
    """`(conversation index, qa index) → correct_evidence` for the WRONG_CITATION entries, with checks.

    Raises:
        DataError: an entry cannot be matched unambiguously, or disagrees with the dataset.
    """
    by_type = Counter(e["error_type"] for e in errors)
    out: dict[tuple[int, int], list[str]] = {}
    agree_index = agree_cited = 0
    for entry in errors:
        if entry["error_type"] != WRONG_CITATION:
            continue
        m = _QUESTION_ID.fullmatch(entry["question_id"])
        if not m:
            raise DataError(f"unexpected question_id {entry['question_id']!r}")
        conv_index, qa_index = int(m.group(1)), int(m.group(2))
        if conv_index >= len(raw):
            raise DataError(f"{entry['question_id']}: no conversation {conv_index}")
        qa = raw[conv_index]["qa"]
        same_text = [j for j, q in enumerate(qa) if q["question"] == entry["question"]]
        if len(same_text) == 1:
            j = same_text[0]
        elif qa_index in same_text:
            j = qa_index  # a question asked twice in one conversation: the index picks which
        else:
            raise DataError(f"{entry['question_id']}: question text matches {len(same_text)} questions")
        agree_index += j == qa_index
        if qa[j]["evidence"] != entry["cited_evidence"] or qa[j]["category"] != entry["category"]:
            raise DataError(f"{entry['question_id']}: cited_evidence/category differ from the dataset")
        agree_cited += 1
        out[(conv_index, j)] = list(entry["correct_evidence"])
    if agree_index != len(out):
        raise DataError(f"only {agree_index} of {len(out)} corrections agree with their question_id index")
    report = {
        "errors_entries": len(errors),
        "errors_by_type": dict(sorted(by_type.items())),
        "wrong_citation_entries": by_type.get(WRONG_CITATION, 0),
        "matched_by_text": len(out),
        "agree_with_question_id_index": agree_index,
        "cited_evidence_matches_dataset": agree_cited,
        "question_id_mapping": "locomo_<c>_qa<q>: c = 0-based conversation position in locomo10.json, "
        "q = 0-based position in its qa list (all categories)",
        "other_types_not_applied": sum(
            1 for e in errors if e["error_type"] != WRONG_CITATION and e["cited_evidence"] != e["correct_evidence"]
        ),
    }
    return out, report


def load(
    data_dir: Path,
    *,
    limit_conversations: int | None = None,
    limit_questions: int | None = None,
    repair_evidence: bool = True,
) -> Dataset:
    """Read, verify and prepare the data.

    `limit_questions` keeps the first N questions of categories 1–4 of each conversation.

    Raises:
        DataError: missing or altered files, or unexpected shapes.
    """
    hashes = verify_hashes(data_dir)
    raw = json.loads((data_dir / DATASET_FILE).read_text(encoding="utf-8"))
    errors = json.loads((data_dir / ERRORS_FILE).read_text(encoding="utf-8"))
    selected = raw[:limit_conversations] if limit_conversations is not None else raw
    conversations = [build_conversation(i, sample) for i, sample in enumerate(selected)]
    # Corrections are matched against the whole file so the count is checked even on a slice.
    corrections, correction_report = match_corrections(raw, errors)
    all_category_counts = Counter(q["category"] for sample in raw for q in sample["qa"])

    questions: list[Question] = []
    applied = 0
    repaired_ids = repaired_questions = 0
    dropped: list[dict[str, Any]] = []
    for conv in conversations:
        turn_ids = {t.dia_id for t in conv.turns}
        kept = 0
        for j, qa in enumerate(raw[conv.index]["qa"]):
            if qa["category"] not in CATEGORIES:
                continue
            if limit_questions is not None and kept >= limit_questions:
                break
            kept += 1
            cited = corrections.get((conv.index, j))
            source = cited if cited is not None else list(qa["evidence"])
            applied += cited is not None
            evidence: list[str] = []
            changed = False
            for item in source:
                pieces = _split_evidence(item, repair_evidence)
                if pieces != [item]:
                    changed = True
                    repaired_ids += 1
                for piece in pieces:
                    if piece not in turn_ids:
                        dropped.append({"question": f"{conv.sample_id}#{j}", "evidence": piece})
                    elif piece not in evidence:
                        evidence.append(piece)
            repaired_questions += changed
            questions.append(
                Question(
                    conv.index, j, conv.sample_id, qa["category"], qa["question"], tuple(evidence), cited is not None
                )
            )

    in_slice_corrections = sum(
        1 for (c, j) in corrections if c < len(conversations) and raw[c]["qa"][j]["category"] in CATEGORIES
    )
    correction_report = {
        **correction_report,
        "applied": applied,
        "applicable_in_loaded_conversations": in_slice_corrections,
    }
    evaluated = [q for q in questions if q.evidence]
    counts = {
        "conversations": len(conversations),
        "conversations_in_file": len(raw),
        "turns": sum(len(c.turns) for c in conversations),
        "turns_with_image_caption": sum(t.has_image for c in conversations for t in c.turns),
        "questions_in_file_by_category": {str(k): v for k, v in sorted(all_category_counts.items())},
        "questions_selected": len(questions),
        "questions_selected_by_category": _by_category(questions),
        "questions_without_evidence": len(questions) - len(evaluated),
        "questions_evaluated": len(evaluated),
        "questions_evaluated_by_category": _by_category(evaluated),
        "evidence_turns_evaluated": sum(len(q.evidence) for q in evaluated),
    }
    evidence_report = {
        "repair": repair_evidence,
        "repaired_strings": repaired_ids,
        "repaired_questions": repaired_questions,
        "dropped_ids": len(dropped),
        "dropped": dropped,
        "questions_left_without_evidence": [q.key for q in questions if not q.evidence],
    }
    return Dataset(conversations, questions, hashes, counts, correction_report, evidence_report)


def _by_category(questions: list[Question]) -> dict[str, int]:
    counts = Counter(q.category for q in questions)
    return {str(k): counts.get(k, 0) for k in CATEGORIES}
