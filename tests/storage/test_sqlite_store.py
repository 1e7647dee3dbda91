"""SQLite-only behaviour of the store: opening a vault other processes are creating at the same time."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import apsw
import pytest

import kaeru.storage.sqlite.search as sqlite_search
from kaeru.api.requests import parse
from kaeru.errors import Unavailable
from kaeru.storage.base import SearchQuery
from kaeru.storage.sqlite.session import SqliteDb
from kaeru.storage.sqlite.store import SqliteStore


def test_opening_waits_for_a_vault_another_process_is_creating(tmp_path: Path) -> None:
    """Several servers started at once on a new vault file: while the first one writes the new file's
    first transaction (still in rollback-journal mode), SQLite refuses the others' switch to WAL at
    once, without its busy handler; the store retries instead of failing."""
    path = tmp_path / "vault.sqlite3"
    holder = apsw.Connection(str(path))
    list(holder.execute("BEGIN IMMEDIATE"))
    list(holder.execute("CREATE TABLE creating (x)"))

    def release() -> None:
        time.sleep(0.3)
        list(holder.execute("COMMIT"))

    releaser = threading.Thread(target=release)
    releaser.start()
    store = SqliteStore(path, busy_timeout_ms=5000)
    releaser.join()
    try:
        with store.read() as session:
            assert session.all_initiatives() == []
    finally:
        store.close()
        holder.close()


def test_a_vault_whose_text_index_was_rebuilt_is_refilled_on_open(tmp_path: Path) -> None:
    """Migration 006 replaces the full-text tables and flags the index for a refill: the next open
    fills it from `nodes`, so search (literal words) and recall (stems) find what was there before."""
    from kaeru.service import Service
    from tests.backends import VaultSpec

    spec = VaultSpec("sqlite", tmp_path / "vault")
    settings = spec.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    made, _ = service.note(
        parse("note", {"initiative": "upgrade", "text": "The harbour cranes were repainted in spring"})
    )
    assert made.primary is not None
    store.close()
    raw = apsw.Connection(str(settings.sqlite_path))
    list(raw.execute("DELETE FROM nodes_fts"))
    list(raw.execute("INSERT INTO meta (key, value) VALUES ('stem_index_pending', '1')"))
    raw.close()

    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    try:
        found = service.search(parse("search", {"initiatives": ["upgrade"], "text": "cranes"}))
        recalled = service.recall(
            parse("recall", {"initiatives": ["upgrade"], "query": "repainting crane"})
        )  # stems only
        assert [h.node.id for h in found.hits] == [made.primary.id]
        assert made.primary.id in [h.node.id for h in recalled.hits]
        pending = list(
            apsw.Connection(str(settings.sqlite_path)).execute("SELECT 1 FROM meta WHERE key = 'stem_index_pending'")
        )
        assert pending == []
    finally:
        store.close()


def test_rare_and_common_word_plans_give_the_same_results(tmp_path: Path, monkeypatch: Any) -> None:
    """Words matching at most SCOPE_THRESHOLD rows are ranked in one capped pass and filtered by
    membership; commoner words are intersected with the scope inside the index. Both plans must give
    the same hits, order, totals and superseded counts, so the threshold is only a speed choice."""
    from kaeru.service import Service
    from tests.backends import VaultSpec

    settings = VaultSpec("sqlite", tmp_path / "vault").settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    try:
        for i in range(12):
            service.note(parse("note", {"initiative": "alpha", "text": f"lantern check {i} " + "lantern " * (i % 3)}))
            service.note(parse("note", {"initiative": "beta", "text": f"lantern elsewhere {i} and moth"}))
        for text in ("lantern guess one", "lantern guess two"):  # the second supersedes the first
            service.claim(parse("claim", {"initiative": "alpha", "text": text, "options": {"slot": "handoff"}}))
        queries: list[dict[str, Any]] = [
            {"initiatives": ["alpha"], "text": "lantern"},
            {"initiatives": ["alpha"], "text": "lantern", "filters": {"current": "all"}, "limit": 50},
            {"initiatives": ["alpha", "beta"], "text": "lantern check moth", "limit": 50},
            {"initiatives": ["alpha"], "text": "moth"},  # matches only outside the scope
            {"initiatives": ["alpha"], "text": "lant", "prefix": True, "limit": 7},
        ]

        def answers() -> list[Any]:
            out = []
            for args in queries:
                result = service.search(parse("search", args))
                omitted = sorted((o.reason, o.count) for o in result.coverage.omitted)
                out.append(([h.node for h in result.hits], result.total, omitted))
            return out

        monkeypatch.setattr(sqlite_search, "SCOPE_THRESHOLD", 10_000)
        rare = answers()  # every match joined to `nodes`, the page read with the ranking
        monkeypatch.setattr(sqlite_search, "INLINE_ROWS", 0)
        rare_slim = answers()  # through `nodes_head`, the page read by a second statement
        monkeypatch.setattr(sqlite_search, "SCOPE_THRESHOLD", 3)
        common = answers()
        remembered = answers()  # the store now knows these words are common and skips the capped pass
        assert rare == rare_slim == common == remembered
        assert rare[0][1] == 13 and ("superseded", 1) in rare[0][2]
        assert rare[3] == ([], 0, [])
    finally:
        store.close()


def test_a_small_search_reads_its_page_with_the_ranking(tmp_path: Path, monkeypatch: Any) -> None:
    """A search whose words match a handful of rows reads their stored columns in the ranking
    statement, so showing the page costs no second query; more matches are fetched by a second
    statement, and a write transaction never keeps rows it read."""
    from kaeru.service import Service
    from tests.backends import VaultSpec

    settings = VaultSpec("sqlite", tmp_path / "vault").settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    issued: list[str] = []

    def statements_of_a_search() -> list[str]:
        issued.clear()
        for conn in store._all:
            conn.exec_trace = lambda _cursor, sql, _bindings: issued.append(sql) or True
        try:
            found = service.search(parse("search", {"initiatives": ["alpha"], "text": "lantern"}))
        finally:
            for conn in store._all:
                conn.exec_trace = None
        assert sorted(h.node.body or "" for h in found.hits) == sorted(f"lantern check {i}" for i in range(5))
        return [sql for sql in issued if "FROM nodes WHERE seq IN" in sql]

    try:
        for i in range(5):
            service.note(parse("note", {"initiative": "alpha", "text": f"lantern check {i}"}))
        assert statements_of_a_search() == []
        with store.write() as session:
            _rows, total, _ = session.search(SearchQuery(initiative_ids=[1], tokens=["lantern"]))
            assert total == 5 and session._stored == {}
        monkeypatch.setattr(sqlite_search, "INLINE_ROWS", 4)
        assert len(statements_of_a_search()) == 1
    finally:
        store.close()


def test_verdict_lookups_of_a_search_probe_the_verdict_index(tmp_path: Path, monkeypatch: Any) -> None:
    """Every ranked hit asks whether a node in scope supersedes it, and the page asks for its nodes'
    verdicts. Migration 007's partial index holds only live verdict edges; SQLite uses it only while
    a query repeats its condition literally, which a bound parameter or another order would break."""
    from kaeru.service import Service
    from tests.backends import VaultSpec

    settings = VaultSpec("sqlite", tmp_path / "vault").settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    issued: list[tuple[str, Any]] = []
    rows = SqliteDb.rows

    def recording(self: Any, sql: str, params: Any = ()) -> Any:
        issued.append((sql, params))
        return rows(self, sql, params)

    try:
        for text in ("lantern guess one", "lantern guess two"):  # the second supersedes the first
            service.claim(parse("claim", {"initiative": "alpha", "text": text, "options": {"slot": "handoff"}}))
        monkeypatch.setattr(SqliteDb, "rows", recording)
        found = service.search(
            parse("search", {"initiatives": ["alpha"], "text": "lantern", "filters": {"current": "all"}})
        )
        assert sorted(h.currentness.value for h in found.hits) == ["current", "superseded"]
        ranking = [(sql, params) for sql, params in issued if "bm25" in sql]
        verdicts = [(sql, params) for sql, params in issued if sql.startswith("SELECT e.dst, e.src")]
        assert ranking and verdicts, "the search issued no ranking or no verdict query"
        with store.read() as session:
            for sql, params in ranking + verdicts:
                plan = " ".join(str(step[3]) for step in session._db.rows(f"EXPLAIN QUERY PLAN {sql}", params))
                assert "edges_verdicts" in plan, plan
    finally:
        store.close()


def test_a_vault_from_before_revision_rows_keeps_its_history(tmp_path: Path, monkeypatch: Any) -> None:
    """Migration 008 moves node revisions from a WITHOUT ROWID table into a rowid table: a vault
    written before it opens with every revision, the as-of view and the revision key intact."""
    import kaeru.storage.migrate as migrate
    from kaeru.service import Service
    from kaeru.storage.migrate import load_migrations
    from tests.backends import VaultSpec
    from tests.storage.shapes import sqlite_before_migration_10

    settings = VaultSpec("sqlite", tmp_path / "vault").settings()
    shipped = load_migrations("kaeru.storage.sqlite.migrations")
    # Today's code writes initiative name histories (009), compact rows (010) and membership facets
    # (012; integer-coded since 022), which apply to either revision table.
    kept = (
        "initiative_history",
        "compact_writes",
        "section_index",
        "rule_index",
        "forgotten_index",
        "one_membership_btree",
    )
    older = [m for m in shipped if m.version < 8 or m.name in kept]
    monkeypatch.setattr(migrate, "load_migrations", lambda package: older)
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    made, _ = service.note(parse("note", {"initiative": "upgrade", "text": "The ferry leaves at nine"}))
    assert made.primary is not None
    node_id = made.primary.id
    for hour in ("ten", "eleven"):
        service.revise(
            parse(
                "revise", {"initiative": "upgrade", "node": node_id, "patch": {"body": f"The ferry leaves at {hour}"}}
            )
        )
    with store.read() as session:
        before = session.revision_log(node_id)
        moment = before[1].node.recorded_at
        as_of = session.node_at(node_id, moment)
    store.close()
    sqlite_before_migration_10(settings.sqlite_path)  # so 008 and then 010 run, in order
    raw = apsw.Connection(str(settings.sqlite_path))
    assert "WITHOUT ROWID" in next(raw.execute("SELECT sql FROM sqlite_schema WHERE name = 'node_revisions'"))[0]
    raw.close()

    monkeypatch.setattr(migrate, "load_migrations", lambda package: shipped)
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    try:
        with store.read() as session:
            assert session.revision_log(node_id) == before
            assert session.node_at(node_id, moment) == as_of
            assert as_of is not None and as_of.body == "The ferry leaves at ten"
        service.revise(
            parse("revise", {"initiative": "upgrade", "node": node_id, "patch": {"body": "The ferry leaves at noon"}})
        )
        with store.read() as session:
            assert [e.node.rev_no for e in session.revision_log(node_id)] == [1, 2, 3, 4]
        raw = apsw.Connection(str(settings.sqlite_path))
        assert (
            "WITHOUT ROWID" not in next(raw.execute("SELECT sql FROM sqlite_schema WHERE name = 'past_revisions'"))[0]
        )
        with pytest.raises(apsw.ConstraintError):  # (node_seq, rev_no) is still a key
            list(
                raw.execute(
                    "INSERT INTO past_revisions SELECT NULL, node_seq, rev_no, revision, node_type, tier, "
                    "name, body, description, tags, layer, visibility, status, properties, initiatives, "
                    "created_at, recorded_at, retracted, pinned, request_id, actor FROM past_revisions LIMIT 1"
                )
            )
        raw.close()
    finally:
        store.close()


def test_an_up_to_date_vault_opens_while_another_connection_writes(tmp_path: Path) -> None:
    """Opening checks the migrations with one read (decision 16.O2): with nothing to apply it takes
    no write lock, so a server starts while another process is in the middle of a write."""
    path = tmp_path / "vault.sqlite3"
    SqliteStore(path).close()
    writer = apsw.Connection(str(path))
    list(writer.execute("BEGIN IMMEDIATE"))
    list(writer.execute("UPDATE meta SET value = value WHERE key = 'secret'"))
    try:
        store = SqliteStore(path, busy_timeout_ms=50)
        try:
            assert store.backend == "sqlite"
        finally:
            store.close()
    finally:
        list(writer.execute("ROLLBACK"))
        writer.close()


def test_a_writer_waits_for_the_lock_until_its_timeout_then_is_told_busy(tmp_path: Path) -> None:
    """The store's own busy handler (it tries every millisecond, decision 137) keeps SQLite's
    contract: a write waits while another connection holds the lock and goes ahead once it is
    released; when the lock outlasts `busy_timeout_ms`, the write is refused `unavailable`."""
    path = tmp_path / "vault.sqlite3"
    patient, hasty = SqliteStore(path, busy_timeout_ms=10_000), SqliteStore(path, busy_timeout_ms=300)
    holder = apsw.Connection(str(path))
    done = threading.Event()

    def write() -> None:
        with patient.write() as session:
            session._db.run("UPDATE meta SET value = value WHERE key = 'secret'")
        done.set()

    try:
        list(holder.execute("BEGIN IMMEDIATE"))
        with pytest.raises(Unavailable, match="busy"), hasty.write() as session:
            session.vault_secret()
        waiting = threading.Thread(target=write)
        waiting.start()
        time.sleep(0.05)
        assert not done.is_set(), "the write went ahead while the lock was held"
        list(holder.execute("ROLLBACK"))
        waiting.join(timeout=10)
        assert done.is_set(), "the write did not go ahead once the lock was free"
    finally:
        if holder.in_transaction:
            list(holder.execute("ROLLBACK"))
        holder.close()
        patient.close()
        hasty.close()
