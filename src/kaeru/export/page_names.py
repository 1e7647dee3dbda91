"""A markdown export's page names: a node's name as a file name that every common file system
takes, unique in the export as those file systems compare names (a wiki link names a page by its
name alone)."""

from __future__ import annotations

import re
import unicodedata

#: What separates a slug's words: anything but a letter or a digit, of any script (decision 287: an
#: ASCII-only slug turned `Größenänderung` into `gr-en-nderung` and a Russian or Japanese name into
#: nothing). Separators include every character a file system reserves (`/`, `\\`, `:`, `*`, …).
_SLUG = re.compile(r"[\W_]+")


#: Names Windows reserves for devices, whatever the extension (`con.md` cannot be created there),
#: the superscript digits among them (`COM¹`–`COM³`, `LPT¹`–`LPT³`): a slug keeps them as digits.
_DEVICE_NAMES = frozenset(
    [
        "con",
        "prn",
        "aux",
        "nul",
        *(f"{port}{digit}" for port in ("com", "lpt") for digit in "0123456789¹²³"),
    ]
)

#: The export's own files at its top (lower case): a page of that name met them in a wiki link.
FRAME_NAMES = ("readme", "index", "log")


def slug_base(name: str) -> str:
    """A page's file name: the node's name in lower case, its words joined by `-`, composed (NFC, as
    most file systems keep names), at most 60 characters; never a name Windows reserves."""
    base = _SLUG.sub("-", unicodedata.normalize("NFC", name.lower())).strip("-")[:60].strip("-") or "node"
    return f"{base}-page" if base in _DEVICE_NAMES else base


def tails(base: str, node_id: str) -> list[str]:
    """The names a page of `base` takes when a page before it holds `base`, in that order: with the
    last 8 hex digits of its node's id, then with all of them (`slug`; what `markdown._ours` recognises)."""
    hexes = node_id.replace("-", "")
    return [f"{base}-{hexes[-8:]}", f"{base}-{hexes}"]


def slug(base: str, node_id: str, taken: set[str]) -> str:
    """A page name no page before it took (`taken`, as `same` keys), anywhere in the export: a wiki
    link names a page by its name alone. A name with the id's tail was not checked, so a node named
    `dup-<tail>` and the second of two nodes named `dup` wrote one file, the later over the other,
    or two files a link could not tell apart. Names are compared as a file system that ignores case
    and normalization compares them (NTFS, APFS): `οδος` and `οδοσ` are one file there."""
    candidates = [base, *tails(base, node_id)]
    name = next((c for c in candidates if same(c) not in taken), None)
    counter = 2
    while name is None:  # a name made to meet the whole id: numbered, which only kaeru gives
        numbered = f"{candidates[-1]}-{counter}"
        name = numbered if same(numbered) not in taken else None
        counter += 1
    taken.add(same(name))
    return name


def same(rel: str) -> str:
    """`rel` as a file system that ignores case and normalization tells names apart (NFC again after
    case folding, which may leave a name decomposed)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", rel).casefold())
