"""Which refused writes `run_mutation` runs again by itself (decisions 461, 466).

PostgreSQL rolls a write back when another write crosses it (a deadlock, a serialisation failure),
before its COMMIT: nothing of it stands, so it runs again whole, a few times; the backend raises
`kaeru.errors.WritesCrossed` for it. Every other refusal goes back to the caller: a COMMIT whose
answer was lost may stand, and an import's chunks keep the map of what they wrote outside the
transaction, so running one again would count it twice. The first case cannot be forced through a
real database on demand here (tests/storage/test_slot_races.py provokes it by racing writers); the
rule itself is asked directly."""

from __future__ import annotations

from kaeru.errors import CommitUnknown, Unavailable, WritesCrossed
from kaeru.service.reruns import WRITE_RUNS, runs_again


def test_a_write_crossed_by_another_runs_again_a_few_times() -> None:
    crossed = WritesCrossed("two writes waited for each other")
    assert all(runs_again(crossed, "note", runs) for runs in range(1, WRITE_RUNS))
    assert not runs_again(crossed, "note", WRITE_RUNS)
    assert runs_again(crossed, "hygiene", 1)  # a pass keeps no state across runs (466)


def test_other_refusals_and_imports_go_back_to_the_caller() -> None:
    assert not runs_again(Unavailable("the vault is busy"), "note", 1)
    assert not runs_again(CommitUnknown("the answer to COMMIT was lost"), "note", 1)
    assert not runs_again(WritesCrossed("crossed"), "import_from", 1)
