"""What short memories cost on disk on PostgreSQL: `python -m bench.disk_pg`.

`bench.disk` measures the SQLite vault a laptop keeps; a team's vault is a PostgreSQL database, and
nothing measured its size. Here a `kaeru serve` subprocess on a fresh database (made on the server
`KAERU_BENCH_DATABASE_URL` or `KAERU_TEST_DATABASE_URL` names, dropped after unless `--keep`) gets
`--notes` short memories over stdio, as `bench.disk` writes them (~150 characters, one `note` with a
request id each, three initiatives). Then, after the server exits:

- `VACUUM ANALYZE` and a `CHECKPOINT`, and every kaeru relation's size with its indexes and TOAST
  (`pg_total_relation_size`), per node, beside the stored text and metadata per node (name, body,
  description, tags, properties), as `bench.disk` counts it;
- the same after `REINDEX DATABASE`: the difference is index pages the incremental inserts left
  half used or free (a GIN index's pending list, flushed and freed, keeps its pages: a fixed
  amount, so it weighs less per node as the vault grows).

Nothing here is a target: it says where a PostgreSQL vault's bytes go.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.disk import ShortMemories, _write
from bench.measure import RawStdioClient
from bench.vaults import BackendUnavailable, new_vault

#: The relations kaeru owns: everything outside PostgreSQL's own schemas.
_RELATIONS = (
    "SELECT c.relname, pg_total_relation_size(c.oid), pg_relation_size(c.oid) FROM pg_class c "
    "JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname NOT IN ('pg_catalog', "
    "'information_schema') AND ns.nspname NOT LIKE 'pg_toast%' AND c.relkind IN ('r', 'm') ORDER BY 2 DESC"
)
_INDEXES = (
    "SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid) FROM pg_index i "
    "WHERE i.indrelid = 'nodes'::regclass ORDER BY 2 DESC"
)
_TEXT = (
    "SELECT coalesce(sum(octet_length(name) + octet_length(body) + octet_length(coalesce(description, '')) "
    "+ octet_length(tags::text) + octet_length(properties::text)), 0), count(*) FROM nodes"
)


def _sizes(url: str, nodes: int) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        conn.execute("CHECKPOINT")
        relations = conn.execute(_RELATIONS).fetchall()
        indexes = conn.execute(_INDEXES).fetchall()
        database = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    total = sum(int(r[1]) for r in relations)
    return {
        "database_bytes": int(database[0]) if database else None,
        "bytes_per_node": round(total / nodes),
        "by_relation": {str(r[0]): {"total": round(r[1] / nodes), "heap": round(r[2] / nodes)} for r in relations},
        "nodes_indexes": {str(r[0]): round(r[1] / nodes) for r in indexes},
    }


def measure(url: str, vault: Path, notes: int, errlog: Any) -> dict[str, Any]:
    import psycopg

    env = {k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}
    env.update({"KAERU_VAULT": str(vault), "KAERU_DATABASE_URL": url})
    client = RawStdioClient(env, errlog)
    latencies = sorted(_write(client, ShortMemories(), 0, notes))
    client.close()
    with psycopg.connect(url) as conn:
        row = conn.execute(_TEXT).fetchone()
    assert row is not None
    text, nodes = int(row[0]), int(row[1])
    written = _sizes(url, nodes)
    with psycopg.connect(url, autocommit=True) as conn:
        name = conn.execute("SELECT current_database()").fetchone()
        assert name is not None
        conn.execute(f'REINDEX DATABASE "{name[0]}"')
    return {
        "notes": notes,
        "nodes": nodes,
        "stored_text_bytes_per_node": round(text / max(nodes, 1)),
        "note_ms_p50": round(latencies[len(latencies) // 2], 2),
        "note_ms_p95": round(latencies[int(len(latencies) * 0.95)], 2),
        "as_written": written,
        "reindexed": _sizes(url, nodes),
        "load_average": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.disk_pg", description=__doc__.split("\n\n")[0])
    p.add_argument("--notes", type=int, default=5000, help="short memories written over stdio (default 5000)")
    p.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    p.add_argument("--keep", action="store_true", help="keep the database (its URL is printed)")
    a = p.parse_args(argv)
    try:
        vault = new_vault("postgres", "disk", None, a.keep)
    except BackendUnavailable as exc:
        print(exc, file=sys.stderr)
        return 2
    assert vault.database_url is not None
    try:
        with tempfile.TemporaryFile() as errlog:
            print(f"writing {a.notes:,} short memories over stdio …", file=sys.stderr, flush=True)
            result = measure(vault.database_url, vault.vault_dir, a.notes, errlog)
    finally:
        vault.drop()
    text = result["stored_text_bytes_per_node"]
    print(
        f"{result['nodes']:,} nodes, stored text and metadata {text:,} bytes a node; "
        f"note over stdio p50 {result['note_ms_p50']} ms, p95 {result['note_ms_p95']} ms; "
        f"load average {result['load_average']:.2f}"
    )
    for label in ("as_written", "reindexed"):
        sizes = result[label]
        print(
            f"{label.replace('_', ' ')}: {sizes['bytes_per_node']:,} bytes a node "
            f"({sizes['bytes_per_node'] / max(text, 1):.1f}× the text), database {sizes['database_bytes'] / 2**20:.2f} MiB"
        )
        for name, b in list(sizes["by_relation"].items())[:8]:
            print(f"    {b['total']:>7,}  (heap {b['heap']:>6,})  {name}")
        print("    indexes of nodes: " + ", ".join(f"{n} {b:,}" for n, b in sizes["nodes_indexes"].items()))
    if a.keep:
        print(f"kept: {vault.database_url}")
    if a.out:
        a.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
