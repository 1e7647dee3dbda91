"""Semantic recall's candidates by code, rescored exactly (decision 17.X1).

On SQLite, `nearest_vectors` finds candidates by the Hamming distance of one-bit-a-dimension codes
(`vector_codes`, migration 017) and ranks the live members of the scope among them by their exact
cosine similarity, asking for more candidates when the scope holds too few of them. PostgreSQL
keeps its exact scan. Both must give the exact ranking whenever the near vectors stand out (as a
sentence model's do), with scope filters and forgotten nodes, whatever the candidates' count; the
codes follow every vector write; a vault works without the sqlite-vec extension.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from pathlib import Path

import apsw
import pytest

from kaeru.api.requests import parse
from kaeru.domain.text import tokens
from kaeru.service import Service
from kaeru.service.embedding import pack
from kaeru.storage.base import Store
from kaeru.storage.migrate import load_migrations
from kaeru.storage.sql import codes
from kaeru.storage.sqlite import vectors as sqlite_vectors
from kaeru.storage.sqlite.session import SqliteSession
from kaeru.storage.sqlite.store import SqliteStore
from tests.backends import VaultSpec

MODEL = "random-test"
DIMS = 384
TOL = 1e-5


def unit(values: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def as_float32(vector: list[float]) -> list[float]:
    import struct

    return list(struct.unpack(f"<{len(vector)}f", pack(vector)))


def near(rng: random.Random, query: list[float], cosine: float) -> list[float]:
    """A unit vector whose cosine similarity with the unit vector `query` is `cosine`."""
    noise = [rng.gauss(0.0, 1.0) for _ in query]
    along = sum(n * q for n, q in zip(noise, query, strict=True))
    orthogonal = unit([n - along * q for n, q in zip(noise, query, strict=True)])
    side = math.sqrt(1.0 - cosine * cosine)
    return [cosine * q + side * o for q, o in zip(query, orthogonal, strict=True)]


@pytest.fixture
def nodes(service: Service) -> dict[str, list[str]]:
    """Two hundred notes in `a` (two of them forgotten), sixty in `b`."""
    made: dict[str, list[str]] = {"a": [], "b": []}
    for initiative, count in (("a", 200), ("b", 60)):
        for i in range(count):
            out, _ = service.note(parse("note", {"initiative": initiative, "text": f"note {initiative} {i}"}))
            assert out.primary is not None
            made[initiative].append(out.primary.id)
    for gone in made["a"][:2]:
        service.forget(parse("forget", {"initiative": "a", "node": {"id": gone}, "reason": "test"}))
    return made


@pytest.fixture
def few_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Candidates a small share of the vectors, as at 100k nodes (1,000 of 100,000)."""
    monkeypatch.setattr(codes, "OVERSAMPLE", 1)
    monkeypatch.setattr(codes, "MIN_CANDIDATES", 8)


def exact_ranking(
    stored: dict[str, list[float]], query: list[float], members: list[str], k: int
) -> list[tuple[str, float]]:
    sims = {n: sum(p * q for p, q in zip(stored[n], query, strict=True)) for n in members}
    return [(n, sims[n]) for n in sorted(sims, key=lambda n: (-sims[n], n))[:k]]


def store_vectors(store: Store, stored: dict[str, list[float]]) -> None:
    with store.write() as session:
        for node_id, vector in stored.items():
            session.put_vector(node_id, MODEL, "digest", pack(vector))


