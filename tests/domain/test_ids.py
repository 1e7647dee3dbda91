"""UUIDv7 ids: the text form is the standard one (`uuid.UUID`'s), built without it."""

from __future__ import annotations

import random
import uuid

import pytest

from kaeru.domain.ids import looks_like_uuid, uuid7


@pytest.mark.parametrize("seed", range(5))
def test_uuid7_text_is_uuid_s_text(seed: int) -> None:
    """Formatting the 128 bits directly (issue 14) gives what `str(uuid.UUID(int=...))` gave, and a
    version-7, variant-10 UUID carrying the millisecond."""
    rng = random.Random(seed)
    for _ in range(2000):
        ms = rng.choice([0, (1 << 48) - 1, rng.randrange(1 << 48)])
        entropy = rng.choice([bytes(10), b"\xff" * 10, rng.randbytes(10)])
        text = uuid7(ms, entropy)
        parsed = uuid.UUID(text)
        assert str(parsed) == text and looks_like_uuid(text)
        assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
        assert parsed.int >> 80 == ms
        rand = int.from_bytes(entropy, "big")
        assert parsed.int & ((1 << 62) - 1) == rand & ((1 << 62) - 1)
        assert (parsed.int >> 64) & 0xFFF == (rand >> 62) & 0xFFF


def test_uuid7_needs_ten_bytes() -> None:
    with pytest.raises(ValueError):
        uuid7(0, bytes(9))
