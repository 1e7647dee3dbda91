"""`kaeru` under a locale whose encoding is not UTF-8 (Latin-1, EUC-JP, `LANG=C`), on both backends.

A character the terminal's encoding lacks is printed as its escape, never a traceback; `--json`
stays one JSON document that parses back to the exact text. Bytes that are UTF-8 — a command line,
standard input — are read as UTF-8, and only other bytes in the locale's encoding: a Latin-1
terminal's `café` is still `café`; under a multibyte locale (EUC-JP) the locale's clean reading
comes first, so an EUC-JP `速` is not read as the UTF-8 `®` (`cli/inputs.py`).

The Latin-1 and EUC-JP locales are built with `localedef` into a folder of the test's own
(`LOCPATH`), as a container seldom has them; where that cannot be done those tests are skipped.
`PYTHONIOENCODING=latin-1` gives the output side without a locale, and `LANG=C` needs none.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru, valid_envelope, write_notes

pytestmark = pytest.mark.timeout(300)

#: `LANG=C` as a minimal container has it, with neither of Python's ways of making it UTF-8.
C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


@pytest.fixture(scope="module")
def locales(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding en_US.ISO-8859-1 and ja_JP.EUC-JP, for `LOCPATH`."""
    localedef = shutil.which("localedef")
    if localedef is None:
        pytest.skip("no localedef to build a Latin-1 and an EUC-JP locale with")
    folder = tmp_path_factory.mktemp("locales")
    for name, charmap, source in (("en_US.ISO-8859-1", "ISO-8859-1", "en_US"), ("ja_JP.EUC-JP", "EUC-JP", "ja_JP")):
        # localedef exits 1 for warnings alone: whether the locale works is asked of Python below.
        subprocess.run([localedef, "-f", charmap, "-i", source, str(folder / name)], capture_output=True, check=False)
        env = {**os.environ, **_locale(folder, name)}
        probe = [sys.executable, "-c", "import sys; print(sys.stdout.encoding)"]
        said = subprocess.run(probe, capture_output=True, env=env, check=False).stdout.decode().strip()
        if said.replace("_", "-").lower() not in ("iso8859-1", "euc-jp"):
            pytest.skip(f"localedef could not build {name} (Python reads the encoding as {said!r})")
    return folder


def _locale(folder: Path, name: str) -> dict[str, str]:
    return {"LOCPATH": str(folder), "LC_ALL": name, "LANG": name, "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def _body(vault: VaultSpec, initiative: str, node: str) -> str:
    """A node's body, read back under this (UTF-8) environment."""
    envelope = valid_envelope(kaeru(vault, "read", node, "-i", initiative, as_json=True), "read", "read", "ok")
    return str(envelope["data"]["hits"][0]["body"])


def _noted(run_json: str) -> str:
    envelope = json.loads(run_json)
    assert envelope["state"] == "applied", envelope
    return str(envelope["data"]["primary"]["id"])


def test_a_character_the_encoding_lacks_is_printed_as_an_escape(vault: VaultSpec) -> None:
    """`…` in the help, `—` in a tool's title, a Japanese name and body: under PYTHONIOENCODING=latin-1
    each was a UnicodeEncodeError traceback after part of the output (exit 1)."""
    write_notes(vault, "東京", {"text": "東京 tower — heron survey", "name": "tower"})
    latin1 = {"PYTHONIOENCODING": "latin-1"}

    helped = kaeru(vault, "note", "--help", **latin1)
    assert helped.code == 0 and "\\u2026" in helped.stdout and "--request-id" in helped.stdout
    tool = kaeru(vault, "tools", "note", **latin1)
    assert tool.code == 0 and tool.stdout.startswith("note \\u2014 ")

    listed = kaeru(vault, "initiatives", **latin1)
    assert listed.code == 0 and listed.stdout.startswith("\\u6771\\u4eac  "), listed.stdout
    found = kaeru(vault, "search", "-i", "東京", "heron", **latin1)
    assert found.code == 0 and "\\u6771\\u4eac tower \\u2014 heron survey" in found.stdout, found.stdout
    # Bytes that are Latin-1 (the stream's encoding) are written as such: `é` is one byte 0xE9.
    write_notes(vault, "東京", {"text": "café heron", "name": "cafe"})
    raw = subprocess.run(
        [sys.executable, "-m", "kaeru", "search", "-i", "東京", "café"],
        capture_output=True,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}, **vault.env(), **latin1},
        check=False,
    )
    assert raw.returncode == 0 and b"caf\xe9 heron" in raw.stdout, raw.stdout

    # --json: one JSON document, every character past ASCII as its JSON escape, the same text parsed.
    as_json = kaeru(vault, "search", "-i", "東京", "tower", as_json=True, **latin1)
    assert as_json.stdout.isascii()
    assert [h["body"] for h in as_json.json()["data"]["hits"]] == ["東京 tower — heron survey"]

    doctor = kaeru(vault, "doctor", **latin1)
    assert doctor.code == kaeru(vault, "doctor").code, doctor.stdout + doctor.stderr


