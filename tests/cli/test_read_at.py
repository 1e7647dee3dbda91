"""`kaeru read --at`: `now` is a moment, and a moment it cannot read names the forms it takes once
(the hint was printed twice, and `now` refused: CLI probe, session 38)."""

from __future__ import annotations

from tests.backends import VaultSpec
from tests.cli.support import kaeru, write_notes


def test_read_at_now_and_a_moment_it_cannot_read(vault: VaultSpec) -> None:
    write_notes(vault, "p", {"name": "Plan", "text": "the plan as it is"})
    now = kaeru(vault, "read", "Plan", "-i", "p", "--at", "now")
    assert now.code == 0 and "the plan as it is" in now.stdout, now.stderr
    wrong = kaeru(vault, "read", "Plan", "-i", "p", "--at", "yesterdayish")
    assert wrong.code == 2 and wrong.stderr.count("RFC 3339") == 1, wrong.stderr
