"""A command that makes one call opens the vault with no in-memory copies of common words; the
server and the viewer, which answer many, keep them (decision 268).

A copy is read whole — every row holding the word and the size of every row — so that the calls
after the first rank from memory: a `kaeru recall` at 100k nodes spent a third of its time reading
copies it then threw away, and twice the memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from kaeru.cli.app import cli
from kaeru.cli.common import store_of
from kaeru.config import Settings
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store


def _recording(opened: list[int]) -> Any:
    def opener(settings: Settings, **options: Any) -> Store:
        opened.append(settings.search_cache_mb)
        return open_store(settings, **options)

    return opener


def test_note_search_and_recall_from_a_shell_read_no_copies(tmp_path: Path) -> None:
    opened: list[int] = []
    runner = CliRunner()
    env = {"KAERU_VAULT": str(tmp_path), "KAERU_SEARCH_CACHE_MB": "128"}
    for args in (
        ["note", "-i", "shell", "the harbour ledger was reviewed"],
        ["search", "-i", "shell", "ledger"],
        ["recall", "-i", "shell", "what happened to the ledger"],
    ):
        done = runner.invoke(cli, args, obj={"open_store": _recording(opened)}, env=env)
        assert done.exit_code == 0, done.output
        assert "ledger" in done.output or args[0] == "note"  # found by SQL alone
    assert opened == [0, 0, 0]


def test_a_lasting_process_keeps_the_copies_it_was_given(tmp_path: Path) -> None:
    settings = Settings.from_env({"KAERU_VAULT": str(tmp_path), "KAERU_SEARCH_CACHE_MB": "128"})
    for lasting, expected in ((True, 128), (False, 0)):
        opened: list[int] = []
        ctx = click.Context(cli, obj={"settings": settings, "open_store": _recording(opened)})
        with ctx:
            store_of(ctx, lasting=lasting)
        assert opened == [expected]
