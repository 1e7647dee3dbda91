"""A phrase's copy read a column at a time (`sqlite.copies.read_impacts`, decision 256) holds what
the whole-row reader finds: the same rows and the same `aFreq` — words in any of the four fields,
repeated, in several at once, for the literal columns and the stems, for a subset of the fields
(recall's tag channel) and for a MATCH that is not one phrase over a set of columns."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.records import SearchQuery
from kaeru.storage.sqlite.copies import COUNTER, READER, ImpactReader, read_impacts
from kaeru.storage.sqlite.impacts import COLUMNS
from kaeru.storage.sqlite.matching import fts_match
from kaeru.storage.sqlite.search import FtsSearch
from kaeru.storage.sqlite.session import SqliteSession
from kaeru.storage.sqlite.store import SqliteStore

np: Any = pytest.importorskip("numpy")

WORDS = ["alpha", "beta", "gamma"]
words = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
note = st.fixed_dictionaries(
    {"name": words, "text": words.filter(bool), "tags": st.lists(st.sampled_from(WORDS), max_size=3, unique=True)}
)
FIELDS = [("name", "description", "body", "tags"), ("tags",), ("name", "body")]
#: The bm25 weights of a literal and a stemmed search (`sqlite.search`), by column of `nodes_fts`.
WEIGHTS = {False: (4.0, 2.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0), True: (0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 2.0, 1.0, 2.0)}
_names = itertools.count()


def _whole(session: SqliteSession, reader: ImpactReader, match: str, weights: tuple[float, ...]) -> dict[int, float]:
    reader.start(weights)
    session._db.one(
        f"SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ? AND {READER}(nodes_fts) IS NOT NULL", (match,)
    )
    ids, freqs = reader.taken()
    return dict(zip(ids, freqs, strict=True))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(note, min_size=1, max_size=12))
def test_read_a_column_at_a_time_as_the_whole_row_reader_reads(tmp_path: Path, notes: list[dict[str, Any]]) -> None:
    path = tmp_path / f"v{next(_names)}"
    path.mkdir()
    store = SqliteStore(path / "vault.sqlite3")
    try:
        service = Service(store, Settings(vault_dir=path, secret_policy="allow"))
        for n in notes:
            args = {"initiative": "p", "text": n["text"], "kind": "observation", "tags": n["tags"]}
            args["name"] = f"{n['name']} n{next(_names)}"  # names are unique
            service.note(parse("note", args))
        reader = ImpactReader()
        with store.read() as session:
            assert isinstance(session, SqliteSession)
            session._c.register_fts5_function(READER, reader)
            session._c.register_fts5_function(COUNTER, reader.count)
            for word, stemmed, fields in itertools.product(WORDS, (False, True), FIELDS):
                match = fts_match([word], False, False, (), fields, stemmed)
                columns = {("stem_" + f if stemmed else f) for f in fields}
                weights = tuple(w if COLUMNS[i] in columns else 0.0 for i, w in enumerate(WEIGHTS[stemmed]))
                expected = {r: f for r, f in _whole(session, reader, match, weights).items() if f > 0}
                for sparse_sum in (0, 10**9):  # the columns summed over a dense array, or sorted
                    rows, values = read_impacts(np, session._db, reader, match, weights, COLUMNS, sparse_sum)
                    assert rows.tolist() == sorted(rows.tolist())
                    found = dict(zip(rows.tolist(), values.tolist(), strict=True))
                    assert found == expected, (word, stemmed, fields, sparse_sum)
            # Two phrases: read whole, as before.
            both = fts_match(["alpha", "beta"], False, False, (), FIELDS[0], False)
            rows, values = read_impacts(np, session._db, reader, both, WEIGHTS[False], COLUMNS)
            assert dict(zip(rows.tolist(), values.tolist(), strict=True)) == _whole(
                session, reader, both, WEIGHTS[False]
            )
    finally:
        store.close()


@pytest.mark.parametrize("others", [0, 30], ids=["the-scope-is-the-vault", "a-small-scope"])
def test_a_words_copy_holds_a_small_scopes_rows_only(tmp_path: Path, others: int) -> None:
    """In a scope of at most half the vault, a word's copy is read within the scope (its key names
    the scope) and its bm25 `nHit` is still the whole vault's; in a larger scope it is read in the
    whole vault (decision 259). Either way the page is what SQL's ranking gives."""
    store = SqliteStore(tmp_path / "vault.sqlite3")
    try:
        service = Service(store, Settings(vault_dir=tmp_path, secret_policy="allow"))
        for i in range(12):
            service.note(
                parse("note", {"initiative": "mine", "text": f"alpha {'beta ' * (i % 3)}item{i}", "kind": "idea"})
            )
        for i in range(others):  # "alpha" outside the scope too: the whole vault's nHit differs from the scope's
            service.note(parse("note", {"initiative": "other", "text": f"alpha gamma {i}", "kind": "idea"}))
        pages = []
        for cached in (False, True):  # SQL first; then the copies, read from an empty cache
            store._common.text.clear()
            with store.read() as session:
                assert isinstance(session, FtsSearch)
                session.rare_rows = session.few_rows = 0
                session.text_cache = cached
                scope = session.initiative_by_name("mine")
                assert scope is not None
                query = SearchQuery(initiative_ids=[scope.id], tokens=["alpha", "beta"], window=5)
                pages.append([(r.id, r.score) for r in session.search(query)[0]])
        assert pages[0] == pages[1] and len(pages[0]) == 5
        words = [key[0] for key in store._common.text._held if key[1]]
        assert len(words) == 2 and all(("AND (" in key) == bool(others) for key in words), words
    finally:
        store.close()
