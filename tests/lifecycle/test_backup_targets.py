"""What `kaeru backup FILE` may write over, with what mode, and what it leaves beside it (SQLite).

A probe: `kaeru backup other/vault.sqlite3` replaced another vault that had been closed cleanly (its
notes gone), and `kaeru backup bk/notes.txt` replaced a text file with a vault copy left at the text
file's mode 0644 — readable by every account, against the README's "private (0600)". `kaeru export`
refuses both. A backup now replaces only an earlier backup of this same vault (a scheduled backup to
one name goes on rotating) or an empty file, unless `--force`; what it writes is 0600 always. A
backup killed by SIGKILL left its whole-size hidden copy beside the target; the next one removes it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.support import kaeru, write_notes

pytestmark = pytest.mark.timeout(300)


def _finds(folder: Path, word: str) -> bool:
    run = kaeru({"KAERU_VAULT": str(folder)}, "search", word, "-i", "doc", as_json=True)
    return run.code == 0 and len(run.json()["data"]["hits"]) == 1


def _restored(backup: Path, folder: Path) -> Path:
    folder.mkdir()
    (folder / "vault.sqlite3").write_bytes(backup.read_bytes())
    return folder


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_backup_replaces_an_earlier_backup_of_this_vault_and_nothing_else_unless_forced(tmp_path: Path) -> None:
    mine, other = {"KAERU_VAULT": str(tmp_path / "v1")}, {"KAERU_VAULT": str(tmp_path / "q1")}
    write_notes(mine, "doc", "the kestrel hovers")
    write_notes(other, "doc", "the otter dives")
    bk = tmp_path / "bk"

    # Rotation: a scheduled backup to one name replaces yesterday's, and leaves it private even if
    # someone opened it up meanwhile.
    daily = bk / "daily.sqlite3"
    assert kaeru(mine, "backup", str(daily)).code == 0
    daily.chmod(0o644)
    write_notes(mine, "doc", "the kite circles")
    again = kaeru(mine, "backup", str(daily), as_json=True)
    assert again.code == 0, again.stderr
    assert _mode(daily) == 0o600
    assert _finds(_restored(daily, tmp_path / "r1"), "kite")

    # Another vault, closed cleanly (nothing beside it), and a backup of another vault.
    theirs = bk / "theirs.sqlite3"
    assert kaeru(other, "backup", str(theirs)).code == 0
    text = bk / "notes.txt"
    text.write_text("my shopping list\n")
    text.chmod(0o644)
    for target, said in (
        (tmp_path / "q1" / "vault.sqlite3", "another vault"),
        (theirs, "another vault"),
        (text, "not a SQLite database"),
    ):
        before = target.read_bytes()
        refused = kaeru(mine, "backup", str(target))
        assert refused.code == 2, (target, refused.stdout, refused.stderr)
        assert str(target) in refused.stderr and said in refused.stderr and "--force" in refused.stderr
        assert target.read_bytes() == before
    assert _finds(tmp_path / "q1", "otter") and not _finds(tmp_path / "q1", "kestrel")
    assert sorted(p.name for p in bk.iterdir()) == ["daily.sqlite3", "notes.txt", "theirs.sqlite3"]

    # Asked for: replaced, and private whatever the file's mode was.
    forced = kaeru(mine, "backup", "--force", str(text))
    assert forced.code == 0, forced.stderr
    assert _mode(text) == 0o600 and text.read_bytes().startswith(b"SQLite format 3\x00")
    # An empty file holds nothing to lose (a name made by `mktemp`).
    empty = bk / "empty.sqlite3"
    empty.touch(mode=0o644)
    assert kaeru(mine, "backup", str(empty)).code == 0
    assert _mode(empty) == 0o600 and _finds(_restored(empty, tmp_path / "r2"), "kestrel")


def test_a_backup_removes_the_hidden_copies_a_killed_backup_of_that_name_left(tmp_path: Path) -> None:
    mine = {"KAERU_VAULT": str(tmp_path / "v1")}
    write_notes(mine, "doc", "the kestrel hovers")
    bk = tmp_path / "bk"
    bk.mkdir()
    ended = subprocess.Popen(["true"])
    ended.wait()  # a process no longer alive: a backup killed by SIGKILL, or the machine stopped
    gone, alive = ended.pid, os.getpid()
    stale = [bk / f".b.sqlite3.{gone}-0123abcd.partial", bk / f".b.sqlite3.{gone}-0123abcd.partial-journal"]
    young = bk / f".b.sqlite3.{gone}-fedc0123.partial"  # no process here, but written minutes ago
    kept = [
        bk / f".b.sqlite3.{alive}-4567cdef.partial",  # a backup still being written
        bk / f".c.sqlite3.{gone}-89abcdef.partial",  # another target's
        bk / "b.sqlite3.partial",  # not a name a backup makes
        bk / f".b.sqlite3.{2**40}-0123abcd.partial",  # no pid is that large
        young,  # another pid namespace's (a container, another machine) may be writing it now
    ]
    hour_ago = time.time() - 3600
    for scrap in (*stale, *kept):
        scrap.write_bytes(b"x" * 4096)
        if scrap is not young:
            os.utime(scrap, (hour_ago, hour_ago))
    assert kaeru(mine, "backup", str(bk / "b.sqlite3")).code == 0
    assert sorted(p.name for p in bk.iterdir()) == sorted(["b.sqlite3", *(p.name for p in kept)])
