"""`kaeru bench` as a person runs it: figures for every call an agent makes, taken on a scratch vault
of the configured backend that is gone afterwards, and the real vault never touched."""

from __future__ import annotations

import uuid

import pytest

from tests.backends import VaultSpec
from tests.cli.support import error_object, kaeru, write_notes

pytestmark = pytest.mark.timeout(300)

OPERATIONS = ["note", "read", "search_rare", "search_common", "recall_rare", "recall_common", "context"]


def _scratch_databases(vault: VaultSpec) -> set[str]:
    """The benchmark's scratch databases present on the vault's PostgreSQL server."""
    import psycopg

    assert vault.database_url
    with psycopg.connect(vault.database_url, autocommit=True) as conn:
        rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'kaeru\\_bench\\_%'").fetchall()
    return {r[0] for r in rows}


def test_bench_measures_every_call_on_a_scratch_vault_and_leaves_the_vault_alone(vault: VaultSpec) -> None:
    [heron_id] = write_notes(vault, "mine", "the heron waits by the pond")  # in process: the bench is the subject
    before = _scratch_databases(vault) if vault.backend == "postgres" else set()

    run = kaeru(vault, "bench", "--notes", "60", "--calls", "4", as_json=True)
    assert run.code == 0, run.stderr
    document = run.json()
    assert document["ok"] is True and document["backend"] == vault.backend
    assert document["notes"] == 60 and document["calls"] == 4 and document["build_seconds"] > 0
    assert list(document["operations"]) == OPERATIONS
    for op, row in document["operations"].items():
        assert row["calls"] == 4, op
        assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"], (op, row)
        assert row["cpu_p50_ms"] > 0, (op, row)
    # The two searches are what their names say: a common word finds many more nodes than a rare one.
    assert document["operations"]["search_rare"]["matched_p50"] < document["operations"]["search_common"]["matched_p50"]
    assert document["environment"]["kaeru"] and document["environment"]["python"]

    # The configured vault got none of the synthetic notes, and the scratch database is gone.
    hits = kaeru(vault, "search", "heron", "-i", "mine", "-i", "bench-main", as_json=True).json()
    assert [h["id"] for h in hits["data"]["hits"]] == [heron_id]
    assert [i["code"] for i in hits["issues"]] == ["unknown_initiative"]
    if vault.backend == "postgres":
        assert _scratch_databases(vault) == before


def test_bench_prints_a_table_and_refuses_bad_sizes(vault: VaultSpec) -> None:
    human = kaeru(vault, "bench", "--notes", "30", "--calls", "2")
    assert human.code == 0, human.stderr
    assert f"scratch {vault.backend} vault of 30 synthetic notes" in human.stdout
    for op in OPERATIONS:
        assert any(line.split()[:1] == [op] and len(line.split()) >= 5 for line in human.stdout.splitlines()), op

    tiny = kaeru(vault, "bench", "--notes", "5")
    assert tiny.code == 2 and "--notes" in tiny.stderr
    none = kaeru(vault, "bench", "--calls", "0")
    assert none.code == 2 and "--calls" in none.stderr


def test_bench_on_postgres_without_createdb_says_so_and_sqlite_still_works(vault: VaultSpec) -> None:
    if vault.backend != "postgres":
        pytest.skip("a PostgreSQL role's privileges")
    import psycopg
    from psycopg import sql

    assert vault.database_url
    role = f"kaeru_nocreate_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(vault.database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'p' NOCREATEDB").format(sql.Identifier(role)))
    try:
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(vault.database_url)
        host = parts.hostname or "localhost"
        netloc = f"{role}:p@{host}" + (f":{parts.port}" if parts.port else "")
        limited = {"KAERU_VAULT": str(vault.vault_dir), "KAERU_DATABASE_URL": urlunsplit(parts._replace(netloc=netloc))}

        refused = kaeru(limited, "bench", "--notes", "20", "--calls", "1", as_json=True)
        message = error_object(refused, "unavailable", 1)
        assert "CREATEDB" in message and "--sqlite" in message

        # A wrong password, or a server that does not answer, is a connection failure, said as one.
        wrong = {
            **limited,
            "KAERU_DATABASE_URL": urlunsplit(parts._replace(netloc=f"{role}:wrong@{host}:{parts.port}")),
        }
        unreachable = {**limited, "KAERU_DATABASE_URL": f"postgresql://{role}:p@127.0.0.1:1/nowhere"}
        for where in (wrong, unreachable):
            failed = error_object(
                kaeru(where, "bench", "--notes", "20", "--calls", "1", as_json=True), "unavailable", 1
            )
            assert failed.startswith("cannot connect to postgresql://") and "CREATEDB" not in failed, failed
            assert ":***@" in failed and ":wrong@" not in failed, failed

        fallback = kaeru(limited, "bench", "--notes", "20", "--calls", "1", "--sqlite", as_json=True)
        assert fallback.code == 0, fallback.stderr
        assert fallback.json()["backend"] == "sqlite"
    finally:
        with psycopg.connect(vault.database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_bench_runs_on_a_vault_whose_url_sets_its_own_schema(vault: VaultSpec) -> None:
    """The README's team set-up (`?options=-csearch_path%3Dkaeru`): the scratch database keeps the
    URL's options, so the schema is made there too; the bench failed `internal: InvalidSchemaName`."""
    if vault.backend != "postgres":
        pytest.skip("a PostgreSQL search_path")
    import psycopg

    assert vault.database_url
    with psycopg.connect(vault.database_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA kaeru")
    before = _scratch_databases(vault)
    schema_url = vault.database_url + ("&" if "?" in vault.database_url else "?") + "options=-csearch_path%3Dkaeru"
    own_schema = {"KAERU_VAULT": str(vault.vault_dir), "KAERU_DATABASE_URL": schema_url}
    write_notes(own_schema, "mine", "the heron waits by the pond")  # the vault made in that schema, in process
    run = kaeru(own_schema, "bench", "--notes", "20", "--calls", "1", as_json=True)
    assert run.code == 0, (run.stdout, run.stderr)
    assert run.json()["ok"] is True and list(run.json()["operations"]) == OPERATIONS
    assert _scratch_databases(vault) == before
