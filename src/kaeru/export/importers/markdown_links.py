"""Which note a `[[link]]` of a Markdown folder names, and which `[[…]]` are links at all.

Obsidian resolves `[[Meeting Notes]]` by the note's path first, then by its file name — of several
files of that name, the one closest to the folder's root — and a note's `title`, `permalink` or
`aliases` only when no file is so named. The index was built in the files' sorted order, whichever
kind of match came first winning: `[[Meeting Notes]]` went to `Archive/Meeting Notes.md` beside a
root `Meeting Notes.md`, and a note titled `zeta` took `[[zeta]]` from `zeta.md`.

Text inside code (a fenced block, an inline span) is code, not a link; `![[diagram.png]]` embeds an
attachment, which is no note and so no missing link.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath
from typing import Any

#: A fence's opening line: up to three spaces, then three or more backticks or tildes.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")
#: A file name's extension, as an embedded attachment has (`diagram.png`, `talk.mp3`, `paper.pdf`).
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")


class LinkIndex:
    """The notes of a folder by what a link may call them, in Obsidian's order of precedence."""

    def __init__(self) -> None:
        # Path, file name, then title/permalink/aliases: name → the notes so named (sorted on first use).
        self._kinds: tuple[dict[str, list[str]], ...] = ({}, {}, {})
        self._ordered = False

    def add(self, key: str, front: dict[str, Any]) -> None:
        """A note at `key` (its path without `.md`) and its front matter."""
        path, name, other = self._kinds
        path.setdefault(key.lower(), []).append(key)
        name.setdefault(PurePosixPath(key).name.lower(), []).append(key)
        aliases = front.get("aliases")
        names = [front.get("title"), front.get("permalink"), *(aliases if isinstance(aliases, list) else [aliases])]
        for alias in dict.fromkeys(str(a).strip().lower() for a in names if isinstance(a, str | int | float)):
            if alias:
                other.setdefault(alias, []).append(key)
        self._ordered = False

    def resolve(self, target: str) -> tuple[str | None, list[str]]:
        """The note `target` names, and the others it names as well (a name two notes share at the
        same depth): the first in path order is linked, as before (decision 327), and the rest said."""
        if not self._ordered:
            for kind in self._kinds:
                for keys in kind.values():
                    keys.sort(key=_closest_to_root)
            self._ordered = True
        wanted = target.strip().lower()
        if wanted.endswith(".md"):
            wanted = wanted[:-3]
        for kind in self._kinds:
            named = kind.get(wanted)
            if named:
                depth = _closest_to_root(named[0])[0]
                return named[0], [k for k in named[1:] if _closest_to_root(k)[0] == depth]
        return None, []


def _closest_to_root(key: str) -> tuple[int, str]:
    return key.count("/"), key.lower()


def is_attachment(target: str) -> bool:
    """`target` names a file that is not a note (`diagram.png`): an embed of it links no note."""
    name = target.strip().lower()
    return not name.endswith(".md") and _EXTENSION.search(name) is not None


def code_free(lines: Iterable[str]) -> Iterator[str]:
    """`lines` with fenced code blocks emptied and inline code spans taken out, so that a `[[…]]`
    written as code is not read as a link. A fence closes at a line of the same character, at least
    as long, and nothing else; an unclosed fence runs to the end, as CommonMark says."""
    fence: str | None = None
    for line in lines:
        opening = _FENCE.match(line)
        if fence is not None:
            if opening is not None and _closes(opening, fence):
                fence = None
            yield ""
        elif opening is not None and not (opening.group(1)[0] == "`" and "`" in line[opening.end() :]):
            fence = opening.group(1)
            yield ""
        else:
            yield without_code_spans(line)


def _closes(opening: re.Match[str], fence: str) -> bool:
    run = opening.group(1)
    return run[0] == fence[0] and len(run) >= len(fence) and not opening.string[opening.end() :].strip()


def without_code_spans(line: str) -> str:
    """`line` without its inline code spans: a run of backticks opens one, closed by the next run of
    the same length (a run with none after it is literal). Linear in the line: each run is looked up
    among the runs of its length, not searched for along the line (decision 414's concern)."""
    if "`" not in line:
        return line
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    by_length: dict[int, list[int]] = {}
    for i, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(i)
    kept: list[str] = []
    pos = i = 0
    while i < len(runs):
        start, end = runs[i]
        same = by_length[end - start]
        after = bisect_right(same, i)
        if after == len(same):
            i += 1
            continue
        close = same[after]
        kept.append(line[pos:start])
        pos = runs[close][1]
        i = close + 1
    kept.append(line[pos:])
    return "".join(kept)
