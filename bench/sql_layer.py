"""What one SQL layer over both engines would cost per call: raw driver calls against three ways of
writing the shared SQL once (issue 14). A script, not a test; nothing asserts on its figures.

Approaches, measured in the same run, on the same connection, in turns (in a new random order every round):

* `raw` — the driver call as the stores make it today (apsw `Connection.execute`, psycopg
  `Connection.execute`), the statement text prebuilt: the baseline of every ratio.
* `dialect` — SQL written once with `?` marks and rendered per engine once, at start-up, by a small
  hand-written `Dialect` (marks, `IN`/`ANY`, booleans, row locks, upserts), called through a thin
  typed wrapper (`SharedQueries`) that also translates driver errors: what the target layout does.
* `aiosql` — the same statements as named queries (`-- name: get_node(id)^`), loaded once with
  `aiosql.from_str(…, "apsw" | "psycopg")`, called as `queries.get_node(conn, id=…)`.
* `sqlglot` — the SQLite text transpiled to PostgreSQL once at start-up and then run raw (a cache
  is the only sane use: the per-call transpile cost is reported separately and is milliseconds).
* `store` (`get_node` only) — today's `Session.get_node`, row decoding included: for scale.

Hot paths: `get_node` by id (what `read` does), the `past_revisions` insert of `put_node` (a revision moved past) (what
`note` does; inside a write transaction rolled back at the end), and a selective full-text search
statement (one rare word, scoped to the main initiative; FTS5 `MATCH` + `bm25` on SQLite, `tsvector`
`@@` + `ts_rank` on PostgreSQL — backend-specific text, so only the call path differs).

`--transpile` prints how sqlglot transpiles the stores' real statements and whether the output
still prepares on the target engine.

    .venv/bin/pip install aiosql sqlglot   # optional: an approach whose library is missing is skipped
    .venv/bin/python -m bench.sql_layer [--notes 10000] [--calls 2000] [--backend sqlite|postgres|both]
    .venv/bin/python -m bench.sql_layer --transpile

PostgreSQL runs when `KAERU_BENCH_DATABASE_URL` (or `KAERU_TEST_DATABASE_URL`) names a server, e.g.
as root: `pg_virtualenv -t bash -c 'KAERU_BENCH_DATABASE_URL="postgresql://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE"
.venv/bin/python -m bench.sql_layer --backend both'`.
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import json
import random
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.build import build
from bench.corpus import MAIN, CorpusBuilder
from bench.stats import percentile
from bench.vaults import BackendUnavailable, new_vault

RESULTS_DIR = Path(__file__).resolve().parent / "results"
OPS = ("get_node", "put_revision", "search_selective")
APPROACHES = ("raw", "dialect", "aiosql", "sqlglot", "store")

_NODE_COLS = (
    "rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, "
    "properties, initiatives, created_at, recorded_at, retracted, pinned"
)
_REV_COLS = f"node_seq, {_NODE_COLS}, request_id, actor"
#: The shared text of the three statements, `?` marks, as the target layout would keep it once.
SHARED = {
    "get_node": f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE id = ?",
    "put_revision": f"INSERT INTO past_revisions ({_REV_COLS}) VALUES ({', '.join('?' * 20)})",
}
#: Backend-specific search statements (what genuinely differs stays per backend).
SEARCH = {
    "sqlite": (
        "SELECT n.id, n.seq, bm25(nodes_fts, 4.0, 2.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0) AS score "
        "FROM nodes_fts JOIN nodes n INDEXED BY nodes_head ON n.seq = nodes_fts.rowid "
        "WHERE nodes_fts MATCH ? AND n.retracted = 0 AND n.node_type <> 'audit_event' "
        "AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq AND {scope}) "
        "ORDER BY score, n.seq DESC LIMIT 50"
    ),
    "postgres": (
        "SELECT n.id, n.seq, ts_rank('{{0.25,0.5,0.5,1.0}}'::float4[], n.tsv, %s::tsquery, 1) AS score "
        "FROM nodes n WHERE NOT n.retracted AND n.node_type <> 'audit_event' "
        "AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq AND {scope}) "
        "AND n.tsv @@ %s::tsquery ORDER BY score DESC, n.seq DESC LIMIT 50"
    ),
}
#: The same statements as aiosql named queries; the scope list is bound as one value (static SQL).
AIOSQL_SHARED = f"""
-- name: get_node(id)^
SELECT seq, id, {_NODE_COLS} FROM nodes WHERE id = :id;