def test_under_latin1_and_eucjp_locales_nothing_ends_in_a_traceback(vault: VaultSpec, locales: Path) -> None:
    """The same under real locales: EUC-JP has no `·`, which `kaeru read` puts between a node's
    fields, and Latin-1 no `…` (help) nor `東` (a name)."""
    [node] = write_notes(vault, "東京", {"text": "東京 tower heron survey", "name": "tower"})
    latin1, eucjp = _locale(locales, "en_US.ISO-8859-1"), _locale(locales, "ja_JP.EUC-JP")
    assert kaeru(vault, "note", "--help", **latin1).code == 0
    assert kaeru(vault, "initiatives", **latin1).code == 0
    assert kaeru(vault, "search", "-i", "東京", "heron", **latin1).code == 0
    read = kaeru(vault, "read", node, "-i", "東京", **eucjp)
    assert read.code == 0 and "heron survey" in read.stdout


def test_utf8_bytes_are_read_as_utf8_under_a_latin1_locale(vault: VaultSpec, locales: Path) -> None:
    """A UTF-8 JSON file, a UTF-8 text piped in and UTF-8 bytes on the command line were stored as
    mojibake (C1 controls included), silently, exit 0; a Latin-1 byte from a Latin-1 terminal is
    still read as Latin-1."""
    latin1 = _locale(locales, "en_US.ISO-8859-1")

    args = json.dumps({"initiative": "lat", "text": "Grüße aus München"}, ensure_ascii=False).encode()
    called = kaeru(vault, "call", "note", "-", stdin=args, as_json=True, **latin1)
    assert _body(vault, "lat", _noted(called.stdout)) == "Grüße aus München"

    piped = kaeru(vault, "note", "-i", "lat", "-", stdin="Straße über\n".encode(), as_json=True, **latin1)
    assert _body(vault, "lat", _noted(piped.stdout)) == "Straße über\n"

    typed = kaeru(vault, "note", "-i", "東京", "東京", "café", as_json=True, **latin1)
    assert _body(vault, "東京", _noted(typed.stdout)) == "東京 café"

    # A Latin-1 terminal's own bytes: 0xE9 alone is no UTF-8, so it is é as before.
    latin_typed = kaeru(vault, "note", "-i", "lat", b"caf\xe9 typed", as_json=True, **latin1)
    assert _body(vault, "lat", _noted(latin_typed.stdout)) == "café typed"
    latin_piped = kaeru(vault, "note", "-i", "lat", "-", stdin=b"caf\xe9 na\xefve\n", as_json=True, **latin1)
    assert _body(vault, "lat", _noted(latin_piped.stdout)) == "café naïve\n"


def test_utf8_bytes_on_the_command_line_are_read_as_utf8_under_eucjp(vault: VaultSpec, locales: Path) -> None:
    """The C library reads UTF-8 `東京` under EUC-JP as a surrogate, a C1 control and two other
    kanji: the name was refused as "not UTF-8" — which it was."""
    typed = kaeru(vault, "note", "-i", "東京", "東京 tower", as_json=True, **_locale(locales, "ja_JP.EUC-JP"))
    assert _body(vault, "東京", _noted(typed.stdout)) == "東京 tower"


def test_eucjp_text_typed_under_eucjp_is_read_as_eucjp(vault: VaultSpec, locales: Path) -> None:
    """Many common kanji in EUC-JP are also valid UTF-8: `速` is the bytes of `®`, `造` of `¤`. Read
    UTF-8 first, an EUC-JP user's `速` on the command line or piped in was stored as `®`, exit 0."""
    eucjp = _locale(locales, "ja_JP.EUC-JP")
    assert "速造".encode("euc_jp").decode("utf-8") == "®¤"  # the collision this is about

    typed = kaeru(vault, "note", "-i", "速".encode("euc_jp"), "造 note 速".encode("euc_jp"), as_json=True, **eucjp)
    assert _body(vault, "速", _noted(typed.stdout)) == "造 note 速"
    piped = kaeru(vault, "note", "-i", "x", "-", stdin="速\n造\n".encode("euc_jp"), as_json=True, **eucjp)
    assert _body(vault, "x", _noted(piped.stdout)) == "速\n造\n"
    # UTF-8 piped in under EUC-JP that EUC-JP does not read cleanly is still read as UTF-8.
    utf8 = kaeru(vault, "note", "-i", "x", "-", stdin="東京 tower\n".encode(), as_json=True, **eucjp)
    assert _body(vault, "x", _noted(utf8.stdout)) == "東京 tower\n"


