"""A retry is the same call however it spells its initiative (decision 461): the initiative is
trimmed and put in NFC (SPEC §1.3) and lands in the same place, so a `request_id` sent again with
other surrounding spaces replays the first answer instead of `request_id_reused`. A call whose
initiative needed no normalising digests as it always did: replay records stored before still match.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaeru.api.requests import parse
from kaeru.domain.digest import args_sha256
from kaeru.errors import RequestIdReused
from kaeru.service import Service
from kaeru.service.replay import call_digests

#: `args_digest` of {"initiative": "t", "text": "hello"} as kaeru stored it before this change.
STORED_BEFORE = "5edbad55edca582923485f87d3a521c4937c6cbb39575e0dab0e3ac66c682c75"

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zs", "Zl", "Zp")), min_size=1, max_size=8)
padding = st.text(" \t\n\u3000", max_size=3)


def test_a_call_that_needed_no_normalising_digests_as_before() -> None:
    assert call_digests({"initiative": "t", "text": "hello", "request_id": "ws1"}, "t") == (STORED_BEFORE,)


@given(name=names, before=padding, after=padding)
def test_every_spelling_of_an_initiative_digests_as_its_normal_form(name: str, before: str, after: str) -> None:
    normal = unicodedata.normalize("NFC", name.strip())
    if not normal:
        return
    plain = {"initiative": normal, "text": "x", "request_id": "k"}
    spelt = {**plain, "initiative": before + unicodedata.normalize("NFD", name) + after}
    digests = call_digests(spelt, normal)
    assert digests[0] == call_digests(plain, normal)[0] == args_sha256(plain, ("request_id",))
    # The spelling as sent is what an older kaeru stored for it: still matched.
    assert digests[-1] == args_sha256(spelt, ("request_id",))


@pytest.mark.parametrize("spelling", [" t ", "t\n", "\tt"])
def test_a_retry_with_other_spaces_around_its_initiative_replays(service: Service, spelling: str) -> None:
    first, replayed = service.note(parse("note", {"initiative": "t", "text": "hello", "request_id": "ws1"}))
    assert not replayed
    again, replayed = service.note(parse("note", {"initiative": spelling, "text": "hello", "request_id": "ws1"}))
    assert replayed and again.primary == first.primary
    # Other arguments are still another call.
    with pytest.raises(RequestIdReused):
        service.note(parse("note", {"initiative": spelling, "text": "hello!", "request_id": "ws1"}))
