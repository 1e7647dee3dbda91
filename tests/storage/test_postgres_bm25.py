"""PostgreSQL's BM25 statistics (decision 17.G1): kept exact by every write path, by concurrent
writers, by a re-index and by the upgrade that adds them; and the score is FTS5's, to the bit.

That PostgreSQL ranks as SQLite does on the same workload is the parity suite's
(tests/storage/test_backend_parity.py); here are the counts the ranking reads.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.domain.text import query_tokens
from kaeru.export import archive
from kaeru.service import Service, capture, revise
from kaeru.service.mutation import WriteContext, run_mutation
from kaeru.service.requests import NoteRequest, ReviseRequest
from kaeru.storage.base import SearchQuery
from kaeru.storage.postgres import bm25
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url
from tests.storage import pg_reference

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(url, lock_timeout_ms=10_000)
    yield opened
    opened.close()


def _service(store: PostgresStore, url: str, vault_dir: Path = Path("/nonexistent")) -> Service:
    return Service(store, Settings(vault_dir=vault_dir, database_url=url, secret_policy="allow"))


def _kept(url: str) -> tuple[dict[tuple[bool, str, int], int], tuple[int, int]]:
    """The statistics as the trigger kept them, summed over shards (zero counts left out)."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT stemmed, term, fields, sum(docs) FROM term_docs GROUP BY 1, 2, 3 HAVING sum(docs) <> 0"
        ).fetchall()
        totals = conn.execute("SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM text_totals").fetchone()
    assert totals is not None
    return {(r[0], r[1], int(r[2])): int(r[3]) for r in rows}, (int(totals[0]), int(totals[1]))


def _expected(store: PostgresStore) -> tuple[dict[tuple[bool, str, int], int], tuple[int, int]]:
    """The statistics counted from the live nodes themselves, in Python (`pg_reference.node_terms`)."""
    docs: Counter[tuple[bool, str, int]] = Counter()
    rows = tokens = 0
    with store.read() as session:
        seqs = [r[0] for r in session._db.rows("SELECT seq FROM nodes WHERE NOT retracted")]
        nodes = session.nodes_by_seqs(seqs)
    for node in nodes.values():
        literal, stems, size = pg_reference.node_terms(node)
        rows, tokens = rows + 1, tokens + size
        for stemmed, counts in ((False, literal), (True, stems)):
            for word, per_field in json.loads(counts).items():
                docs[
                    (stemmed, word, sum(bm25.FIELD_BITS[f] for f, c in zip(bm25.FIELDS, per_field, strict=True) if c))
                ] += 1
    return dict(docs), (rows, tokens)


def _workload(service: Service) -> None:
    """Every kind of node write: new, revised, superseded, forgotten, moved by a merge, deleted
    with its initiative."""
    made = []
    for i in range(12):
        text = f"staging zeta release {i} " + "zeta " * (i % 4) + ("Café naïve 東京" if i % 3 == 0 else "")
        outcome, _ = service.note(parse("note", {"initiative": f"init-{i % 3}", "text": text, "tags": ["red"]}))
        assert outcome.primary is not None
        made.append(outcome.primary.id)
    service.revise(parse("revise", {"initiative": "init-0", "node": made[0], "patch": {"body": "rewritten entirely"}}))
    service.revise(parse("revise", {"initiative": "init-1", "node": made[1], "patch": {"name": "Staging Zeta"}}))
    service.evolve(
        parse("evolve", {"initiative": "init-2", "mode": "supersede", "source": made[2], "new_body": "zeta again"})
    )
    service.forget(parse("forget", {"initiative": "init-0", "node": made[3], "reason": "test"}))
    service.initiative(parse("initiative", {"initiative": "init-1", "action": "merge", "to": "init-0"}))
    service.initiative(parse("initiative", {"initiative": "init-2", "action": "delete"}))


def test_every_write_path_keeps_the_statistics_exact(store: PostgresStore, url: str) -> None:
    _workload(_service(store, url))
    kept = _kept(url)
    assert kept == _expected(store)
    assert kept[1][0] > 0


def test_an_import_keeps_the_statistics_exact(store: PostgresStore, url: str, tmp_path: Path) -> None:
    root = tmp_path / "exports"
    root.mkdir()
    shutil.copy(ROOT / "tests" / "data" / "upgrade" / "sqlite-v016" / "vault.amg", root / "vault.amg")
    settings = Settings(vault_dir=tmp_path / "vault", database_url=url, secret_policy="allow")
    outcome = archive.import_(
        store, replace(settings, export_root=root), parse("archive", {"action": "import", "path": "vault.amg"})
    )
    assert outcome.state == "applied", outcome
    kept = _kept(url)
    assert kept == _expected(store)
    assert kept[1][0] > 10


