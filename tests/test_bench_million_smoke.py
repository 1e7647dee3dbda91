"""bench.million builds, measures and drops a vault at a smoke size (and bench.notecost measures notes on
it); bench.peers' workload words.

Only completion and the report's shape are checked: benchmarks are never timed assertions. The peers
harness itself needs npm and the official server, so only its pure parts run here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import million, notecost, peers


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_million_builds_measures_and_drops_a_small_vault(tmp_path: Path) -> None:
    million.main(["build", "--size", "300", "--workdir", str(tmp_path)])
    (vault,) = tmp_path.glob("kaeru-bench-sqlite-300-*")
    meta = json.loads((vault / million.META).read_text())
    assert meta["size"] == 300 and meta["backend"] == "sqlite" and meta["bytes"] > 0
    assert meta["read_ids"] and len(set(meta["read_ids"])) == len(meta["read_ids"])

    # `finish` (for a build stopped early) rewrites the same description from the vault itself.
    million.main(["finish", "--vault", str(vault), "--size", "300", "--seconds", "1"])
    again = json.loads((vault / million.META).read_text())
    assert again["built"] == 300 and sorted(again["read_ids"]) == sorted(meta["read_ids"])

    out = tmp_path / "m.json"
    million.main(["measure", "--vault", str(vault), "--ops", "3", "--warmup", "1", "--out", str(out)])
    report = json.loads(out.read_text())
    assert set(report["ops"]) == set(million.OPS)
    assert all({"p50", "p95", "cpu_p50", "cpu_p95"} <= set(row) for row in report["ops"].values())

    # `bench.notecost` on the same vault: both kinds of note, wall and client CPU (no server on SQLite).
    for kind in ("long", "short"):
        figures = notecost.measure(vault, 3, kind)
        assert set(figures) == {"wall", "client"} and all(row["p95"] >= row["p50"] for row in figures.values())

    million.main(["drop", "--vault", str(vault)])
    assert not vault.exists()


def test_a_partial_build_searches_only_words_planted_in_what_was_built() -> None:
    from bench.corpus import CorpusBuilder

    corpus = CorpusBuilder(4000)
    words = million._selective(corpus, 1500)
    assert words and set(words) <= set(corpus.corpus.selective)
    for word in words:
        assert sum(word in planted for index, planted in corpus._planted.items() if index < 1500) >= 3
    assert million._selective(corpus, 4000) == list(corpus.corpus.selective)


def test_peer_markers_are_unique_and_none_contains_another() -> None:
    words = [peers.marker(i) for i in range(26**3)]
    assert len(set(words)) == len(words)
    assert len({len(w) for w in words}) == 1  # same length: a substring search finds exactly one


def test_peer_memories_hold_their_marker_and_are_short() -> None:
    texts = peers.Texts(7)
    for i in (0, 1, 4999):
        text = texts.memory(i)
        assert peers.marker(i) in text.lower().rstrip(".").split()
        assert len(text) < 400
