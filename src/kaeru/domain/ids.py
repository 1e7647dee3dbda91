"""UUIDv7 construction (Python 3.11 has no `uuid.uuid7`); pure: the caller supplies time and entropy."""

from __future__ import annotations

import re

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def uuid7(unix_ms: int, entropy: bytes) -> str:
    """A RFC 9562 UUIDv7: 48-bit millisecond timestamp, version 7, variant 10, 74 random bits."""
    if len(entropy) < 10:
        raise ValueError("uuid7 needs 10 bytes of entropy")
    rand = int.from_bytes(entropy[:10], "big")
    value = (unix_ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    # What `str(uuid.UUID(int=value))` gives, formatted directly (a fifth of its cost; on every write).
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def looks_like_uuid(text: str) -> bool:
    return bool(_UUID.match(text))
