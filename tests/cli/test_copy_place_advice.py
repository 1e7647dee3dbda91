"""A place that cannot hold a vault is refused with advice that fits how the place was named:
`kaeru copy --to PLACE` (or `--from`) said "…; set KAERU_VAULT", a setting that names another
vault, and setting it changed nothing about the copy. Now the copy names its own option, and the
vault a command opens names both ways it is named (`--vault` or KAERU_VAULT). SQLite only: a
PostgreSQL URL names no folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.support import kaeru, write_notes


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A vault to copy from, a file where a folder should be, a vault file that is a folder."""
    write_notes({"KAERU_VAULT": str(tmp_path / "source")}, "doc", "the heron waits by the weir")
    (tmp_path / "plain").write_text("a file, not a folder")
    (tmp_path / "folder" / "vault.sqlite3").mkdir(parents=True)
    return {"source": tmp_path / "source", "under_a_file": tmp_path / "plain" / "v", "folder": tmp_path / "folder"}


def test_a_copy_target_that_cannot_hold_a_vault_names_the_option_that_named_it(places: dict[str, Path]) -> None:
    for target, why in ((places["under_a_file"], "is a file, not a folder"), (places["folder"], "(it is a folder)")):
        human = kaeru({}, "copy", "--from", str(places["source"]), "--to", str(target))
        assert human.code == 1 and why in human.stderr and str(target) in human.stderr, human.stderr
        assert human.stderr.rstrip().endswith("name another folder with --to"), human.stderr
        assert "KAERU_VAULT" not in human.stderr and "Traceback" not in human.stderr
        as_json = kaeru({}, "copy", "--from", str(places["source"]), "--to", str(target), as_json=True)
        error = as_json.json()["error"]
        assert as_json.code == 1 and error["code"] == "unavailable", as_json.stdout
        assert error["message"].endswith("name another folder with --to"), error


def test_a_copy_source_that_cannot_be_a_vault_names_from(places: dict[str, Path], tmp_path: Path) -> None:
    run = kaeru({}, "copy", "--from", str(places["folder"]), "--to", str(tmp_path / "new"))
    assert run.code == 1 and "(it is a folder)" in run.stderr, run.stderr
    assert run.stderr.rstrip().endswith("name another folder with --from") and "KAERU_VAULT" not in run.stderr


def test_the_vault_a_command_opens_names_both_ways_to_name_it(places: dict[str, Path]) -> None:
    """Named by `--vault` or by KAERU_VAULT (or the default place, which either moves): both are
    named, since "set KAERU_VAULT" does nothing while `--vault` is given."""
    place = str(places["under_a_file"])
    for run in (
        kaeru({}, "--vault", place, "note", "-i", "doc", "hi"),
        kaeru({"KAERU_VAULT": place}, "note", "-i", "doc", "hi"),
    ):
        assert run.code == 1 and "is a file, not a folder" in run.stderr, run.stderr
        assert run.stderr.rstrip().endswith("name another folder with --vault or KAERU_VAULT"), run.stderr
