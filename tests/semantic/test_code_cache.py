"""SQLite's candidate codes scanned in memory (decision 17.Y1).

A store keeps each model's codes in a `CodeCache` and checks, in every transaction that scans them,
the clock migration 019's triggers move on with every change to `vector_codes`. The cache must
never serve a stale code — a write by another connection, or another process, between two queries
is seen — must pick the same candidates as SQLite's own scan, and must not keep what a write
transaction has not committed. PostgreSQL has no codes (it ranks by one exact scan): these tests
are SQLite's.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from kaeru.service.embedding import pack
from kaeru.storage.sql import codes
from kaeru.storage.sqlite import vectors as sqlite_vectors
from kaeru.storage.sqlite.store import SqliteStore
from tests.backends import VaultSpec
from tests.semantic.test_vector_index import DIMS, MODEL, as_float32, near, unit

pytest.importorskip("numpy")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "vault.sqlite3"


def _nodes(store: SqliteStore, count: int) -> tuple[list[str], list[int]]:
    """`count` bare nodes in initiative `a` (vectors are stored by node id; scope needs members)."""
    from kaeru.api.requests import parse
    from kaeru.service import Service

    service = Service(store, VaultSpec("sqlite", store.path.parent).settings())
    made = []
    for i in range(count):
        out, _ = service.note(parse("note", {"initiative": "a", "text": f"note {i}"}))
        assert out.primary is not None
        made.append(out.primary.id)
    with store.read() as session:
        scope = [session.initiative_by_name("a").id]  # type: ignore[union-attr]
    return made, scope


def _vault(store: SqliteStore, count: int, seed: int) -> tuple[list[str], list[int], random.Random, list[float]]:
    """`count` nodes in one initiative, a seeded generator and a random unit query vector."""
    made, scope = _nodes(store, count)
    rng = random.Random(seed)
    return made, scope, rng, unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)])


def _random(rng: random.Random) -> list[float]:
    return as_float32(unit([rng.gauss(0.0, 1.0) for _ in range(DIMS)]))


def _store(store: SqliteStore, vectors: dict[str, list[float]]) -> None:
    with store.write() as session:
        for node_id, vector in vectors.items():
            session.put_vector(node_id, MODEL, "digest", pack(vector))


def _nearest(store: SqliteStore, scope: list[int], query: list[float], k: int = 10) -> list[str]:
    with store.read() as session:
        return [n for n, _ in session.nearest_vectors(scope, MODEL, pack(query), k)]


@pytest.fixture
def few_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codes, "OVERSAMPLE", 1)
    monkeypatch.setattr(codes, "MIN_CANDIDATES", 8)


@pytest.mark.usefixtures("few_candidates")
def test_a_write_by_another_connection_or_process_is_seen_at_the_next_query(path: Path) -> None:
    store = SqliteStore(path)
    other = SqliteStore(path)  # another pool of connections on the same file, as a second server would
    try:
        made, scope, rng, query = _vault(store, 120, seed=1)
        stored = {n: _random(rng) for n in made[:100]}
        stored[made[7]] = as_float32(near(rng, query, 0.8))
        _store(store, stored)
        assert _nearest(store, scope, query, 1) == [made[7]]
        cache = store._codes
        assert cache.loads == 1 and cache.rows_read == 100

        # Another connection moves one vector next to the query and adds another: the next query
        # reads back those two rows only, and ranks them first.
        stored[made[5]] = as_float32(near(rng, query, 0.95))
        stored[made[110]] = as_float32(near(rng, query, 0.9))
        _store(other, {made[5]: stored[made[5]], made[110]: stored[made[110]]})
        assert _nearest(store, scope, query, 3) == [made[5], made[110], made[7]]
        assert (cache.loads, cache.rows_read) == (1, 102)

        # Another process.
        stored[made[111]] = as_float32(near(rng, query, 0.99))
        stored[made[5]] = as_float32(near(rng, query, -0.5))
        script = (
            "import sys, struct\n"
            "from kaeru.storage.sqlite.store import SqliteStore\n"
            "from kaeru.service.embedding import pack\n"
            "s = SqliteStore(__import__('pathlib').Path(sys.argv[1]))\n"
            "with s.write() as session:\n"
            "    for node_id, blob in zip(sys.argv[2::2], sys.argv[3::2]):\n"
            f"        session.put_vector(node_id, {MODEL!r}, 'digest', bytes.fromhex(blob))\n"
            "s.close()\n"
        )
        changes = [made[111], pack(stored[made[111]]).hex(), made[5], pack(stored[made[5]]).hex()]
        subprocess.run([sys.executable, "-c", script, str(path), *changes], check=True, timeout=120)
        assert _nearest(store, scope, query, 3) == [made[111], made[110], made[7]]
        assert (cache.loads, cache.rows_read) == (1, 104)
    finally:
        other.close()
        store.close()


@pytest.mark.usefixtures("few_candidates")
def test_a_write_transaction_sees_its_own_codes_and_a_rollback_leaves_none_behind(path: Path) -> None:
    store = SqliteStore(path)
    try:
        made, scope, rng, query = _vault(store, 60, seed=2)
        stored = {n: _random(rng) for n in made[:50]}
        stored[made[3]] = as_float32(near(rng, query, 0.8))
        _store(store, stored)
        before = _nearest(store, scope, query, 1)
        assert before == [made[3]]
        planted = as_float32(near(rng, query, 0.97))

        class Undo(Exception):
            pass

        with pytest.raises(Undo), store.write() as session:
            session.put_vector(made[55], MODEL, "digest", pack(planted))
            inside = [n for n, _ in session.nearest_vectors(scope, MODEL, pack(query), 2)]
            assert inside == [made[55], made[3]], "the transaction's own vector is a candidate"
            raise Undo
        assert _nearest(store, scope, query, 1) == before, "the rolled-back code is not served"
        # The clock's number the rollback used is used again by a committed write of another vector.
        stored[made[56]] = as_float32(near(rng, query, 0.9))
        _store(store, {made[56]: stored[made[56]]})
        assert _nearest(store, scope, query, 2) == [made[56], made[3]]
    finally:
        store.close()


@pytest.mark.usefixtures("few_candidates")
def test_a_deleted_code_reloads_the_copy(path: Path) -> None:
    store = SqliteStore(path)
    try:
        made, scope, rng, query = _vault(store, 40, seed=3)
        stored = {n: _random(rng) for n in made}
        stored[made[0]] = as_float32(near(rng, query, 0.9))
        stored[made[1]] = as_float32(near(rng, query, 0.8))
        _store(store, stored)
        assert _nearest(store, scope, query, 2) == [made[0], made[1]]
        with store.write() as session:  # nothing deletes vectors today; a hand-edited vault might
            session._db.run(
                "DELETE FROM vector_codes WHERE id = (SELECT id FROM node_vectors WHERE node_id = ?)", (made[0],)
            )
            session._db.run("DELETE FROM node_vectors WHERE node_id = ?", (made[0],))
        assert _nearest(store, scope, query, 1) == [made[1]]
        assert store._codes.loads == 2
    finally:
        store.close()


class _OldNumpy:
    """numpy without `bitwise_count` (before 2.0)."""

    def __getattr__(self, name: str) -> object:
        if name == "bitwise_count":
            raise AttributeError(name)
        import numpy

        return getattr(numpy, name)


@pytest.mark.parametrize("seed", range(4))
def test_the_cache_picks_the_candidates_sqlite_would(path: Path, seed: int) -> None:
    """Same Hamming distances as SQLite's `ORDER BY vec_distance_hamming … LIMIT`, for codes of
    384 bits and of a length that is not whole 64-bit words (100 dimensions)."""
    store = SqliteStore(path)
    try:
        made, _ = _nodes(store, 30)
        rng = random.Random(seed)
        dims = 384 if seed % 2 else 100
        with store.write() as session:
            for i in range(400):
                vector = pack(unit([rng.gauss(0.0, 1.0) for _ in range(dims)]))
                session.put_vector(f"{made[i % 30]}-{i}", MODEL, "digest", vector)
        query = pack(unit([rng.gauss(0.0, 1.0) for _ in range(dims)]))
        code = sqlite_vectors.quantize(query)
        with store.read() as session:
            for count in (1, 37, 150, 399, 400, 1000):
                ids = store._codes.nearest(session._db, MODEL, code, count, committed=True)
                assert ids is not None and len(ids) == min(count, 400) and ids == sorted(ids)
                by_sql = session._db.rows(
                    "SELECT vec_distance_hamming(vec_bit(code), vec_bit(?)) FROM vector_codes WHERE model = ? "
                    "ORDER BY 1 LIMIT ?",
                    (code, MODEL, count),
                )
                codes = dict(session._db.rows("SELECT id, code FROM vector_codes"))
                mine = sorted(sqlite_vectors.hamming(code, bytes(codes[i])) for i in ids)
                assert mine == [int(r[0]) for r in by_sql]
                held = store._codes._held[MODEL]
                assert held.nearest(_OldNumpy(), code, count) == ids, "numpy < 2 (unpackbits) agrees"
    finally:
        store.close()


@pytest.mark.usefixtures("few_candidates")
def test_codes_over_the_bound_are_scanned_by_sqlite(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_vectors, "CACHE_BYTES", 1_000)
    store = SqliteStore(path)
    try:
        made, scope, rng, query = _vault(store, 50, seed=4)
        stored = {n: _random(rng) for n in made}
        for i, n in enumerate(made[:5]):
            stored[n] = as_float32(near(rng, query, 0.8 + 0.02 * i))
        _store(store, stored)
        assert _nearest(store, scope, query, 5) == made[:5][::-1]
        assert store._codes._held == {}, "nothing kept over the bound"
    finally:
        store.close()


@pytest.mark.parametrize("seed", range(5))
def test_a_copy_updated_row_by_row_is_the_copy_loaded_whole(seed: int) -> None:
    """Changed rows, new rows after the last id, new rows before it (ids given out of order), or
    none: the updated copy scans as a copy loaded from the final rows does."""
    import numpy

    rng = random.Random(seed)
    width = rng.choice([6, 48, 13])
    rows = {i: rng.randbytes(width) for i in rng.sample(range(1, 500), 120)}
    held = sqlite_vectors._Codes.load(numpy, sorted(rows.items()), 1, 0)
    assert held is not None
    for version in range(2, 6):
        change: dict[int, bytes] = {}
        for _ in range(rng.choice([0, 1, 5, 30])):
            key = rng.choice([*rows, rng.randrange(1, 600), 600 + version])
            change[key] = rng.randbytes(width)
        rows.update(change)
        held = held.updated(numpy, list(change.items()), version)
        assert held is not None and held.version == version
        whole = sqlite_vectors._Codes.load(numpy, sorted(rows.items()), version, 0)
        assert whole is not None
        assert held.ids.tolist() == whole.ids.tolist() and (held.words == whole.words).all()
        code = rng.randbytes(width)
        for count in (1, 10, 119, 500):
            assert held.nearest(numpy, code, count) == whole.nearest(numpy, code, count)
