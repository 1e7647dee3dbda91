"""`storage.sqlite.salvage` on files damaged on purpose, page by page (found in review: a readable
stretch between two damaged regions was skipped with them, and a vault once ANALYZEd could not be
salvaged at all)."""

from __future__ import annotations

from pathlib import Path

import apsw

from kaeru.storage.sqlite.salvage import salvage

ROWS = 3000


def _table(path: Path) -> list[tuple[int, int]]:
    """A table of ROWS rows of 1,000 bytes (three to a leaf); its leaves as (page, cells), in rowid order."""
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    with conn:
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, "x" * 1000) for i in range(1, ROWS + 1)])
    leaves = [
        (int(r[0]), int(r[1]))
        for r in conn.execute("SELECT pageno, ncell FROM dbstat WHERE name = 't' AND pagetype = 'leaf' ORDER BY path")
    ]
    conn.close()
    return leaves


def _damage(path: Path, pages: list[int]) -> None:
    size = 4096
    with path.open("r+b") as file:
        for page in pages:
            file.seek((page - 1) * size)
            file.write(b"\xa5" * size)


def _ids(path: Path) -> list[int]:
    conn = apsw.Connection(str(path))
    try:
        return [int(r[0]) for r in conn.execute("SELECT id FROM t ORDER BY id")]
    finally:
        conn.close()


def test_rows_between_two_damaged_regions_are_kept(tmp_path: Path) -> None:
    source, target = tmp_path / "damaged.sqlite3", tmp_path / "saved.sqlite3"
    leaves = _table(source)
    good = 250  # one readable leaf between two long damaged regions
    bad = [*range(25, good), *range(good + 1, 700)]
    _damage(source, [leaves[k][0] for k in bad])
    lost = sum(leaves[k][1] for k in bad)
    done = salvage(source, target)
    kept = _ids(target)
    assert len(kept) == ROWS - lost
    first_good = sum(cells for _, cells in leaves[:good]) + 1
    assert set(range(first_good, first_good + leaves[good][1])) <= set(kept), "the stretch between is kept"
    assert len(done.damaged) == 1 and len(done.damaged[0].damaged) == 2, done.damaged


def test_an_analyzed_vault_is_salvaged(tmp_path: Path) -> None:
    """ANALYZE makes `sqlite_stat1`, SQLite's own: it is not copied (SQLite gathers it again)."""
    source, target = tmp_path / "analyzed.sqlite3", tmp_path / "saved.sqlite3"
    _table(source)
    conn = apsw.Connection(str(source))
    conn.execute("CREATE INDEX t_body ON t (body); ANALYZE")
    conn.close()
    done = salvage(source, target)
    assert not done.damaged and _ids(target) == list(range(1, ROWS + 1))
