"""`bench.cli` runs every command from a shell on a scratch vault and reports each one.

The report's shape only: benchmarks are never timed assertions (what the commands print is tested
in tests/cli/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench import cli


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_every_command_runs_and_is_reported(tmp_path: Path) -> None:
    figures = cli.main(["--runs", "1", "--notes", "5", "--workdir", str(tmp_path)])
    assert set(figures) == set(cli.commands(tmp_path, 0))
    assert figures["python"]["over_python_p50"] == 0
    assert all(0 < f["wall_p50"] <= f["wall_p95"] and f["cpu_p50"] > 0 for f in figures.values())
    assert not list(tmp_path.iterdir())  # the scratch vault is gone


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_kept_vault_is_measured_on_a_copy_with_its_own_words(tmp_path: Path) -> None:
    """`--vault`: the commands ask a sentence of the initiative's newest long note, and the kept vault
    is not written (the copy takes the `note`s)."""
    kept = tmp_path / "kept"
    cli.build(kept, 3)
    long_text = "ledger " + " ".join(["harbour", "review", "deploy", "budget", "incident", "schema"] * 7)
    _note(kept, long_text)
    before = (kept / "vault.sqlite3").stat().st_mtime_ns
    asked = cli.asked_of(kept, cli.INITIATIVE)
    assert asked.sentence.split() == long_text.split()[:8] and asked.word == "ledger"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    figures = cli.main(["--runs", "1", "--vault", str(kept), "--initiative", cli.INITIATIVE, "--workdir", str(scratch)])
    assert set(figures) == set(cli.commands(kept, 0))
    assert (kept / "vault.sqlite3").stat().st_mtime_ns == before
    assert not list(scratch.iterdir())


def _note(vault: Path, text: str) -> None:
    from kaeru.api.requests import parse
    from kaeru.config import Settings
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    settings = Settings.from_env({"KAERU_VAULT": str(vault)})
    service = Service(open_store(settings), settings)
    try:
        service.note(parse("note", {"initiative": cli.INITIATIVE, "text": text, "name": "long-note"}))
    finally:
        service.store.close()
