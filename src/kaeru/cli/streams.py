"""Standard output and error guarded for the whole command (`KaeruGroup.main`, decision 170): a
reader that went away, or a full disk, ends no command between its work and its report."""

from __future__ import annotations

import contextlib
import os
from typing import Any


class GuardedOutput:
    """Standard output (or error) that outlives its reader: the first write or flush that fails (the reader went
    away, the disk is full) is kept in `failures` and everything after it dropped, so a command is
    never cut short between its work and its report; `KaeruGroup.main` says what happened at the end.
    Bytes written to `buffer` directly (the MCP stdio transport's) pass unguarded."""

    def __init__(self, stream: Any, failures: list[OSError], fd: int) -> None:
        self.closed_at_start = stream is None  # `>&-`: nobody reads it, as after `| head -1`
        if stream is None:
            self.hold(fd)
            stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (as long as the command)
        self._stream = stream
        self._failures = failures

    @staticmethod
    def hold(fd: int) -> None:
        """Open the closed standard descriptor `fd` on os.devnull: a file the command opens (the vault,
        an archive) would take its number, and get what is written there."""
        with contextlib.suppress(OSError):
            os.fstat(fd)
            return
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)

    def write(self, text: str) -> int:
        if not self._failures:
            try:
                written: int = self._stream.write(text)
                return written
            except OSError as error:
                self._failures.append(error)
        return len(text)

    def flush(self) -> None:
        if not self._failures:
            try:
                self._stream.flush()
            except OSError as error:
                self._failures.append(error)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
