"""The product side: one vault per run, every turn stored with `note`, questions asked via the service.

Time and ids are pinned so runs are repeatable: node ids come from a seeded generator and the clock
starts the day after the last session of the data and moves 1 ms per reading. Before each question
the clock jumps a day and an hour ahead, so the result lists that `search`/`recall` keep for paging
(retained 24 h, then purged by the product itself) do not pile up over thousands of calls in a few
minutes — each question is asked as if on its own day (`--no-clock-jump` to ask them all at once).
Neither call ranks by the wall clock (recency is by insertion order), so this changes no ranking.
Node id → turn id lives only here, never in the vault.
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.locomo.data import Conversation
from bench.locomo.ingests import note_arguments
from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.factory import open_store

LIMIT = 10
DEPTH = 50


JUMP = timedelta(hours=25)


class StepClock:
    """A clock that starts where it is set and moves 1 ms per reading."""

    def __init__(self, start: datetime):
        self._at = start

    def jump(self, by: timedelta = JUMP) -> None:
        self._at += by

    def __call__(self) -> datetime:
        now = self._at
        self._at = now + timedelta(milliseconds=1)
        return now


def clock_start(conversations: list[Conversation]) -> datetime:
    """The day after the last session of all conversations (memories are stored once it is over)."""
    return max(c.ends_at for c in conversations) + timedelta(days=1)


@dataclass
class Vault:
    service: Service
    clock: StepClock
    dir: Path
    turn_of: dict[str, tuple[str, str]] = field(default_factory=dict)  # node id → (sample_id, dia_id)
    embedder: Any = None  # attached by `embed_all` after ingest (batched), not per write

    def embed_all(self) -> int:
        """Attach the embedder and compute every vector in batches (`kaeru reindex`'s path)."""
        self.service.rt.embedder = self.embedder
        return self.service.reindex()


class CachedEmbedder:
    """An embedder whose vectors are kept in a file of the bench's own (never read by the product),
    keyed by the model's id and the text's hash, so a second run over the same data embeds nothing
    new: LoCoMo and beam-dev with `--semantic` re-run in minutes instead of embedding every turn and
    question again. The vectors are the model's, bit for bit (float32, as the vault stores them)."""

    def __init__(self, inner: Any, path: Path):
        self.inner = inner
        self.model_id: str = inner.model_id
        self.path = path
        self.hits = 0
        self.misses = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # the query's embedding runs on recall's worker thread
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model_id}\x1f{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [self._key(t) for t in texts]
        found: dict[str, list[float]] = {}
        for key in dict.fromkeys(keys):
            row = self._db.execute("SELECT vector FROM vectors WHERE key = ?", (key,)).fetchone()
            if row is not None:
                found[key] = list(struct.unpack(f"<{len(row[0]) // 4}f", row[0]))
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            vectors = self.inner.embed([texts[i] for i in missing])
            with self._db:
                for i, vector in zip(missing, vectors, strict=True):
                    blob = struct.pack(f"<{len(vector)}f", *vector)
                    found[keys[i]] = list(struct.unpack(f"<{len(vector)}f", blob))
                    self._db.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?)", (keys[i], blob))
        return [found[k] for k in keys]


@contextmanager
def open_vault(
    vault_dir: Path,
    seed: int,
    start: datetime,
    semantic: bool = False,
    database_url: str | None = None,
    embedding_cache: Path | None = None,
) -> Iterator[Vault]:
    """The run's vault: SQLite in `vault_dir`, or the PostgreSQL database at `database_url`."""
    env = {"KAERU_VAULT": str(vault_dir), **({"KAERU_DATABASE_URL": database_url} if database_url else {})}
    settings = Settings.from_env(env)
    store = open_store(settings)
    clock = StepClock(start)
    rng = random.Random(seed)
    embedder: Any = None
    if semantic:
        from kaeru.semantic import MiniLMEmbedder, available

        if not available():
            raise SystemExit("--semantic needs the [semantic] extra (torch==2.13.0, then pip install -e '.[semantic]')")
        embedder = MiniLMEmbedder()
        if embedding_cache is not None:
            embedder = CachedEmbedder(embedder, embedding_cache)
    try:
        # Ingest without the embedder (each write would embed alone, ~0.1 s a turn); `embed_all`
        # computes the vectors in batches afterwards.
        yield Vault(Service(store, settings, clock=clock, entropy=rng.randbytes), clock, vault_dir, embedder=embedder)
    finally:
        store.close()


@dataclass
class IngestResult:
    notes: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    scopes: dict[str, int] = field(default_factory=dict)  # initiative → notes written there


def ingest(vault: Vault, conv: Conversation, result: IngestResult, style: str = "harness") -> None:
    """Store every turn of `conv` as one observation in the initiative `locomo-<sample_id>`, written
    as the ingest `style` says (bench/locomo/ingests.py)."""
    t0 = time.perf_counter()
    for turn in conv.turns:
        try:
            outcome, _ = vault.service.note(parse("note", {**note_arguments(conv, turn, style), "kind": "observation"}))
        except KaeruError as exc:
            result.failed.append({"turn": f"{conv.sample_id}/{turn.dia_id}", "error": type(exc).__name__})
            continue
        assert outcome.primary is not None
        vault.turn_of[outcome.primary.id] = (conv.sample_id, turn.dia_id)
        result.notes += 1
        result.scopes[conv.initiative] = result.scopes.get(conv.initiative, 0) + 1
    result.seconds += time.perf_counter() - t0


# --- systems ------------------------------------------------------------------------------------


def recall_available(service: Service) -> bool:
    return hasattr(service, "recall")


def recall_channels(service: Service) -> list[str]:
    channels = getattr(service, "recall_channels", None)
    return list(channels()) if callable(channels) else []


def recall_call(disabled: frozenset[str]) -> Callable[[Service, Conversation, str], Any]:
    def call(service: Service, conv: Conversation, question: str) -> Any:
        return service.recall(  # type: ignore[attr-defined]
            parse("recall", {"query": question, "initiatives": [conv.initiative], "limit": LIMIT}), disabled=disabled
        )

    return call


def search_call(service: Service, conv: Conversation, question: str) -> Any:
    return service.search(
        parse("search", {"initiatives": [conv.initiative], "text": question, "limit": LIMIT, "match": "any"})
    )


@dataclass
class Ranked:
    turns: list[str]
    elapsed_ns: int
    foreign: int  # hits that are not turns of this conversation (should stay 0)
    channels: tuple[str, ...] | None  # the channels of recall's plan, when it reports one
    cpu_ns: int = 0  # the calling thread's CPU time: steady when the machine is busy, unlike elapsed


def plan_channels(outcome: Any) -> tuple[str, ...] | None:
    plan = getattr(outcome, "plan", None)
    channels = getattr(plan, "channels", None)
    if channels is None:
        return None
    return tuple(getattr(c, "name", str(c)) for c in channels)


def ask(vault: Vault, call: Callable[[Service, Conversation, str], Any], conv: Conversation, question: str) -> Ranked:
    """One timed call; its hits mapped to turn ids (first occurrence kept, at most DEPTH)."""
    t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    outcome = call(vault.service, conv, question)
    elapsed, cpu = time.perf_counter_ns() - t0, time.thread_time_ns() - c0
    turns: list[str] = []
    foreign = 0
    for hit in outcome.hits:
        sample_id, dia_id = vault.turn_of.get(hit.node.id, ("", ""))
        if sample_id != conv.sample_id:
            foreign += 1
        elif dia_id not in turns:
            turns.append(dia_id)
    return Ranked(turns[:DEPTH], elapsed, foreign, plan_channels(outcome), cpu)
