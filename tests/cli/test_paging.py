"""Paging and scores from the terminal: `recall` takes the `--cursor` its own "(more: …)" line names,
a page after the first says what a one-shot command does instead of the tools' "this server no
longer held …", and `recall --explain` prints each hit's per-channel scores."""

from __future__ import annotations

import re

import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru, write_notes

pytestmark = pytest.mark.timeout(300)


def _cursor(stderr: str) -> str:
    """The cursor of the "(more: repeat this command with --cursor …)" line."""
    found = re.search(r"\(more: repeat this command with --cursor (\S+)\)", stderr)
    assert found, stderr
    return found.group(1)


def _ids(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines() if line and not line.startswith(" ")]


def test_recall_pages_with_the_cursor_its_hint_names(vault: VaultSpec) -> None:
    """recall printed "repeat this command with --cursor …" and had no --cursor (exit 2)."""
    write_notes(vault, "p", *(f"deploy note {n}" for n in range(12)))
    first = kaeru(vault, "recall", "-i", "p", "deploy", "--limit", "3")
    assert first.code == 0 and len(_ids(first.stdout)) == 3
    second = kaeru(vault, "recall", "-i", "p", "deploy", "--limit", "3", "--cursor", _cursor(first.stderr))
    assert second.code == 0, second.stderr
    assert len(_ids(second.stdout)) == 3 and not set(_ids(first.stdout)) & set(_ids(second.stdout))


def test_a_later_page_says_it_was_ranked_again_without_naming_a_server(vault: VaultSpec) -> None:
    """A rest longer than a cursor carries is held by the process that ranked it, and each kaeru
    command is a new one: every such page is ranked again. It said `cursor_invalid: this server no
    longer held the cursor's result list …` every time."""
    write_notes(vault, "p", *(f"deploy note {n}" for n in range(40)))
    first = kaeru(vault, "search", "-i", "p", "deploy", "--limit", "5")
    second = kaeru(vault, "search", "-i", "p", "deploy", "--limit", "5", "--cursor", _cursor(first.stderr))
    assert second.code == 0 and len(_ids(second.stdout)) == 5, second.stderr
    assert not set(_ids(first.stdout)) & set(_ids(second.stdout))
    assert "server" not in second.stderr and "cursor_invalid" not in second.stderr, second.stderr
    assert "(this page comes from running the search again, as every kaeru command is a new process" in second.stderr
    # --json keeps the tool's envelope as it is, its warning included.
    paged = kaeru(vault, "search", "-i", "p", "deploy", "--limit", "5", "--cursor", _cursor(first.stderr), as_json=True)
    assert [i["code"] for i in paged.json()["issues"]] == ["cursor_invalid"]


def test_recall_explain_prints_each_hits_scores(vault: VaultSpec) -> None:
    """--explain ("Show each hit's per-channel scores") printed exactly what recall prints without it."""
    write_notes(vault, "app", "We chose SQLite because it needs no server", "Never push on Fridays")
    plain = kaeru(vault, "recall", "-i", "app", "SQLite", "server")
    explained = kaeru(vault, "recall", "-i", "app", "SQLite", "server", "--explain")
    scores = kaeru(vault, "recall", "-i", "app", "SQLite", "server", "--explain", as_json=True).json()["data"][
        "explain"
    ]
    assert "scores:" not in plain.stdout
    lines = explained.stdout.splitlines()
    assert set(_ids(explained.stdout)) == set(scores)
    for hit_id, channels in scores.items():
        below = lines[lines.index(next(line for line in lines if line.startswith(hit_id))) + 1]
        assert below.startswith("    scores: "), explained.stdout
        printed = dict(pair.split("=") for pair in below.split()[1:])
        assert list(printed) == list(channels), below  # every channel, in the order of data.explain
        assert all(float(value) >= 0 for value in printed.values()), below
