"""What the CLI prints to a person is stored text made harmless for a terminal (`shown`), and what it
prints as JSON carries no character a terminal acts on (`json_text`).

A note's body or description may hold any character but NUL (names and tags refuse control
characters; bodies are free text, and an import or another writer may put anything there). Printed
raw, `\\r` followed by ESC `[2K` erased a rule's first sentence on screen and showed another in its
place; OSC 52 wrote the person's clipboard, OSC 0 the window's title; click strips only CSI colour
codes, and only when the output is no terminal. So every human printer of stored text passes it
through `shown`, which writes each such character as an escape a person can read: C0 controls but
newline and tab, DEL and the C1 controls as `\\x1b`, `\\r`, `\\x9b`; the bidirectional embeddings,
overrides and isolates (U+202A–U+202E, U+2066–U+2069) as `\\u202e`, since a terminal that orders
text by direction would show a rule's words in another order than stored ("Trojan Source",
CVE-2021-42574). Right-to-left text needs none of them — the marks (U+200E, U+200F, U+061C) are
kept — and the exact text is in `--json`.

Escapes, not the control pictures (U+241B ␛): they are ASCII, so every terminal font shows them,
and they read as the JSON and Python spelling of the same character. A body that holds the four
characters `\\x1b` as text prints the same as one holding ESC: `--json` tells them apart.

A carriage return right before a newline (a Windows text file's line end), or last in the text (what
is printed ends with a newline), is kept: it moves the cursor to where the newline takes it anyway,
and a CRLF file would otherwise print `\\r` on each line.
"""

from __future__ import annotations

import codecs
import re
import sys

import click

#: What a terminal acts on: C0 controls but tab and newline, DEL, C1 controls, and the bidi
#: embeddings, overrides and isolates; a carriage return before a newline, or last, is a line end.
_ACTED_ON = re.compile("\r(?!\n|\\Z)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: Named escapes, as JSON and Python write them; any other character is written by its code.
_NAMED = {"\r": "\\r", "\x08": "\\b", "\x0c": "\\f", "\x0b": "\\v"}
#: What JSON leaves raw that a terminal acts on (json.dumps escapes C0 already): DEL, C1, bidi.
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """`text` with every character a terminal acts on written as a visible escape (module docstring);
    newlines and tabs kept."""
    return _ACTED_ON.sub(_escape, text)


def json_text(document: str) -> str:
    """JSON text with DEL, the C1 controls and the bidi controls written as `\\u…` escapes: the same
    JSON value, parsed back exactly, and nothing in it a terminal acts on (json.dumps with
    `ensure_ascii=False` writes those characters raw; every one sits inside a string, where the
    escape means the character itself)."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", document)


def speaks_utf8(*, err: bool = False) -> bool:
    """Whether standard output (or error) is written in UTF-8, so every character reaches it as itself."""
    encoding = getattr(sys.stderr if err else sys.stdout, "encoding", None) or "utf-8"
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def printed(text: str, *, err: bool = False) -> str:
    """`shown(text)` as standard output (or error) prints it: where its encoding is not UTF-8, each
    character it lacks as its backslash escape (`\\u6771`), as `cli/streams.py` writes it, so that
    a column is padded by what the terminal will show."""
    text = shown(text)
    if speaks_utf8(err=err):
        return text
    encoding = getattr(sys.stderr if err else sys.stdout, "encoding", None) or "utf-8"
    return text.encode(encoding, "backslashreplace").decode(encoding)


def say(text: str, *, err: bool = False) -> None:
    """Print a line holding stored text, `shown`."""
    click.echo(shown(text), err=err)
