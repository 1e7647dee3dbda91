"""Argument digests: replay compares a stored digest with a new one, so the encoding is fixed."""

from __future__ import annotations

from kaeru.domain.digest import args_sha256


def test_the_digest_of_a_call_is_pinned_across_versions() -> None:
    """A digest stored by an earlier version still matches the same call (key order, spacing and
    non-ASCII text do not change it); the left-out key does not take part."""
    call = {"initiative": "kaeru", "text": "Café — ☕", "tags": ["b", "a"], "options": {"z": 1, "a": None}}
    expected = "1f9699acbc7ffa46b6d7f728fb515738a7c9182727be09bc1576d7103702a2bf"
    assert args_sha256(call) == expected
    reordered = {"options": {"a": None, "z": 1}, "tags": ["b", "a"], "text": "Café — ☕", "initiative": "kaeru"}
    assert args_sha256({**reordered, "request_id": "r-1"}, ("request_id",)) == expected


def test_different_arguments_give_different_digests() -> None:
    """Tag order is part of the call (tags are kept in the order given)."""
    assert args_sha256({"tags": ["a", "b"]}) != args_sha256({"tags": ["b", "a"]})
