"""An import that makes an initiative the vault knows under another name, or one close to a name
the vault holds, says so (`new_initiative`, with the did-you-mean a write gives): SPEC 1.3, one
project must not silently split across spellings. Before, an archive exported before `alpha` was
renamed `alpha2` made a second, empty `alpha` holding the old slot, and an archive's `Alpha` made
itself beside the vault's `alpha`, both `applied` without a word. Decision 463."""

from __future__ import annotations

from typing import Any

from tests.export.paired_vaults import Run, runs

__all__ = ["runs"]  # the fixture, shared with tests/service/test_former_names_answers.py


def _new_initiatives(envelope: dict[str, Any]) -> list[str]:
    return [i["message"] for i in envelope["issues"] if i["code"] == "new_initiative"]


def test_an_archive_from_before_a_rename_says_where_the_name_went(runs: tuple[Run, Run]) -> None:
    run, _ = runs
    run("note", {"initiative": "alpha", "text": "the handoff text", "name": "h", "options": {"slot": "handoff"}})
    assert run("archive", {"action": "export", "path": "a.amg"})["state"] == "applied"
    assert run("initiative", {"initiative": "alpha", "action": "rename", "to": "alpha2"})["state"] == "applied"

    done = run("archive", {"action": "import", "path": "a.amg"})
    [said] = _new_initiatives(done)
    assert "'alpha' was renamed to 'alpha2'" in said and "merge" in said, said


def test_an_archive_spelling_an_initiative_otherwise_is_told_the_vaults_spelling(runs: tuple[Run, Run]) -> None:
    run, other = runs
    other("note", {"initiative": "Alpha", "text": "written upper"})
    assert other("archive", {"action": "export", "path": "b.amg"})["state"] == "applied"
    run("note", {"initiative": "alpha", "text": "written lower"})

    done = run("archive", {"action": "import", "path": "b.amg"})
    [said] = _new_initiatives(done)
    assert "created a new initiative 'Alpha'" in said and "Did you mean 'alpha'?" in said, said


def test_an_import_into_a_new_vault_makes_its_initiatives_without_a_word(runs: tuple[Run, Run]) -> None:
    run, other = runs
    run("note", {"initiative": "beta", "text": "one"})
    run("note", {"initiative": "beta2", "text": "two"})
    assert run("archive", {"action": "export", "path": "c.amg"})["state"] == "applied"
    done = other("archive", {"action": "import", "path": "c.amg"})
    assert done["state"] == "applied" and _new_initiatives(done) == [], done["issues"]
