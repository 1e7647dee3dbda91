"""A note whose words overflow a PostgreSQL tsvector (1 MB of distinct lexemes) is accepted on both
engines, stored whole, and searchable alike up to the words the index holds (`domain.indexroom`):
before, SQLite took it, PostgreSQL refused it, and a copy, an import or a revise of it into
PostgreSQL failed without naming the record."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaeru.domain.indexroom import index_texts
from kaeru.domain.languages import from_tags
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.cli.support import kaeru, write_notes
from tests.working.conftest import Call

pytestmark = pytest.mark.timeout(300)

#: 20,000 distinct words of 62 letters and digits: ~1.3 MB of tsvector, past the 1 MB one may hold
#: (long words: few of them, each a row of the BM25 statistics, make the room overflow).
COUNT = 20_000


def word(i: int) -> str:
    return f"w{i:05d}" + "q" * 56


HUGE = " ".join(word(i) for i in range(COUNT))


def _last_held(name: str, tags: list[str]) -> int:
    """The number of the last body word the index holds, as `indexroom` decides it."""
    held = index_texts(name, None, HUGE, tags, from_tags(tags)).body
    return int(held.rsplit(" ", 1)[1][1:6])


def _found(call: Call, word: str) -> list[str]:
    return [hit["name"] for hit in call("search", initiatives=["big"], text=word)["data"]["hits"]]


def test_a_note_past_the_room_is_stored_whole_and_found_alike_up_to_the_room(call: Call) -> None:
    noted = call("note", initiative="big", name="huge", text=HUGE)
    assert noted["state"] == "applied", noted["issues"]
    # Said, not silent (decision 234): how much of the body the index holds.
    cut = [i for i in noted["issues"] if i["code"] == "index_truncated"]
    assert len(cut) == 1 and "body's first" in cut[0]["message"], noted["issues"]
    read = call("read", initiative="big", node="huge", budget_chars=512)["data"]["hits"][0]
    assert read["body_range"]["total"] == len(HUGE)  # stored whole
    last = _last_held("huge", read["tags"])
    assert COUNT // 2 < last < COUNT - 1
    assert _found(call, word(7)) == _found(call, word(last)) == ["huge"]
    assert _found(call, word(last + 1)) == _found(call, word(COUNT - 1)) == []  # past the room: on both engines

    small = call("note", initiative="big", name="small", text="a short body")
    assert small["state"] == "applied" and not [i for i in small["issues"] if i["code"] == "index_truncated"]
    revised = call("revise", initiative="big", node="small", patch={"body": HUGE})
    assert revised["state"] == "applied", revised["issues"]
    assert [i["code"] for i in revised["issues"]].count("index_truncated") == 1
    assert sorted(_found(call, word(7))) == ["huge", "small"]


def test_a_sqlite_vault_holding_one_is_copied_and_imported_into_postgres(vault: VaultSpec, tmp_path: Path) -> None:
    """`kaeru copy` and `kaeru import` of such a note from SQLite into PostgreSQL: both apply."""
    if vault.backend != "postgres":
        pytest.skip("a copy into PostgreSQL")
    source = new_vault("sqlite", tmp_path)
    write_notes(source, "big", {"text": HUGE, "name": "huge"})
    archive = tmp_path / "big.amg.gz"
    assert kaeru(source, "export", str(archive), "--format", "amg").code == 0

    imported = kaeru(vault, "import", str(archive))
    assert imported.code == 0, imported.stderr
    found = kaeru(vault, "search", word(7), "-i", "big", as_json=True)
    assert [h["name"] for h in found.json()["data"]["hits"]] == ["huge"]

    target = new_vault("postgres", tmp_path)
    try:
        copied = kaeru({}, "copy", "--from", str(source.vault_dir), "--to", str(target.database_url), as_json=True)
        assert copied.code == 0, copied.stderr
        assert copied.json()["ok"] is True and copied.json()["copied"]["node_revisions"] == 1
    finally:
        drop_vault(target)
