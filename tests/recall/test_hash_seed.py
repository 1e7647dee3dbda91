"""The same vault and query give the same scores in every process: nothing in recall's arithmetic may
follow the order in which a `set` of words iterates, which changes with Python's hash seed (a sum's
last bit follows its order; a tie then breaks one way in one process and the other way in the next)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.sqlite.store import SqliteStore

QUERY = "harbour crane ferry timetable lantern breakwater tide gauge"

SCRIPT = """
import json, sys
from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.sqlite.store import SqliteStore
settings = Settings.from_env({"KAERU_VAULT": sys.argv[1]})
store = SqliteStore(settings.sqlite_path)
try:
    answer = Service(store, settings).recall(
        parse("recall", {"initiatives": ["seed"], "query": sys.argv[2], "explain": True, "limit": 20})
    )
    print(json.dumps([[h.node.id, answer.explain.get(h.node.id)] for h in answer.hits]))
finally:
    store.close()
"""


def test_recall_scores_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    settings = Settings.from_env({"KAERU_VAULT": str(tmp_path / "vault")})
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    words = QUERY.split()
    try:
        for i in range(24):  # notes holding different subsets of the query's words, some side by side
            picked = [w for j, w in enumerate(words) if (i >> (j % 5)) & 1 or j == i % len(words)]
            filler = " ".join(f"word{i}x{k}" for k in range(i % 7))
            text = f"{' '.join(picked)} {filler} the {words[i % len(words)]} log entry {i}"
            service.note(parse("note", {"initiative": "seed", "text": text}))
    finally:
        store.close()
    answers = []
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(tmp_path / "vault"), QUERY],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        answers.append(json.loads(done.stdout))
    assert answers[0], "the query found nothing: the test checks nothing"
    assert all(a == answers[0] for a in answers[1:])
