"""Synthetic amg archives of any size, written line by line (never held whole in memory).

`write(path, nodes)` writes one initiative, `nodes` note revisions (observations with a few words
of varied text) and an edge from every tenth node to the one before it: what an import of a large
vault does, without building that vault first. Deterministic for a given seed.
"""

from __future__ import annotations

import gzip
import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

from kaeru.domain.timefmt import fmt

WORDS = [
    "heron",
    "egret",
    "pond",
    "reed",
    "marsh",
    "tide",
    "estuary",
    "pelican",
    "osprey",
    "kingfisher",
    "willow",
    "alder",
    "sedge",
    "mudflat",
    "shallows",
    "current",
    "migration",
    "nest",
    "roost",
    "dawn",
    "dusk",
    "wader",
    "plover",
    "curlew",
]


def _dumps(record: dict[str, object]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def write(path: Path, nodes: int, *, initiative: str = "bulk", seed: int = 15, edge_every: int = 10) -> Path:
    """An amg archive at `path` (gzip when it ends in `.gz`) with `nodes` node revisions."""
    rng = random.Random(seed)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    edges = (nodes - 1) // edge_every if nodes > 1 else 0
    last = fmt(base + timedelta(milliseconds=nodes))
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as out:
        stream: IO[str] = out
        header = {
            "format": "amg",
            "version": 2,
            "exported_at": last,
            "initiatives": [initiative],
            "counts": {
                "initiatives": 1,
                "ended_initiatives": 0,
                "node_revisions": nodes,
                "edge_revisions": edges,
                "slot_revisions": 0,
                "audit": 0,
            },
            "omissions": [],
        }
        stream.write(_dumps(header) + "\n")
        start = fmt(base)
        stream.write(
            _dumps(
                {
                    "kind": "initiative",
                    "name": initiative,
                    "created_at": start,
                    "last_activity": last,
                    "properties": {},
                    "names": [{"name": initiative, "from": start, "to": None}],
                }
            )
            + "\n"
        )
        ids: list[str] = []
        for n in range(nodes):
            node_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            ids.append(node_id)
            at = fmt(base + timedelta(milliseconds=n + 1))
            words = rng.sample(WORDS, 6)
            body = f"note {n}: the {words[0]} by the {words[1]} near the {words[2]}, {' '.join(words[3:])}"
            stream.write(
                _dumps(
                    {
                        "kind": "node",
                        "id": node_id,
                        "rev_no": 1,
                        "revision": f"1-{rng.getrandbits(48):012x}",
                        "node_type": "episode",
                        "tier": "operational",
                        "name": f"note-{n}-{node_id[-6:]}",
                        "body": body,
                        "description": None,
                        "tags": ["kind:observation", f"topic:{words[0]}", "lang:en"],
                        "layer": "warm",
                        "visibility": "local",
                        "status": None,
                        "properties": {},
                        "initiatives": [initiative],
                        "created_at": at,
                        "recorded_at": at,
                        "retracted": False,
                        "pinned": False,
                        "request_id": None,
                        "actor": "bench",
                    }
                )
                + "\n"
            )
        for n in range(edge_every, nodes, edge_every):
            at = fmt(base + timedelta(milliseconds=n + 1))
            stream.write(
                _dumps(
                    {
                        "kind": "edge",
                        "src": ids[n],
                        "dst": ids[n - 1],
                        "edge_type": "refers_to",
                        "weight": 0.5,
                        "rev_no": 1,
                        "properties": {},
                        "created_at": at,
                        "recorded_at": at,
                        "retracted": False,
                    }
                )
                + "\n"
            )
    return path
