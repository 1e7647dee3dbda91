"""NodeRef parsing: a bare string (id or exact name), `{id}`, or `{initiative, name}`."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.domain.refs import parse_ref

UUID = "01a22ac1-6ebb-7f3f-84d0-ee3708481fa2"


def test_bare_uuid_may_be_an_id_or_a_name() -> None:
    """A UUID-shaped string is tried as an id, but stays usable as a name (kaeru's bypass bug)."""
    ref = parse_ref(UUID)
    assert ref.id == UUID
    assert ref.name == UUID
    assert ref.bare


def test_bare_name() -> None:
    """A non-UUID string is a name."""
    ref = parse_ref("deploy-plan")
    assert ref.id is None
    assert ref.name == "deploy-plan"
    assert ref.initiative is None


def test_id_object() -> None:
    """`{id}` is an id only, never a name."""
    ref = parse_ref({"id": UUID})
    assert ref.id == UUID
    assert not ref.bare


def test_initiative_and_name_object() -> None:
    """`{initiative, name}` names a node in another scope."""
    ref = parse_ref({"initiative": "other", "name": "deploy-plan"})
    assert (ref.initiative, ref.name, ref.id) == ("other", "deploy-plan", None)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        {},
        {"id": ""},
        {"name": "x"},
        {"initiative": "x"},
        {"id": UUID, "name": "x"},
        {"initiative": "", "name": "x"},
        42,
        None,
        ["x"],
    ],
)
def test_invalid_refs_are_rejected(raw: Any) -> None:
    """Anything else is a ValueError (the service turns it into invalid_argument)."""
    with pytest.raises(ValueError):
        parse_ref(raw)