@pytest.mark.usefixtures("few_candidates")
@pytest.mark.parametrize("seed", range(6))
def test_near_vectors_rank_exactly_with_few_candidates(store: Store, nodes: dict[str, list[str]], seed: int) -> None:
    """Random background, a few memories near the query in the scope, nearer decoys outside it and
    among the forgotten: the top k is the exact one, in scope, with exact similarities."""
    rng = random.Random(seed)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    everyone = [n for ids in nodes.values() for n in ids]
    stored = {n: unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)]) for n in everyone}
    scope_name = ["a", "b", "ab"][seed % 3]
    in_scope = [n for name in scope_name for n in nodes[name] if n not in nodes["a"][:2]]
    outside = [n for n in everyone if n not in in_scope]
    planted = rng.sample(in_scope, 10)
    for i, node_id in enumerate(planted):
        stored[node_id] = near(rng, query, 0.45 + 0.05 * i)
    for node_id in rng.sample(outside, min(4, len(outside))):
        stored[node_id] = near(rng, query, 0.97)  # nearer than any in scope, and not to be returned
    stored = {n: as_float32(v) for n, v in stored.items()}
    store_vectors(store, stored)
    statements: list[str] = []
    with store.read() as session:
        if store.backend == "sqlite":  # which statements ran: candidates by code, not the exact scan
            session._db._c.exec_trace = lambda _cursor, sql, _bindings: statements.append(sql) or True  # type: ignore[attr-defined]
        scope_ids = [session.initiative_by_name(name).id for name in scope_name]  # type: ignore[union-attr]
        found = session.nearest_vectors(scope_ids, MODEL, pack(query), 10)
        wider = session.nearest_vectors(scope_ids, MODEL, pack(query), 30)
    if store.backend == "sqlite":
        assert any("vector_codes" in sql for sql in statements)
        assert not any("FROM node_vectors v CROSS JOIN" in sql for sql in statements), "no exact scan"
    else:  # PostgreSQL's candidates come from the same codes, held by the store (no exact scan)
        assert store.vector_codes.loads == 1  # type: ignore[attr-defined]
    want = exact_ranking(stored, query, in_scope, 10)
    assert [n for n, _ in found] == [n for n, _ in want]
    assert [s for _, s in found] == pytest.approx([s for _, s in want], abs=TOL)
    assert {n for n, _ in found} == set(planted)
    # Past the near ones, the background: still live members of the scope, exact, best first.
    assert len(wider) == 30
    assert [n for n, _ in wider[:10]] == [n for n, _ in want]
    sims = {n: sum(p * q for p, q in zip(stored[n], query, strict=True)) for n in in_scope}
    for node_id, sim in wider:
        assert sim == pytest.approx(sims[node_id], abs=TOL)
    assert [s for _, s in wider] == sorted((s for _, s in wider), reverse=True)


@pytest.mark.usefixtures("few_candidates")
def test_a_scope_the_candidates_miss_is_still_answered_in_full(store: Store, nodes: dict[str, list[str]]) -> None:
    """Every candidate of the first rounds lies outside the scope: the answer is the exact scan's."""
    rng = random.Random(41)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    stored = {n: as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])) for n in nodes["b"]}
    for node_id in nodes["a"]:
        stored[node_id] = as_float32(near(rng, query, 0.9))
    store_vectors(store, stored)
    with store.read() as session:
        scope = [session.initiative_by_name("b").id]  # type: ignore[union-attr]
        found = session.nearest_vectors(scope, MODEL, pack(query), 100)
    want = exact_ranking(stored, query, nodes["b"], 100)
    assert len(found) == len(nodes["b"]) == len(want), "a scope smaller than k gives all of it"
    assert {n for n, _ in found} == set(nodes["b"])
    assert [s for _, s in found] == pytest.approx([s for _, s in want], abs=TOL)


def test_the_python_stand_ins_compute_what_sqlite_vec_does() -> None:
    rng = random.Random(5)
    codes = [
        (sqlite_vectors.quantize(pack(unit([rng.gauss(0, 1) for _ in range(d)]))), d)
        for d in (1, 3, 8, 16, 384, 768)
        for _ in range(2)
    ]
    pairs = [(a, b) for (a, da), (b, db) in zip(codes[::2], codes[1::2], strict=True) if da == db]
    stand_in = apsw.Connection(":memory:")
    assert sqlite_vectors.install(stand_in, native=False) is False
    sql = "SELECT vec_distance_hamming(vec_bit(?), vec_bit(?))"
    got = [next(stand_in.execute(sql, pair))[0] for pair in pairs]
    assert got == [float(sqlite_vectors.hamming(a, b)) for a, b in pairs]
    if not sqlite_vectors.native_available():
        pytest.skip("sqlite-vec (the [semantic] extra) is not installed")
    native = apsw.Connection(":memory:")
    assert sqlite_vectors.install(native) is True
    assert [next(native.execute(sql, pair))[0] for pair in pairs] == got


def test_a_code_is_the_vectors_sign_bits() -> None:
    values = [0.5, -0.25, 0.0, -0.0, 1e-40, -3.0, 2.0, 7.0, -1.0, 0.125]
    code = sqlite_vectors.quantize(pack(values))
    # Sign bit clear → 1, most significant first, padded with clear bits: 1010 1011 | 0100 0000.
    assert code == bytes([0b10101011, 0b01000000])
    assert sqlite_vectors.quantize(b"") == b""