-- name: put_revision({_REV_COLS})!
INSERT INTO past_revisions ({_REV_COLS})
VALUES ({", ".join(":" + c.strip() for c in _REV_COLS.split(","))});
"""
AIOSQL_SEARCH = {
    "sqlite": """
-- name: search_selective(q, scope)
SELECT n.id, n.seq, bm25(nodes_fts, 4.0, 2.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0) AS score
FROM nodes_fts JOIN nodes n INDEXED BY nodes_head ON n.seq = nodes_fts.rowid
WHERE nodes_fts MATCH :q AND n.retracted = 0 AND n.node_type <> 'audit_event'
  AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq
              AND m.initiative_id IN (SELECT value FROM json_each(:scope)))
ORDER BY score, n.seq DESC LIMIT 50;
""",
    "postgres": """
-- name: search_selective(q, scope)
SELECT n.id, n.seq, ts_rank('{0.25,0.5,0.5,1.0}'::float4[], n.tsv, CAST(:q AS tsquery), 1) AS score
FROM nodes n WHERE NOT n.retracted AND n.node_type <> 'audit_event'
  AND EXISTS (SELECT 1 FROM memberships m WHERE m.node_seq = n.seq AND m.initiative_id = ANY(:scope))
  AND n.tsv @@ CAST(:q AS tsquery)
ORDER BY score DESC, n.seq DESC LIMIT 50;
""",
}


# --- the hand-written candidate --------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between the engines in SQL both share, Django-operations style: callers ask the
    dialect, never branch on the engine's name."""

    name: str
    mark: str
    #: Whether a list is bound as one array value (`= ANY(%s)`) rather than spread (`IN (?, ?)`).
    binds_arrays: bool
    true: str
    false: str
    #: Appended to a read that a compare-and-set relies on (SQLite's `BEGIN IMMEDIATE` locks already).
    lock_suffix: str

    def render(self, sql: str) -> str:
        """Shared `?` text in this engine's marks; run once per statement, at start-up."""
        return sql if self.mark == "?" else sql.replace("?", self.mark)

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """`column` is one of `values`: the clause and its parameters."""
        if self.binds_arrays:
            return f"{column} = ANY({self.mark})", [list(values)]
        return f"{column} IN ({_marks(len(values))})", list(values)

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str], guard: str | None = None) -> str:
        """Insert or replace the row keyed by `key`; with `guard` (e.g. `{t}.rev_no < excluded.rev_no`)
        only a newer row replaces it, and `RETURNING 1` tells whether it did. Both engines parse
        PostgreSQL's form (SQLite ≥ 3.35), so only the marks differ."""
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
        marks = ", ".join([self.mark] * len(columns))
        where = f" WHERE {guard.format(t=table)} RETURNING 1" if guard else ""
        return (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) "
            f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}{where}"
        )


SQLITE = Dialect("sqlite", "?", binds_arrays=False, true="1", false="0", lock_suffix="")
POSTGRES = Dialect("postgres", "%s", binds_arrays=True, true="TRUE", false="FALSE", lock_suffix=" FOR UPDATE")


@functools.lru_cache(maxsize=64)
def _marks(n: int) -> str:
    return ", ".join("?" * n)


