"""Digests of a call's arguments, for "is this the same call?" (replay keys, cursor binding).

Taken of canonical JSON — sorted keys, no spaces — so the same arguments give the same digest in
any process and version; stored digests are compared with new ones, so the encoding never changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Container, Mapping
from typing import Any

#: `json.dumps(value, sort_keys=True, separators=(",", ":"))`, with the encoder built once.
canonical_json = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode


def args_sha256(args: Mapping[str, Any], leave_out: Container[str] = ()) -> str:
    """Hex SHA-256 of `args` without the keys in `leave_out`."""
    payload = {k: v for k, v in args.items() if k not in leave_out}
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()
