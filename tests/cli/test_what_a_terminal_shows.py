"""What a person at a terminal reads from the commands beyond their first lines, on both backends:
`read` names a task's status and shows a stored source's description; `recall` prints the passages
it found in stored sources (and says on stderr when the sources could not be searched); `context
--task` names the task and refuses one there is not; a re-entry that leaves memories out says so on
stderr; `hygiene` prints each move, and its report is shown by the next `context` once."""

from __future__ import annotations

import re

from tests.backends import VaultSpec
from tests.cli.support import kaeru, valid_envelope, write_notes, write_tasks
from tests.recall.test_recall_surface import TRANSCRIPT, _break_layer


def test_read_names_a_tasks_status_and_shows_a_sources_description(vault: VaultSpec) -> None:
    [task] = write_tasks(vault, "desk", {"text": "renew the domain", "name": "renew"})
    [log] = write_notes(
        vault, "desk", {"text": "harbour log transcript", "kind": "reference", "source": TRANSCRIPT, "name": "log"}
    )
    shown = kaeru(vault, "read", "renew", "-i", "desk")
    assert shown.code == 0, shown.stderr
    head, facts = shown.stdout.splitlines()[:2]
    assert head.startswith(task) and "status open" in facts.split(" · "), facts
    source = kaeru(vault, "read", "log", "-i", "desk")
    assert source.code == 0, source.stderr
    lines = source.stdout.splitlines()
    assert lines[0].startswith(log) and "status" not in lines[1]
    assert "    harbour log transcript" in lines[2:4], lines[:4]  # the description, before the body
    assert source.stdout.rstrip("\n").endswith(TRANSCRIPT.rstrip())


def test_recall_prints_the_passages_found_in_sources_and_says_when_they_were_not_searched(vault: VaultSpec) -> None:
    [transcript] = write_notes(
        vault, "harbour", {"text": "harbour log transcript", "kind": "reference", "source": TRANSCRIPT}
    )
    # Apart in time, so the task's temporal neighbours never reach the transcript.
    write_notes(vault, "harbour", *(f"crew roster {i}" for i in range(8)))
    [task] = write_tasks(vault, "harbour", {"text": "ask the lighthouse keeper for the storm log", "tags": ["ask"]})
    args = ("recall", "lighthouse", "keeper", "storm", "-i", "harbour", "--tag", "ask")

    found = kaeru(vault, *args)
    assert found.code == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines[0].startswith(task)
    [line] = [n for n, text in enumerate(lines) if text.startswith(f"{transcript}  source     ")]
    offset, chars = map(int, re.findall(r"\(at (\d+) of (\d+)\)$", lines[line])[0])
    assert chars == len(TRANSCRIPT) and offset > 0
    assert lines[line + 1].startswith("    ") and "lighthouse keeper logged the storm" in lines[line + 1]
    assert "sources not searched" not in found.stderr

    _break_layer(vault, transcript)  # a damaged source row: the curated hits stay
    broken = kaeru(vault, *args)
    assert broken.code == 0, broken.stderr
    assert broken.stdout.splitlines()[0].startswith(task) and " source " not in broken.stdout
    assert "(sources not searched: internal: the sources could not be searched" in broken.stderr, broken.stderr
    document = valid_envelope(kaeru(vault, *args, as_json=True), "recall", "read", "ok")
    assert document["data"]["raw_hits_error"].startswith("internal: ")


def test_context_for_a_task_and_what_a_small_budget_leaves_out(vault: VaultSpec) -> None:
    [task] = write_tasks(vault, "ship", {"text": "cut the release branch", "name": "release"})
    write_notes(
        vault, "ship", *(f"release note {i}: " + "the changelog grew by one more line. " * 30 for i in range(6))
    )
    focused = valid_envelope(
        kaeru(vault, "context", "ship", "--task", "release", as_json=True), "context", "read", "ok"
    )
    assert focused["data"]["task"] == task
    missing = kaeru(vault, "context", "ship", "--task", "no-such-task")
    assert missing.code == 2 and missing.stdout == "", missing.stdout
    assert "not_found [task]" in missing.stderr, missing.stderr

    small = kaeru(vault, "context", "ship", "--budget", "512")
    assert small.code == 0, small.stderr
    said = re.findall(r"^\(omitted (\d+) (\w+): (\w+) — [^\n]+\)$", small.stderr, re.MULTILINE)
    document = valid_envelope(kaeru(vault, "context", "ship", "--budget", "512", as_json=True), "context", "read", "ok")
    expected = [(str(o["count"]), o["section"], o["reason"]) for o in document["coverage"]["omitted"]]
    assert said == expected and expected, small.stderr


def test_hygiene_prints_its_moves_and_the_next_context_shows_its_report_once(vault: VaultSpec) -> None:
    # One core node past the cap of 15: hygiene drops the oldest to hot, whatever their age.
    write_notes(vault, "tidy", *({"text": f"core fact {i}", "options": {"layer": "core"}} for i in range(16)))
    tidied = kaeru(vault, "hygiene", "-i", "tidy")
    assert tidied.code == 0, tidied.stderr
    [move] = tidied.stdout.splitlines()
    assert re.fullmatch(r".+: core → hot \(.+\)", move), move
    assert "1 node(s) moved" in tidied.stderr
    first = kaeru(vault, "context", "tidy")
    assert first.code == 0, first.stderr
    notice = first.stdout.split("\n== ", 1)[0]  # the notices come before the first section
    assert notice.startswith("! Hygiene moved 1 node(s)"), first.stdout
    assert f"- {move.split(':')[0]} (" in notice and ": core → hot (" in notice, notice
    again = kaeru(vault, "context", "tidy")
    assert not [line for line in again.stdout.splitlines() if line.startswith("! ")], "shown once"
