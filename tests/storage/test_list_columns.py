"""SQLite stores a node's tags and initiatives as the JSON text `json.dumps` writes: the text that
vaults already hold, that `instr` tests look into (`Dialect.has_tag`, the `nodes_rules` index) and
that `json_each` reads. Integer lists are spelt without the encoder (decision 14.C5): the same text."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from kaeru.storage.sql.dialect import SQLITE


@given(st.lists(st.integers(min_value=-(2**70), max_value=2**70), max_size=6))
def test_a_list_of_initiative_ids_is_stored_as_json_dumps_writes_it(ids: list[int]) -> None:
    assert SQLITE.items(tuple(ids)) == json.dumps(ids)
    assert json.loads(SQLITE.items(ids)) == ids


@given(st.lists(st.one_of(st.text(max_size=12), st.booleans(), st.integers()), max_size=6))
def test_tags_and_mixed_lists_are_stored_as_json_dumps_writes_them(values: list[object]) -> None:
    assert SQLITE.items(tuple(values)) == json.dumps(values)