def test_concurrent_writers_add_up(store: PostgresStore, url: str) -> None:
    """Writers on several connections (so several shards, and shared rows for shared words)."""
    service = _service(store, url)

    def write(i: int) -> None:
        for j in range(6):
            service.note(parse("note", {"initiative": f"c{i % 2}", "text": f"shared words {i} {j} zeta"}))

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(write, range(12)))
    kept = _kept(url)
    assert kept == _expected(store)
    assert kept[1][0] >= 72


def test_a_rebuild_and_the_upgrade_backfill_count_the_same(store: PostgresStore, url: str) -> None:
    _workload(_service(store, url))
    before = _kept(url)
    with store.write() as session:
        session.rebuild_text_index()
    assert _kept(url) == before
    # A vault from before migration 009: no terms, no statistics, the re-index pending (as 009 leaves it).
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT set_config('kaeru.bulk_index', 'on', false)")
        conn.execute("UPDATE nodes SET ltf = NULL, stf = NULL, dl = NULL")
        conn.execute("DELETE FROM term_stats")
        conn.execute("DELETE FROM text_totals")
        conn.execute("INSERT INTO meta (key, value) VALUES ('stem_index_pending', '1')")
    PostgresStore(url).close()
    assert _kept(url) == before


def test_the_score_is_fts5_bm25(store: PostgresStore, url: str) -> None:
    """Each hit's score is FTS5's bm25, computed here from the statistics' definition: equal to the bit."""
    _workload(_service(store, url))
    expected_docs, (rows, tokens) = _expected(store)
    with store.read() as session:
        scope = [i.id for i in session.all_initiatives()]
        words = query_tokens("staging zeta café")
        found, _, _ = session.search(SearchQuery(initiative_ids=scope, tokens=words, omit_superseded=False))
        nodes = session.nodes_by_ids([r.id for r in found])
    assert len(found) >= 5
    avgdl = tokens / rows
    for row in found:
        literal, _, size = pg_reference.node_terms(nodes[row.id])
        counts = json.loads(literal)
        score = 0.0
        for word in words:
            docs = sum(n for (stemmed, w, _), n in expected_docs.items() if not stemmed and w == word)
            f = sum(c * w for c, w in zip(counts.get(word, [0, 0, 0, 0]), bm25.WEIGHTS, strict=True))
            score += bm25.idf(rows, docs) * (
                (f * (bm25.K1 + 1.0)) / (f + bm25.K1 * (1 - bm25.B + bm25.B * size / avgdl))
            )
        assert row.score == -1.0 * score, row


def test_one_transaction_of_many_writes_counts_each_once(store: PostgresStore, url: str) -> None:
    """A bulk batch (bench.build's: many notes in one transaction), one of them revised and one
    forgotten in the same transaction, then a search inside it: the session gathers the changes
    and applies them once (decision 16.M3), before that search reads them (its scores are those
    of the same search after the commit) and before the commit (the counts are exact)."""
    service = _service(store, url)
    service.note(parse("note", {"initiative": "bulk", "text": "an earlier zeta note"}))
    inside: list[list[tuple[str, float]]] = []

    def search(session: Any, initiative_id: int) -> list[tuple[str, float]]:
        rows, _, _ = session.search(SearchQuery(initiative_ids=[initiative_id], tokens=["zeta"]))
        return [(r.id, r.score) for r in rows]

    def body(ctx: WriteContext) -> None:
        made = []
        for i in range(25):
            text = f"batch zeta words {i} " + "common " * (i % 3) + ("zeta " * (i % 4))
            capture.note(ctx, NoteRequest.trusted({"initiative": "bulk", "text": text, "tags": ["red"]}))
            made.append(ctx.outcome.created[-1].id)
        revise.revise(ctx, ReviseRequest.trusted({"initiative": "bulk", "node": made[0], "patch": {"body": "zeta"}}))
        revise.revise(ctx, ReviseRequest.trusted({"initiative": "bulk", "node": made[1], "patch": {"name": "Zeta"}}))
        inside.append(search(ctx.session, ctx.initiative.id))

    run_mutation(service.rt, operation="note", initiative="bulk", request_id=None, args={}, actor="t", body=body)
    kept = _kept(url)
    assert kept == _expected(store)
    assert kept[1][0] == 26
    with store.read() as session:
        initiative = session.initiative_by_name("bulk")
        assert initiative is not None
        after = search(session, initiative.id)
    assert len(after) == 26
    assert inside == [after]