class SharedQueries:
    """The shared statements rendered once for one dialect; each method is one statement and
    translates driver errors (here: re-raises them) as a store session would."""

    def __init__(self, conn: Any, dialect: Dialect, errors: type[BaseException] | tuple[type[BaseException], ...]):
        self._c = conn
        self._d = dialect
        self._errors = errors
        self._get_node = dialect.render(SHARED["get_node"])
        self._put_revision = dialect.render(SHARED["put_revision"])
        self._search = SEARCH[dialect.name]
        #: The search text per scope length: rendered once, like every other shared statement.
        self._search_by_scope: dict[int, str] = {}

    def _one(self, sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
        try:
            row: tuple[Any, ...] | None = self._c.execute(sql, params).fetchone()  # a tuple in both drivers
        except self._errors as exc:
            raise RuntimeError(f"storage error: {exc}") from exc
        return row

    def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        try:
            rows: list[tuple[Any, ...]] = self._c.execute(sql, params).fetchall()
            return rows
        except self._errors as exc:
            raise RuntimeError(f"storage error: {exc}") from exc

    def get_node(self, node_id: str) -> tuple[Any, ...] | None:
        return self._one(self._get_node, (node_id,))

    def put_revision(self, values: Sequence[Any]) -> None:
        try:
            self._c.execute(self._put_revision, values)
        except self._errors as exc:
            raise RuntimeError(f"storage error: {exc}") from exc

    def search_selective(self, query: str, scope: Sequence[int]) -> list[tuple[Any, ...]]:
        clause, params = self._d.in_list("m.initiative_id", scope)
        sql = self._search_by_scope.get(len(scope))
        if sql is None:
            sql = self._search_by_scope[len(scope)] = self._search.format(scope=clause)
        return self._rows(sql, (query, *params, query) if self._d.binds_arrays else (query, *params))


# --- the benchmark ---------------------------------------------------------------------------
def _optional(name: str) -> Any:
    try:
        return __import__(name)
    except ImportError:
        print(f"({name} not installed: its column is skipped; `.venv/bin/pip install {name}`)", file=sys.stderr)
        return None


def _search_word(backend: str, word: str) -> str:
    if backend == "sqlite":
        return '{name description body tags} : ("' + word + '")'
    return "'" + word + "'"


def _calls(backend: str, session: Any, ids: list[str], words: list[str], scope: list[int]) -> Any:
    """Per approach and op, a function of the round number that makes one call."""
    conn = session._c  # the store's own pooled connection, inside the store's transaction
    aiosql = _optional("aiosql")
    sqlglot = _optional("sqlglot")
    if backend == "sqlite":
        import apsw

        dialect, errors = SQLITE, apsw.Error
        raw_get = SHARED["get_node"]
        raw_put = SHARED["put_revision"]
        raw_search = SEARCH["sqlite"].format(scope=f"m.initiative_id IN ({_marks(len(scope))})")

        def raw_search_args(q: str) -> tuple[Any, ...]:
            return (q, *scope)
    else:
        import psycopg

        dialect, errors = POSTGRES, psycopg.Error
        raw_get = POSTGRES.render(SHARED["get_node"])
        raw_put = POSTGRES.render(SHARED["put_revision"])
        raw_search = SEARCH["postgres"].format(scope="m.initiative_id = ANY(%s::bigint[])")

        def raw_search_args(q: str) -> tuple[Any, ...]:
            return (q, scope, q)

    template = conn.execute(f"SELECT {_REV_COLS} FROM past_revisions WHERE rev_no = 1 LIMIT 1").fetchone()
    if template is None:  # SQLite keeps a node's current revision in `nodes` only (decision 16.I3)
        template = conn.execute(f"SELECT seq, {_NODE_COLS}, request_id, actor FROM nodes LIMIT 1").fetchone()
    base = list(template)
    fresh = itertools.count(1_000_000)

    def revision(_: int) -> list[Any]:
        values = base.copy()
        values[1] = next(fresh)  # rev_no: unique per call (the transaction is rolled back)
        return values

    words_q = [_search_word(backend, w) for w in words]
    calls: dict[str, dict[str, Callable[[int], Any]]] = {op: {} for op in OPS}
    calls["get_node"]["raw"] = lambda i: conn.execute(raw_get, (ids[i % len(ids)],)).fetchone()
    calls["put_revision"]["raw"] = lambda i: conn.execute(raw_put, revision(i))
    calls["search_selective"]["raw"] = lambda i: conn.execute(
        raw_search, raw_search_args(words_q[i % len(words_q)])
    ).fetchall()

    shared = SharedQueries(conn, dialect, errors)
    calls["get_node"]["dialect"] = lambda i: shared.get_node(ids[i % len(ids)])
    calls["put_revision"]["dialect"] = lambda i: shared.put_revision(revision(i))
    calls["search_selective"]["dialect"] = lambda i: shared.search_selective(words_q[i % len(words_q)], scope)

    if aiosql is not None:
        queries = aiosql.from_str(AIOSQL_SHARED + AIOSQL_SEARCH[backend], "apsw" if backend == "sqlite" else "psycopg")
        names = [c.strip() for c in _REV_COLS.split(",")]
        scope_arg: Any = json.dumps(scope) if backend == "sqlite" else scope
        calls["get_node"]["aiosql"] = lambda i: queries.get_node(conn, id=ids[i % len(ids)])
        calls["put_revision"]["aiosql"] = lambda i: queries.put_revision(
            conn, **dict(zip(names, revision(i), strict=True))
        )
        calls["search_selective"]["aiosql"] = lambda i: list(
            queries.search_selective(conn, q=words_q[i % len(words_q)], scope=scope_arg)
        )

    if sqlglot is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            glot_get = sqlglot.transpile(SHARED["get_node"], read="sqlite", write=backend)[0]
            glot_put = sqlglot.transpile(SHARED["put_revision"], read="sqlite", write=backend)[0]
        # The search has no counterpart to transpile to (FTS5 is not tsvector): not measured.
        calls["get_node"]["sqlglot"] = lambda i: conn.execute(glot_get, (ids[i % len(ids)],)).fetchone()
        calls["put_revision"]["sqlglot"] = lambda i: conn.execute(glot_put, revision(i))

    calls["get_node"]["store"] = lambda i: session.get_node(ids[i % len(ids)])
    return calls


def _check_same(calls: dict[str, dict[str, Callable[[int], Any]]]) -> None:
    """Every approach answers the reads alike (rows compared exactly, scores included)."""
    for op in ("get_node", "search_selective"):
        answers = {a: f(0) for a, f in calls[op].items() if a != "store"}
        norm = {
            a: json.dumps([list(r) for r in (v if isinstance(v, list) else [v])], default=str)
            for a, v in answers.items()
        }
        if len(set(norm.values())) != 1:
            raise AssertionError(f"{op}: approaches disagree: {norm}")


def _measure(calls: dict[str, dict[str, Callable[[int], Any]]], ops: Sequence[str], rounds: int, warmup: int) -> Any:
    samples: dict[str, dict[str, list[int]]] = {op: {a: [] for a in calls[op]} for op in ops}
    clock = time.perf_counter_ns
    # A fresh order every round: in a fixed rotation each approach always follows the same one, and
    # the one after `store` (which allocates a Node) came out ~0.3 µs slower on SQLite.
    shuffle = random.Random(14).shuffle
    for i in range(warmup + rounds):
        for op in ops:
            approaches = list(calls[op].items())
            shuffle(approaches)
            for approach, call in approaches:
                start = clock()
                call(i)
                elapsed = clock() - start
                if i >= warmup:
                    samples[op][approach].append(elapsed)
    return samples


class _Rollback(Exception):
    pass


def run_backend(backend: str, notes: int, rounds: int, warmup: int) -> dict[str, Any]:
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    vault = new_vault(backend, "sqllayer", None, keep=False)
    store = None
    try:
        settings = vault.settings()
        store = open_store(settings)
        service = Service(store, settings)
        builder = CorpusBuilder(notes)
        t0 = time.perf_counter()
        ids = build(service, builder, "bulk", quiet=True)
        print(f"[{backend}] built {notes:,} notes in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
        main_ids = [n for k, n in enumerate(ids) if builder.initiative_of(k) == MAIN]
        words = list(builder.corpus.selective)
        samples: dict[str, dict[str, list[int]]] = {}
        gc.collect()
        gc.freeze()
        with store.read() as session:
            scope = [session.initiative_by_name(MAIN).id]
            calls = _calls(backend, session, main_ids, words, scope)
            _check_same(calls)
            samples.update(_measure(calls, ("get_node", "search_selective"), rounds, warmup))
            hits = [len(calls["search_selective"]["raw"](i)) for i in range(len(words))]
        try:
            with store.write() as session:
                calls = _calls(backend, session, main_ids, words, scope)
                samples.update(_measure(calls, ("put_revision",), rounds, warmup))
                raise _Rollback
        except _Rollback:
            pass
        gc.unfreeze()
        return {"backend": backend, "notes": notes, "rounds": rounds, "hits": hits, "samples": samples}
    finally:
        if store is not None:
            store.close()
        vault.drop()


def transpile_costs() -> dict[str, float]:
    """Median µs of one sqlglot transpile (SQLite → PostgreSQL) per shared statement, warm."""
    sqlglot = _optional("sqlglot")
    if sqlglot is None:
        return {}
    out: dict[str, float] = {}
    for name, sql in SHARED.items():
        times = []
        for _ in range(30):
            start = time.perf_counter_ns()
            sqlglot.transpile(sql, read="sqlite", write="postgres")
            times.append(time.perf_counter_ns() - start)
        out[name] = statistics.median(times[5:]) / 1000
    return out


def summarise(run: dict[str, Any]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for op, per in run["samples"].items():
        raw = sorted(per["raw"])
        base = percentile(raw, 50)
        table[op] = {}
        for approach in APPROACHES:
            if approach not in per:
                continue
            values = sorted(per[approach])
            p50, p95 = percentile(values, 50), percentile(values, 95)
            table[op][approach] = {
                "p50_us": round(p50 / 1000, 2),
                "p95_us": round(p95 / 1000, 2),
                "ratio_p50": round(p50 / base, 3),
                "extra_p50_us": round((p50 - base) / 1000, 2),
                "n": len(values),
            }
    return table


def print_table(backend: str, table: dict[str, Any]) -> None:
    print(f"\n{backend}: per-call latency, µs (ratio = p50 / raw p50 of the same run)")
    print(f"{'op':<18}{'approach':<10}{'p50':>9}{'p95':>9}{'ratio':>8}{'+p50':>8}")
    for op, per in table.items():
        for approach, s in per.items():
            print(
                f"{op:<18}{approach:<10}{s['p50_us']:>9.2f}{s['p95_us']:>9.2f}{s['ratio_p50']:>8.3f}{s['extra_p50_us']:>8.2f}"
            )


# --- sqlglot on the stores' real statements ----------------------------------------------------
#: (source store and line, read dialect, statement) — the statements as the stores build them.
REAL = [
    ("sqlite:372 get_node", "sqlite", "SELECT seq, id, name FROM nodes WHERE id = ?"),
    ("postgres:482 put_node FOR UPDATE", "postgres", "SELECT seq, id, name FROM nodes WHERE id = %s FOR UPDATE"),
    ("sqlite:294 IN list", "sqlite", "SELECT id, name FROM initiatives WHERE id IN (?, ?, ?)"),
    ("postgres:301 = ANY(array)", "postgres", "SELECT id, name FROM initiatives WHERE id = ANY(%s::bigint[])"),
    (
        "sqlite:1102 INSERT OR REPLACE",
        "sqlite",
        "INSERT OR REPLACE INTO cursors (id, created_at, items) VALUES (?, ?, ?)",
    ),
    ("sqlite:484 INSERT OR IGNORE", "sqlite", "INSERT OR IGNORE INTO memberships VALUES (?, ?)"),
    (
        "postgres:792 upsert guard RETURNING",
        "postgres",
        "INSERT INTO slots (initiative_id, slot, node_id, rev_no, revision, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (initiative_id, slot) DO UPDATE SET "
        "node_id = EXCLUDED.node_id, rev_no = EXCLUDED.rev_no, revision = EXCLUDED.revision, "
        "updated_at = EXCLUDED.updated_at WHERE slots.rev_no < EXCLUDED.rev_no RETURNING 1",
    ),
    (
        "sqlite:303 INSERT RETURNING",
        "sqlite",
        "INSERT INTO initiatives (name, created_at, last_activity) VALUES (?, ?, ?) RETURNING id, name",
    ),
    ("sqlite:689 booleans = 0", "sqlite", "SELECT n.id FROM nodes n WHERE n.retracted = 0 AND n.pinned = 1"),
    ("postgres:723 NOT boolean", "postgres", "SELECT n.id FROM nodes n WHERE NOT n.retracted"),
    (
        "sqlite:940 FTS5 MATCH bm25",
        "sqlite",
        "SELECT n.id, bm25(nodes_fts, 4.0, 2.0) AS score FROM nodes_fts "
        "JOIN nodes n INDEXED BY nodes_head ON n.seq = nodes_fts.rowid WHERE nodes_fts MATCH ? ORDER BY score LIMIT 10",
    ),
    (
        "sqlite:914 MATCH ?1 (numbered)",
        "sqlite",
        "SELECT count(*) FROM (SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ?1)",
    ),
    (
        "postgres:82 ts_rank @@ tsquery",
        "postgres",
        "SELECT n.id, ts_rank('{0.25,0.5,0.5,1.0}'::float4[], n.tsv, %(q)s::tsquery, 1) AS score "
        "FROM nodes n WHERE n.tsv @@ %(q)s::tsquery ORDER BY score DESC",
    ),
    (
        "sqlite:850 json_each tags",
        "sqlite",
        "SELECT n.id FROM nodes n WHERE EXISTS (SELECT 1 FROM json_each(n.tags) t WHERE t.value = ?)",
    ),
    ("sqlite:665 json_type", "sqlite", "SELECT n.id FROM nodes n WHERE json_type(n.properties, ?) IS NOT NULL"),
    ("postgres:883 tags @> array", "postgres", "SELECT n.id FROM nodes n WHERE n.tags @> %(tags)s::text[]"),
    (
        "postgres:948 initiatives && array",
        "postgres",
        "SELECT 1 FROM past_revisions x WHERE x.initiatives && %(ids)s::bigint[]",
    ),
    (
        "postgres:628 DISTINCT ON",
        "postgres",
        "SELECT DISTINCT ON (src, dst, edge_type) src, dst, rev_no FROM edge_revisions "
        "WHERE recorded_at <= %(moment)s ORDER BY src, dst, edge_type, rev_no DESC",
    ),
    (
        "postgres:915 count FILTER",
        "postgres",
        "SELECT count(*) FILTER (WHERE NOT sup), count(*) FILTER (WHERE sup) FROM (SELECT n.retracted AS sup FROM nodes n) h",
    ),
    (
        "sqlite:732 row values",
        "sqlite",
        "SELECT n.id FROM nodes n WHERE (n.created_at, n.seq) < (?, ?) ORDER BY n.created_at DESC",
    ),
    (
        "postgres:518 unnest",
        "postgres",
        "INSERT INTO memberships (initiative_id, node_seq) SELECT unnest(%s::bigint[]), %s ON CONFLICT DO NOTHING",
    ),
    ("postgres:696 strpos", "postgres", "SELECT n.id FROM nodes n WHERE strpos(n.properties, %(needle)s) > 0"),
    (
        "sqlite:1209 strftime default",
        "sqlite",
        "SELECT strftime('%Y-%m-%dT%H:%M:%fZ','now')",
    ),
]


def _prepares(engine: str, sql: str, conn: Any) -> str:
    """'ok' when the engine accepts the statement: SQLite prepares it (EXPLAIN, unbound), PostgreSQL
    plans it (EXPLAIN, parameters as NULL, in a transaction rolled back)."""
    if conn is None:
        return "not checked"
    if engine == "sqlite":
        import apsw

        try:
            conn.execute("EXPLAIN " + sql)
            return "ok"
        except apsw.BindingsError:
            return "ok"  # prepared; only the (absent) parameters were missing
        except apsw.Error as exc:
            return f"refused: {exc}"
    import psycopg

    text = re.sub(r"%\(\w+\)s|%s", "NULL", sql)
    try:
        with conn.transaction(force_rollback=True):
            conn.execute("EXPLAIN " + text)
        return "ok"
    except psycopg.Error as exc:
        return f"refused: {str(exc).splitlines()[0]}"


def _value(conn: Any, sql: str) -> Any:
    row = conn.execute(sql).fetchone()
    return None if row is None else row[0]


def transpile_report() -> list[dict[str, str]]:
    """Each real statement transpiled to the other engine, and whether that engine accepts it
    (checked on a migrated vault of each backend; PostgreSQL only when a server is configured)."""
    sqlglot = _optional("sqlglot")
    if sqlglot is None:
        return []
    import apsw

    from kaeru.storage.sqlite.store import SqliteStore

    vaults = [new_vault("sqlite", "transpile", None, keep=False)]
    stores: list[Any] = [SqliteStore(vaults[0].sqlite_path)]
    conns: dict[str, Any] = {"sqlite": apsw.Connection(str(vaults[0].sqlite_path)), "postgres": None}
    try:
        try:
            pg = new_vault("postgres", "transpile", None, keep=False)
            vaults.append(pg)
            from kaeru.storage.postgres.store import PostgresStore

            stores.append(PostgresStore(pg.database_url or ""))
            import psycopg

            conns["postgres"] = psycopg.connect(pg.database_url or "", autocommit=True)
        except BackendUnavailable as exc:
            print(f"({exc}: PostgreSQL outputs are not checked)", file=sys.stderr)
        rows: list[dict[str, str]] = []
        for label, read, sql in REAL:
            write = "postgres" if read == "sqlite" else "sqlite"
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    out = sqlglot.transpile(sql, read=read, write=write)[0]
                except Exception as exc:
                    out = f"ERROR {type(exc).__name__}: {str(exc).splitlines()[0]}"
            note = "; ".join(str(w.message) for w in caught)
            accepted = _prepares(write, out, conns[write]) if not out.startswith("ERROR") else "-"
            unquoted = re.sub(r"'[^']*'", "", out)
            if accepted == "ok" and not re.search(r"\?|%s|%\(|:\w", unquoted) and conns[read] is not None:
                # No parameters: run both and compare what they answer.
                accepted += f" — {read} answers {_value(conns[read], sql)!r}, {write} {_value(conns[write], out)!r}"
            rows.append({"source": label, "to": write, "in": sql, "out": out, "accepted": accepted, "warning": note})
    finally:
        for conn in conns.values():
            if conn is not None:
                conn.close()
        for store in stores:
            store.close()
        for vault in vaults:
            vault.drop()
    for r in rows:
        print(f"\n[{r['source']}] → {r['to']}: {r['accepted']}")
        print(f"  in : {r['in']}\n  out: {r['out']}" + (f"\n  warn: {r['warning']}" if r["warning"] else ""))
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.sql_layer", description=__doc__.split("\n\n")[0])
    p.add_argument("--notes", type=int, default=10_000, help="vault size (default 10000)")
    p.add_argument("--calls", type=int, default=2_000, help="measured rounds per op (default 2000)")
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    p.add_argument("--transpile", action="store_true", help="only show how sqlglot transpiles the real statements")
    p.add_argument("--out", type=Path, default=None, help="JSON output (default bench/results/sql_layer-<time>.json)")
    args = p.parse_args(argv)
    if args.transpile:
        transpile_report()
        return
    result: dict[str, Any] = {"transpile_us": transpile_costs(), "runs": []}
    print("sqlglot transpile, SQLite → PostgreSQL, per statement (µs, warm):", result["transpile_us"])
    for backend in ("sqlite", "postgres") if args.backend == "both" else (args.backend,):
        try:
            run = run_backend(backend, args.notes, args.calls, args.warmup)
        except BackendUnavailable as exc:
            print(f"\n{backend}: {exc}")
            continue
        table = summarise(run)
        print_table(backend, table)
        hits = run["hits"]
        print(f"(selective search: {min(hits)}–{max(hits)} hits per word, {len(hits)} words)")
        result["runs"].append({"backend": backend, "notes": run["notes"], "rounds": run["rounds"], "table": table})
    out = args.out or RESULTS_DIR / f"sql_layer-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
