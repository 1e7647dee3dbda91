"""SQLite stores a membership's facet as a small integer (`dialect.FACET_CODES`, decision 16.T1):
every facet a node can carry needs a code, and migration 022 wrote the same codes into existing
vaults — a code that differed would put old members in another section."""

from __future__ import annotations

import re
from importlib.resources import files

from kaeru.storage.sql.dialect import FACET_CODES
from kaeru.storage.sql.sections import ALL_FACETS


def test_every_facet_a_node_can_carry_has_one_code() -> None:
    assert set(FACET_CODES) == {"", *ALL_FACETS}
    assert len(set(FACET_CODES.values())) == len(FACET_CODES)
    assert FACET_CODES[""] == min(FACET_CODES.values()), "the audit event's code sorts first (`any_facet`)"


def test_migration_022_wrote_the_same_codes() -> None:
    script = files("kaeru.storage.sqlite.migrations").joinpath("022_one_membership_btree.sql").read_text()
    written = {name: int(code) for name, code in re.findall(r"WHEN '([a-z:]*)' THEN (\d+)", script)}
    assert written == FACET_CODES
