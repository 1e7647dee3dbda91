"""What the command line and standard input hand kaeru, made text by one rule whatever the locale.

Python decodes the command line, and a text stream, in the locale's encoding. Under a Latin-1 or
EUC-JP locale (or `LANG=C` without Python's UTF-8 mode) UTF-8 bytes — a script saved as UTF-8,
an agent, a UTF-8 file piped in — were stored as mojibake, silently (`東京` as `æ\\x9d±äº¬`,
C1 controls included), or refused as "not UTF-8" when they were. Which reading wins depends on
the locale's encoding:

- a single-byte one (Latin-1, ASCII under `LANG=C`, …): bytes that are valid UTF-8 are read as
  UTF-8, and only other bytes in the locale's encoding. A Latin-1 terminal's `café` (one byte 0xE9,
  never valid UTF-8 on its own) is still `café`; Latin-1 text that is also valid UTF-8 takes two
  accented characters in a row of an unlikely kind (`Ã©`).
- a multibyte one (EUC-JP, EUC-KR, GBK, Big5, Shift_JIS, …): the locale's reading is kept when it
  is clean — no byte it could not decode, no C1 control — and UTF-8 is tried only when it is not.
  Many common kanji in EUC-JP are also valid UTF-8 (`速` is the bytes of `®`), so UTF-8 first would
  misread what the user typed; UTF-8 Japanese under EUC-JP mostly does not read cleanly (`東京`
  holds a byte EUC-JP cannot start with) and is still read as UTF-8. UTF-8 that the locale does
  read cleanly (accented Latin under EUC-JP, much CJK text under GBK or Shift_JIS) is read in the
  locale's encoding: the bytes alone cannot tell them apart.

Bytes neither decodes stay lone surrogates, which every way in refuses naming the byte
(`domain/surrogates.py`).

Standard input (`note -`, `call TOOL -`) may start with a byte order mark: UTF-8's is dropped, and
one of UTF-32 or UTF-16 (a file saved by Windows tools) decodes the rest in that encoding; UTF-32's
little-endian mark begins with UTF-16's, so it is looked for first. Nothing else of what was sent
changes: line ends and a final newline are kept.

A command-line argument that names a file or folder (`FILE_NAME`) is kept as the locale decoded it:
that is the text that opens the same file again.
"""

from __future__ import annotations

import codecs
import sys
from typing import Any

import click

#: Byte order marks of standard input, longest first (UTF-32-LE's starts with UTF-16-LE's), the
#: codec that reads what follows and the encoding's name for a refusal.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)

#: Python's names (`codecs.lookup(...).name`) of the multibyte encodings a locale may have, whose
#: clean reading is kept before UTF-8's (module docstring).
_MULTIBYTE = frozenset(
    {
        "euc_jp",
        "euc_jis_2004",
        "euc_jisx0213",
        "euc_kr",
        "cp949",
        "johab",
        "gb2312",
        "gbk",
        "gb18030",
        "big5",
        "big5hkscs",
        "cp950",
        "shift_jis",
        "shift_jis_2004",
        "shift_jisx0213",
        "cp932",
    }
)


def _multibyte(encoding: str) -> bool:
    """Whether `encoding` is a multibyte one of `_MULTIBYTE` (an unknown name is not)."""
    try:
        return codecs.lookup(encoding).name in _MULTIBYTE
    except LookupError:
        return False


def _clean(text: str) -> bool:
    """Whether a locale's reading holds no byte it could not decode (a lone surrogate) and no C1
    control (U+0080–U+009F, which no one types: the C library's reading of a byte that starts no
    character)."""
    return not any(0xD800 <= ord(c) <= 0xDFFF or 0x80 <= ord(c) <= 0x9F for c in text)


class FileName(click.types.StringParamType):
    """A command-line text that names a file, a folder or a vault's URL: converted as any text (the
    same `TEXT` in the help) but not `click.STRING` itself, so `KaeruCommand` leaves it as the locale
    decoded it, never re-read as UTF-8: the name opens what it named."""


FILE_NAME = FileName()


def _argv_bytes(text: str) -> bytes | None:
    """The bytes the command line held for `text`, or None where they cannot be told.

    Python decoded them with the C library (`mbstowcs`) in the locale's encoding, keeping a byte it
    could not decode as a lone surrogate; the file-system codec encodes most of that back. The C
    library also reads a byte 0x80–0x9F that starts no EUC-JP character as U+0080–U+009F, which
    Python's `euc_jp` codec cannot encode: such a character is that byte again."""
    encoding = sys.getfilesystemencoding()
    try:
        return text.encode(encoding, "surrogateescape")
    except UnicodeEncodeError:
        pass
    out = bytearray()
    for char in text:
        try:
            out += char.encode(encoding, "surrogateescape")
        except UnicodeEncodeError:
            if not 0x80 <= ord(char) <= 0x9F:
                return None
            out.append(ord(char))
    return bytes(out)


def argv_text(text: str) -> str:
    """A command-line argument's text: its bytes as UTF-8 when they are UTF-8, else as the locale
    decoded them; under a multibyte locale the locale's reading first when it is clean (module
    docstring). Under a UTF-8 locale that is the argument itself."""
    encoding = sys.getfilesystemencoding()
    if text.isascii() or codecs.lookup(encoding).name == "utf-8":
        return text
    if _multibyte(encoding) and _clean(text):
        return text
    raw = _argv_bytes(text)
    if raw is None:
        return text
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return text


def argv_value(value: Any) -> Any:
    """`argv_text` of a parameter's value: a text, or each text of a repeated or variadic one."""
    if isinstance(value, str):
        return argv_text(value)
    if isinstance(value, tuple):
        return tuple(argv_text(v) if isinstance(v, str) else v for v in value)
    return value


def decoded(raw: bytes, encoding: str) -> str:
    """Bytes sent as text: after a UTF-8, UTF-16 or UTF-32 byte order mark, in that encoding; else
    as UTF-8 when they are UTF-8, else in `encoding` (the locale's) — under a multibyte `encoding`
    its clean reading first (module docstring). A byte that does not decode is kept as a lone
    surrogate (`surrogateescape`), for the refusal that names it.

    Raises:
        click.BadParameter: the input starts with a UTF-16 or UTF-32 byte order mark but is not
            in that encoding.
    """
    for bom, codec, name in _BOMS:
        if raw.startswith(bom):
            body = raw[len(bom) :]
            if codec == "utf-8":
                return body.decode("utf-8", "surrogateescape")
            try:
                # A lone surrogate code unit decodes as itself, and is refused as one.
                return body.decode(codec, "surrogatepass")
            except UnicodeDecodeError as exc:
                raise click.BadParameter(
                    f"starts with a {name} byte order mark but is not {name} ({exc.reason} at byte "
                    f"{exc.start + len(bom)}): save it as UTF-8 or {name}",
                    param_hint="standard input",
                ) from None
    if _multibyte(encoding):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            pass
        else:
            if _clean(text):
                return text
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode(encoding, "surrogateescape")


def stdin_text() -> str:
    """All of standard input as text (`decoded`, in the stream's encoding where it is not UTF-8)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream with no bytes beneath (a test's StringIO): already text
        return sys.stdin.read()
    return decoded(buffer.read(), sys.stdin.encoding or "utf-8")
