"""Standard output and error guarded for the whole command (`KaeruGroup.main`, decision 170): a
reader that went away, or a full disk, ends no command between its work and its report; nor does a
character the terminal's encoding lacks (`ESCAPED`)."""

from __future__ import annotations

import codecs
import contextlib
import os
from typing import Any

#: The error handler of standard output and error. Under a locale whose encoding lacks a character
#: kaeru prints (Latin-1 has no `…` or `東`, EUC-JP no `·`) a write raised UnicodeEncodeError: a
#: traceback and half the output. Such a character is written as its escape (`\u2026`), as Python's
#: `backslashreplace` writes it; a byte the command line or a file name held that was not in the
#: locale's encoding (a lone surrogate U+DC80–U+DCFF, `surrogateescape`) is written back as that byte.
ESCAPED = "kaeru.escaped"
#: The handlers a stream gets by default, replaced by `ESCAPED`; one a user chose (PYTHONIOENCODING
#: `…:replace`) is kept.
_DEFAULT_HANDLERS = ("strict", "surrogateescape")


def _escaped(error: UnicodeError) -> tuple[str | bytes, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    char = error.object[error.start]
    if 0xDC80 <= ord(char) <= 0xDCFF:
        return bytes([ord(char) - 0xDC00]), error.start + 1
    escaped, _ = codecs.backslashreplace_errors(UnicodeEncodeError(error.encoding, char, 0, 1, error.reason))
    return escaped, error.start + 1


codecs.register_error(ESCAPED, _escaped)


def escaping(stream: Any) -> None:
    """Give `stream` the `ESCAPED` handler, unless it has one a user chose or cannot take one."""
    if getattr(stream, "errors", None) in _DEFAULT_HANDLERS:
        with contextlib.suppress(AttributeError, ValueError, OSError):  # no `reconfigure`, closed
            stream.reconfigure(errors=ESCAPED)


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
        escaping(stream)
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