def test_a_writer_without_a_session_is_counted_by_the_trigger(store: PostgresStore, url: str) -> None:
    """Plain SQL (an operator's fix, a tool that is not kaeru) takes a node out of the index and puts
    it back: the trigger keeps the statistics exact, in `term_stats`'s rows (migration 017)."""
    _workload(_service(store, url))
    with psycopg.connect(url, autocommit=True) as conn:
        seq, ltf, stf, dl = conn.execute(
            "SELECT seq, ltf::text, stf::text, dl FROM nodes WHERE NOT retracted AND dl IS NOT NULL ORDER BY seq LIMIT 1"
        ).fetchone() or (None, None, None, None)
        assert seq is not None
        conn.execute("UPDATE nodes SET retracted = TRUE, ltf = NULL, stf = NULL, dl = NULL WHERE seq = %s", (seq,))
        assert _kept(url) == _expected(store)
        conn.execute(
            "UPDATE nodes SET retracted = FALSE, ltf = %s::jsonb, stf = %s::jsonb, dl = %s WHERE seq = %s",
            (ltf, stf, dl, seq),
        )
    kept = _kept(url)
    assert kept == _expected(store)
    assert kept[1][0] > 0


def test_the_upgrade_to_one_row_a_term_keeps_every_count(store: PostgresStore, url: str) -> None:
    """Migration 017 turns `term_docs`' rows (one a variant) into `term_stats`' (both variants in
    one): every (variant, term, fields) sums as before, over fewer rows."""
    _workload(_service(store, url))
    before = _kept(url)
    with psycopg.connect(url, autocommit=True) as conn:
        # The statistics as migration 016 left them, spread over two more shards that cancel out.
        conn.execute(
            "DROP VIEW term_docs; "
            'CREATE TABLE term_docs (stemmed BOOLEAN NOT NULL, term TEXT COLLATE "C" NOT NULL, fields SMALLINT NOT NULL, '
            "shard SMALLINT NOT NULL, docs BIGINT NOT NULL, PRIMARY KEY (stemmed, term, fields, shard)); "
            "INSERT INTO term_docs SELECT FALSE, term, fields, shard, literal FROM term_stats WHERE literal <> 0 "
            "UNION ALL SELECT TRUE, term, fields, shard, stemmed FROM term_stats WHERE stemmed <> 0; "
            "INSERT INTO term_docs VALUES (TRUE, 'zeta', 4, 62, 5), (TRUE, 'zeta', 4, 63, -5), (FALSE, 'gone', 4, 1, 0); "
            "DROP TABLE term_stats; DELETE FROM schema_migrations WHERE version BETWEEN 17 AND 22; "
            # (023 stays recorded: run again, it would rebuild the statistics of a vault holding CJK text.)
            # Migration 018's memberships key undone too, so that 018 can run again after 017.
            "ALTER TABLE memberships DROP CONSTRAINT memberships_pkey, ALTER COLUMN facet DROP NOT NULL, "
            "ADD PRIMARY KEY (initiative_id, node_seq); "
            "CREATE INDEX memberships_facet ON memberships (initiative_id, facet, node_seq); "
            # And migration 019's replay columns (the replay rows do not matter here).
            "DELETE FROM requests; ALTER TABLE requests ALTER COLUMN args_hash TYPE text USING encode(args_hash, 'hex'), "
            "ALTER COLUMN response TYPE text USING convert_from(response, 'UTF8'); "
            # And migration 020's planner statistics, and 021's columns.
            "DROP STATISTICS nodes_reminder_stats, nodes_hygiene_stats; "
            "ALTER TABLE tokens DROP COLUMN expires_at; "
            "ALTER TABLE edge_revisions DROP COLUMN actor, DROP COLUMN request_id"
        )
        old_rows = conn.execute("SELECT count(*) FROM term_docs").fetchone()
    PostgresStore(url).close()
    assert _kept(url) == before
    with psycopg.connect(url, autocommit=True) as conn:
        new_rows = conn.execute("SELECT count(*) FROM term_stats").fetchone()
        zeta = conn.execute(
            "SELECT literal, stemmed FROM term_stats WHERE term = 'zeta' AND fields = 4 AND shard = 62"
        ).fetchone()
    assert old_rows is not None and new_rows is not None
    assert new_rows[0] < old_rows[0] * 0.75
    assert zeta == (0, 5)
