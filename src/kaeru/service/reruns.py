"""When a write PostgreSQL rolled back for crossing another write runs again (`run_mutation`)."""

from __future__ import annotations

import random
import time

from kaeru.errors import Unavailable, WritesCrossed

#: How many times a write runs at most when PostgreSQL rolls it back for crossing another write
#: (`runs_again`) before its caller is told to retry.
WRITE_RUNS = 5
#: The longest pause before a write runs again, times the runs so far; jittered, so that the two
#: writes that crossed do not meet again in step.
RERUN_PAUSE_S = 0.02
#: Operations whose bodies keep what a run wrote in their caller's state (an import's map of the
#: nodes it wrote and its counts): a second run would add to it again. Such a chunk is refused
#: `unavailable` instead, and the same import again writes the rest (decision 212).
RUN_ONCE = frozenset({"import_from"})


def runs_again(exc: Unavailable, operation: str, runs: int) -> bool:
    """Whether a write refused with `exc`, run `runs` times so far, is run once more (after a short
    pause, taken here). One PostgreSQL rolled back because another write crossed it — a deadlock, a
    serialisation failure, `WritesCrossed` — is told so before its COMMIT, so nothing
    of it stands (unlike a COMMIT whose answer was lost, `CommitUnknown`), and nothing outside its
    transaction was done yet: its replay record is in it, its vectors are written after the commit.
    Of two writes that each waited for the other, the one ended finds the other committed when it
    runs again (decision 461)."""
    if not isinstance(exc, WritesCrossed) or operation in RUN_ONCE or runs >= WRITE_RUNS:
        return False
    time.sleep(random.SystemRandom().uniform(0, RERUN_PAUSE_S * runs))  # the global generator left alone
    return True
