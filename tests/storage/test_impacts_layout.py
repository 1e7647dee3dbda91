"""The compact layout of the in-memory bm25 inputs (decision 16.E1): each phrase's `aFreq` in the
narrowest exact type, and every row's `D` decoded in bulk from FTS5's `nodes_fts_docsize` varints.
The property test of `test_search_top_k.py` checks the scores against `bm25()` to the bit; these
check the pieces on inputs its small vaults never reach (multi-byte varints, wide values)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaeru.storage.sql.copies import narrowest, packed_uuid, uuid_texts, wider
from kaeru.storage.sqlite.copies import put_sizes, row_sizes

np: Any = pytest.importorskip("numpy")


def varint(value: int) -> bytes:
    """SQLite's varint (`sqlite3Fts5PutVarint`) for values under 2**56: big-endian 7-bit groups."""
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(groups))


sizes = st.lists(st.integers(0, 2**40), min_size=1, max_size=9)


@given(st.lists(sizes, min_size=1, max_size=40))
def test_row_sizes_sum_each_blobs_varints(rows: list[list[int]]) -> None:
    blobs = [b"".join(map(varint, r)) for r in rows]
    assert row_sizes(np, blobs).tolist() == [sum(r) for r in rows]


def test_an_empty_blob_is_decoded_by_itself() -> None:
    assert row_sizes(np, [b"", varint(300) + varint(5)]).tolist() == [0, 305]
    assert row_sizes(np, []).tolist() == []


values = st.lists(
    st.one_of(
        st.integers(0, 300).map(float),
        st.integers(0, 70_000).map(float),
        st.floats(0, 1e6, allow_nan=False).filter(lambda v: v >= 0),
        st.sampled_from([0.5, 2.25, 0.1, 1e-6]),
    ),
    max_size=30,
)


@given(values, values)
def test_the_narrowest_type_holds_every_value_exactly(one: list[float], other: list[float]) -> None:
    a, b = np.array(one, dtype=np.float64), np.array(other, dtype=np.float64)
    for held, dtype in ((a, narrowest(np, a)), (b, narrowest(np, b))):
        assert (held.astype(dtype).astype(np.float64) == held).all()
    both = wider(np, narrowest(np, a), narrowest(np, b))
    joined = np.concatenate((a, b))
    assert (joined.astype(both).astype(np.float64) == joined).all()


def test_small_whole_counts_take_a_byte() -> None:
    assert narrowest(np, np.array([0.0, 4.0, 21.0, 255.0])) == np.uint8
    assert narrowest(np, np.array([256.0])) == np.uint16
    assert narrowest(np, np.array([65536.0])) == np.float32
    assert narrowest(np, np.array([0.1])) == np.float64


def test_sizes_widen_past_65535_tokens() -> None:
    size = np.zeros(4, dtype=np.uint16)
    size = put_sizes(np, size, [(1, varint(12)), (3, varint(70_000) + varint(1))])
    assert size.dtype == np.uint32 and size.tolist() == [0, 12, 0, 70_001]


@given(st.uuids())
def test_a_uuid_is_kept_in_16_bytes_and_given_back_as_its_text(value: Any) -> None:
    text = str(value)
    raw = packed_uuid(text)
    assert raw is not None and len(raw) == 16
    assert uuid_texts(np, np.frombuffer(raw, dtype=np.uint8).reshape(1, 16)) == [text]


def test_other_ids_are_not_packed() -> None:
    upper = "0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"
    for text in (upper, upper.lower().replace("-", ""), "n1", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5", "x" * 36):
        assert packed_uuid(text) is None
    assert uuid_texts(np, np.zeros((0, 16), dtype=np.uint8)) == []
