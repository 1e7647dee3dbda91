"""How a Ctrl-C (SIGINT) ends a command: one line on stderr and exit 130 (128 + SIGINT, what a shell
reports for a process a signal ended), never a traceback.

Click's own answer was "Aborted!" and exit 1 — the code of a failure, which a script cannot tell
from one — and a Ctrl-C while the command modules were imported, before click ran, was a Python
traceback. This module imports nothing of kaeru's or click's, so `cli/app.py` can say it whatever
was being imported when the signal came.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import NoReturn

EXIT_INTERRUPTED = 130
#: What an interrupted command says, after `error: interrupted: `.
STOPPED = "stopped by Ctrl-C (SIGINT) before it ended"


def interrupted(detail: str = STOPPED, *, as_json: bool = False) -> NoReturn:
    """Say that the command was interrupted (`detail`: what that left behind) and exit 130: one
    line on stderr, or with `as_json` the error object on stdout, as every failure outside an
    envelope is printed."""
    with contextlib.suppress(OSError, ValueError):  # a closed stream: the exit code says it
        if as_json:
            error = {"ok": False, "error": {"code": "interrupted", "message": detail}}
            sys.stdout.write(json.dumps(error, indent=2, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        else:
            # A terminal shows `^C` where the cursor was: start a line of our own.
            start = "\n" if sys.stderr.isatty() else ""
            sys.stderr.write(f"{start}error: interrupted: {detail}\n")
            sys.stderr.flush()
    raise SystemExit(EXIT_INTERRUPTED)
