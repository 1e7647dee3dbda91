"""A small project among many (decision 146): a common word searched in a scope of few members is
ranked by SQL over those few, not by reading a copy of the word's rows across the whole vault — the
same answer, without the read a returning agent's first questions would each pay."""

from __future__ import annotations

from pathlib import Path

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.records import SearchQuery
from kaeru.storage.sqlite.search import FtsSearch
from kaeru.storage.sqlite.store import SqliteStore


def _search(store: SqliteStore, name: str, few_rows: int | None = None) -> tuple[list[tuple[str, float]], int]:
    with store.read() as session:
        assert isinstance(session, FtsSearch)
        scope = session.initiative_by_name(name)
        assert scope is not None
        session.rare_rows = 0  # "harbour" is common here: the rare plan is not the one asked about
        if few_rows is not None:
            session.few_rows = few_rows
        rows, total, _ = session.search(SearchQuery(initiative_ids=[scope.id], tokens=["harbour"], window=5))
    return [(r.id, r.score) for r in rows], total


def test_a_few_members_among_many_are_ranked_without_copying_the_vault(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "vault.sqlite3")
    try:
        service = Service(store, Settings(vault_dir=tmp_path, secret_policy="allow"))
        for i in range(120):
            service.note(
                parse("note", {"initiative": "busy", "text": f"harbour crane shift {i}", "kind": "observation"})
            )
        for i in range(6):
            text = "harbour " * (i + 1) + f"old ledger entry {i}"
            service.note(parse("note", {"initiative": "quiet", "text": text, "kind": "observation"}))
        text = store._common.text
        text.clear()
        by_sql = _search(store, "quiet")
        assert text.nbytes == 0  # 6 members of 126 rows: nothing copied
        by_copies = _search(store, "quiet", few_rows=0)  # the rule off: the copies rank
        assert text.nbytes > 0
        assert by_sql == by_copies and by_sql[1] == 6
        assert [score for _, score in by_sql[0]] == sorted(score for _, score in by_sql[0])  # best first
        text.clear()
        _search(store, "busy")  # a scope that is most of the vault: copied as before
        assert text.nbytes > 0
    finally:
        store.close()