def test_utf8_arguments_under_the_c_locale_are_read_as_utf8(vault: VaultSpec) -> None:
    """Under `LANG=C` (ASCII) UTF-8 arguments were refused: "initiatives[0] holds the byte 0xE6,
    which is not UTF-8 … send the text as UTF-8", exit 2, when they were UTF-8."""
    noted = kaeru(vault, "note", "-i", "日本", "東京", "heron", as_json=True, **C_LOCALE)
    node = _noted(noted.stdout)
    found = kaeru(vault, "search", "-i", "日本", "東京", as_json=True, **C_LOCALE)
    assert found.code == 0, found.stdout
    assert [h["id"] for h in found.json()["data"]["hits"]] == [node]
    assert _body(vault, "日本", node) == "東京 heron"


def test_standard_input_with_a_byte_order_mark(vault: VaultSpec) -> None:
    """A UTF-8 byte order mark was stored at the start of the body; a UTF-16 file (with its mark)
    was refused as "the byte 0xFF … a command line passes it"."""
    bom8 = kaeru(vault, "note", "-i", "bom", "-", stdin=b"\xef\xbb\xbfBOM utf8 text\n", as_json=True)
    assert _body(vault, "bom", _noted(bom8.stdout)) == "BOM utf8 text\n"
    utf16 = "UTF16 テキスト body\n".encode("utf-16")  # with its byte order mark
    assert utf16.startswith(b"\xff\xfe") or utf16.startswith(b"\xfe\xff")
    u16 = kaeru(vault, "note", "-i", "bom", "-", stdin=utf16, as_json=True)
    assert _body(vault, "bom", _noted(u16.stdout)) == "UTF16 テキスト body\n"
    called = kaeru(vault, "call", "note", "-", stdin='{"initiative": "bom", "text": "json ü"}'.encode("utf-16"))
    assert called.code == 0, called.stderr
    # UTF-32's little-endian mark starts with UTF-16's: it was read as UTF-16, refused as a NUL.
    for codec in ("utf-32", "utf-32-be"):
        utf32 = ("\ufeff" if codec.endswith("be") else "") + "UTF32 テキスト 🐸\n"
        u32 = kaeru(vault, "note", "-i", "bom", "-", stdin=utf32.encode(codec), as_json=True)
        assert _body(vault, "bom", _noted(u32.stdout)) == "UTF32 テキスト 🐸\n", codec


def test_piped_bytes_that_are_not_utf8_are_refused_naming_the_byte_not_a_command_line(vault: VaultSpec) -> None:
    """Under a UTF-8 locale a Latin-1 file piped in is refused, naming the byte; the refusal said
    such bytes come from "a command line", which they did not."""
    refused = kaeru(vault, "note", "-i", "lat", "-", stdin=b"caf\xe9\n", as_json=True)
    assert refused.code == 2
    [issue] = refused.json()["issues"]
    assert issue["field"] == "text" and "byte 0xE9" in issue["message"] and "LANG" in issue["message"]
    assert "command line" not in issue["message"]


def _columns(text: str) -> int:
    """Terminal columns of `text` (no combining characters in it): 2 for a wide or fullwidth one."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def test_initiatives_line_up_whatever_the_names_width(vault: VaultSpec) -> None:
    """A CJK name takes two columns a character and an escaped bidi control six: padded by
    characters, their rows' counts stood further right than the others'."""
    for name in ("東京プロジェクト", "ab", "rlo\u202eabc", "ｶﾀｶﾅ"):
        write_notes(vault, name, "heron")
    listed = kaeru(vault, "initiatives")
    assert listed.code == 0
    rows = listed.stdout.splitlines()
    assert len(rows) == 4 and any(r.startswith("rlo\\u202eabc ") for r in rows), rows
    starts = {_columns(row[: row.index(" memories")]) for row in rows}
    assert len(starts) == 1, rows


def test_a_file_name_is_kept_as_the_locale_decoded_it(vault: VaultSpec, locales: Path, tmp_path: Path) -> None:
    """Text arguments are read as UTF-8 under Latin-1, a file's name is not: `東京.amg` as UTF-8 bytes
    is the name of the file made, where `東京` as text cannot even be a Latin-1 file name."""
    write_notes(vault, "lat", "heron")
    folder = tmp_path / "exports"
    folder.mkdir()
    target = os.fsencode(folder) + "/東京.amg".encode()
    run = kaeru(vault, "export", "-i", "lat", target, **_locale(locales, "en_US.ISO-8859-1"))
    assert run.code == 0, run.stdout + run.stderr
    assert os.listdir(os.fsencode(folder)) == ["東京.amg".encode()]
