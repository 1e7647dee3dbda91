"""The vault's most common terms that PostgreSQL's first broad search reads copies of beside its own
(`TextCopies._hinted`, decision 16.Z1) are found by keeping the common terms first and ranking
them (decision 275): the same terms, in the same order, as the definition — every term ranked by
its documents (ties by the term), the first `PREFETCH` of each column kept if common
(`COMMON_DIVISOR`) — which sorted the whole vocabulary."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.postgres.search import COMMON_DIVISOR
from kaeru.storage.postgres.store import PostgresStore
from kaeru.storage.postgres.textcache import PREFETCH
from tests.backends import postgres_admin_url

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)

DEFINITION = (
    "SELECT stemmed, term FROM (SELECT stemmed, term, row_number() OVER (PARTITION BY stemmed "
    "ORDER BY sum(docs) DESC, term) AS k, sum(docs) AS d FROM term_docs GROUP BY stemmed, term) t "
    f"WHERE k <= {PREFETCH} AND d * {COMMON_DIVISOR} > (SELECT coalesce(sum(docs), 0) FROM text_totals) "
    "ORDER BY stemmed, k"
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PostgresStore]:
    from tests.pg import drop_database, fresh_database

    url = fresh_database()
    opened = PostgresStore(url)
    try:
        service = Service(opened, Settings(vault_dir=tmp_path / "vault", database_url=url, secret_policy="allow"))
        rng = random.Random(7)
        # Forty words of falling frequency (many of them as common as another: ties broken by the
        # term), and a rare word a note: more common terms than `PREFETCH` in each column.
        words = [f"w{i:02d}" for i in range(40)]
        for n in range(120):
            chosen = [w for i, w in enumerate(words) if rng.random() < 0.9 / (1 + i // 4)]
            text = " ".join([*chosen, f"rare{n}"])
            service.note(parse("note", {"initiative": "hints", "text": text, "kind": "observation"}))
        yield opened
    finally:
        opened.close()
        drop_database(url)


def test_the_common_terms_are_the_definitions(store: PostgresStore) -> None:
    with store.read() as session:
        expected: dict[str, list[str]] = {}
        for stemmed, term in session._db.raw_rows(DEFINITION):
            expected.setdefault("stf" if stemmed else "ltf", []).append(str(term))
        common = session._db.raw_one(
            "SELECT count(*) FROM (SELECT term FROM term_docs WHERE NOT stemmed GROUP BY term "
            f"HAVING sum(docs) * {COMMON_DIVISOR} > (SELECT coalesce(sum(docs), 0) FROM text_totals)) c"
        )
        store.copies._hinted(session._db, None, [], frozenset(), 0)  # type: ignore[arg-type]
    assert common is not None and common[0] > PREFETCH  # more common terms than are kept: a cut, and ties
    assert len(expected["ltf"]) == PREFETCH and expected["stf"]
    assert store.copies._common == expected