class WordEmbedder:
    """A vector per text from its words (a word → a fixed random direction), deterministic."""

    model_id = "test-words"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            total = [0.0] * 32
            for token in tokens(text):
                rng = random.Random(token)
                total = [t + rng.gauss(0.0, 1.0) for t in total]
            out.append(unit(total) if any(total) else unit([1.0] * 32))
        return out


def codes_match_vectors(store: Store) -> int:
    with store.read() as session:
        rows = session._db.rows(  # type: ignore[attr-defined]
            "SELECT v.vector, c.code, c.model = v.model FROM node_vectors v LEFT JOIN vector_codes c ON c.id = v.id"
        )
        (codes,) = session._db.one("SELECT count(*) FROM vector_codes")  # type: ignore[attr-defined,misc]
    assert codes == len(rows), "one code per stored vector"
    for vector, code, same_model in rows:
        assert code == sqlite_vectors.quantize(bytes(vector)) and same_model
    return len(rows)


def test_the_index_follows_notes_revisions_merges_forgets_and_reindexing(store: Store, vault: VaultSpec) -> None:
    semantic = Service(store, vault.settings(), embedder=WordEmbedder())

    def top(query: str, scope: str = "s") -> list[str]:
        found = semantic.recall(
            parse("recall", {"initiatives": [scope], "query": query}), disabled=frozenset({"lexical"})
        )
        return [h.node.id for h in found.hits]

    made = {}
    for text in ("amber lighthouse keeper", "cobalt glacier survey", "saffron market stall", "amber cobalt"):
        out, _ = semantic.note(parse("note", {"initiative": "s", "text": text}))
        assert out.primary is not None
        made[text] = out.primary.id
    assert top("saffron market stall")[0] == made["saffron market stall"]
    semantic.revise(
        parse("revise", {"initiative": "s", "node": made["saffron market stall"], "patch": {"body": "violet orchard"}})
    )
    assert top("violet orchard")[0] == made["saffron market stall"], "a revision's new vector is the one ranked"
    semantic.forget(parse("forget", {"initiative": "s", "node": {"id": made["cobalt glacier survey"]}, "reason": "t"}))
    assert made["cobalt glacier survey"] not in top("cobalt glacier survey"), "a forgotten memory is not returned"
    other, _ = semantic.note(parse("note", {"initiative": "t", "text": "indigo canyon trail"}))
    assert other.primary is not None
    semantic.initiative(parse("initiative", {"initiative": "t", "action": "merge", "to": "s"}))
    assert top("indigo canyon trail")[0] == other.primary.id, "a merged initiative's memories are in scope"
    plain = Service(store, vault.settings())
    later, _ = plain.note(parse("note", {"initiative": "s", "text": "scarlet harbour crane"}))
    assert later.primary is not None
    assert top("crane scarlet harbour")[:1] != [later.primary.id], "no vector yet"
    assert semantic.reindex() >= 1
    assert top("crane scarlet harbour")[0] == later.primary.id, "reindexing writes vector and code together"
    if vault.backend == "sqlite":
        assert codes_match_vectors(store) >= 6


def test_a_vault_works_without_the_extension(tmp_path: Path) -> None:
    """No `vec0` table, nothing in the schema that needs sqlite-vec: a bare SQLite connection checks,
    reads and backs up a vault with vectors, and one with the Python stand-ins ranks them as the
    store (sqlite-vec, where installed) does."""
    path = tmp_path / "vault.sqlite3"
    store = SqliteStore(path)
    try:
        semantic = Service(store, VaultSpec("sqlite", tmp_path).settings(), embedder=WordEmbedder())
        for i in range(40):
            semantic.note(parse("note", {"initiative": "s", "text": f"amber {i} cobalt {i % 7} saffron {i % 3}"}))
        query = pack(WordEmbedder().embed(["amber cobalt 3"])[0])
        with store.read() as session:
            scope = [session.initiative_by_name("s").id]  # type: ignore[union-attr]
            ranked = session.nearest_vectors(scope, WordEmbedder.model_id, query, 10)
    finally:
        store.close()
    bare = apsw.Connection(str(path))
    assert list(bare.execute("PRAGMA integrity_check")) == [("ok",)]
    schema = " ".join(r[0] or "" for r in bare.execute("SELECT sql FROM sqlite_schema"))
    assert "vec0" not in schema and "vec_" not in schema, "FTS5 is built in; nothing of sqlite-vec"
    for (table,) in list(bare.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")):
        list(bare.execute(f'SELECT * FROM "{table}"'))
    copy = apsw.Connection(str(tmp_path / "copy.sqlite3"))
    with copy.backup("main", bare, "main") as backup:
        backup.step()
    assert list(copy.execute("SELECT count(*) FROM vector_codes")) == [(40,)]
    stand_in = apsw.Connection(str(path))
    assert sqlite_vectors.install(stand_in, native=False) is False
    list(stand_in.execute("BEGIN"))
    again = SqliteSession(stand_in).nearest_vectors(scope, WordEmbedder.model_id, query, 10)
    assert [n for n, _ in again] == [n for n, _ in ranked]
    assert [s for _, s in again] == pytest.approx([s for _, s in ranked], abs=TOL)


def _vault_at(path: Path, version: int, after: int = 0) -> apsw.Connection:
    """A bare connection (no extension, no stand-ins) that ran the migrations after `after` up to `version`."""
    conn = apsw.Connection(str(path))
    list(
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at TEXT NOT NULL DEFAULT 'x')"
        )
    )
    for migration in load_migrations("kaeru.storage.sqlite.migrations"):
        if migration.version <= after:
            continue
        if migration.version > version:
            break
        list(conn.execute("BEGIN"))
        migration.apply(conn, lambda sql: list(conn.execute(sql)))
        list(
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (migration.version, migration.name)
            )
        )
        list(conn.execute("COMMIT"))
    return conn


def test_migration_017_keeps_every_vector_and_codes_it(tmp_path: Path) -> None:
    """Run by a bare connection (no sqlite-vec), on vectors of two models and awkward values."""
    path = tmp_path / "vault.sqlite3"
    conn = _vault_at(path, 16)
    rng = random.Random(17)
    special = [0.0, -0.0, 1.4e-45, -1.4e-45, 3.4028234e38, -1.5, 2.0**-20, 1.0]
    rows = {(f"n{i:04d}", model): pack([rng.uniform(-1, 1) for _ in range(384)]) for i in range(300) for model in "mx"}
    rows[("n9999", "m")] = pack(special)
    conn.executemany(
        "INSERT INTO node_vectors (node_id, model, text_sha, vector) VALUES (?, ?, 'd', ?)",
        [(n, m, v) for (n, m), v in rows.items()],
    )
    conn.close()
    _vault_at(path, 17, after=16).close()
    store = SqliteStore(path)
    try:
        with store.read() as session:
            kept = {
                (r[0], r[1]): bytes(r[2])
                for r in session._db.rows("SELECT node_id, model, vector FROM node_vectors")  # type: ignore[attr-defined]
            }
        assert kept == rows, "every vector kept, bit for bit"
        assert codes_match_vectors(store) == len(rows)
        with store.write() as session:
            session.put_vector("n0001", "m", "e", pack(special))
            session.put_vector("n5000", "m", "e", pack(special))
        assert codes_match_vectors(store) == len(rows) + 1, "an update keeps its row, a new vector adds one"
    finally:
        store.close()


def test_candidates_from_another_snapshot_keep_only_what_this_one_holds(
    store: Store, service: Service, nodes: dict[str, list[str]]
) -> None:
    """The first round computed on another thread's snapshot (17.X2) gives the same answer, and a
    memory forgotten since is left out by the snapshot that ranks."""
    rng = random.Random(8)
    query = unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    stored = {n: as_float32(near(rng, query, 0.3 + 0.002 * i)) for i, n in enumerate(nodes["a"][2:])}
    store_vectors(store, stored)
    with store.read() as session:
        scope = [session.initiative_by_name("a").id]  # type: ignore[union-attr]
        first = session.vector_candidates(MODEL, pack(query), 10)
        alone = session.nearest_vectors(scope, MODEL, pack(query), 10)
        given = session.nearest_vectors(scope, MODEL, pack(query), 10, first)
    assert given == alone
    assert [n for n, _ in alone] == [n for n, _ in exact_ranking(stored, query, list(stored), 10)]
    best = alone[0][0]
    service.forget(parse("forget", {"initiative": "a", "node": {"id": best}, "reason": "test"}))
    with store.read() as session:
        later = session.nearest_vectors(scope, MODEL, pack(query), 10, first)
    assert best not in [n for n, _ in later]
    assert [n for n, _ in later] == [n for n, _ in exact_ranking(stored, query, [n for n in stored if n != best], 10)]
