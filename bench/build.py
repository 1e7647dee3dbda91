"""Filling a vault with the synthetic corpus, through the real write path.

Both modes store exactly what `note` stores (same validation, secret scan, derived tags, FTS rows,
links); they differ only in transactions:

* `service` — one `Service.note` call (one transaction, one audit record) per note, as an agent would.
* `bulk` — `run_mutation` with a body that runs the `note` use case for many notes of one initiative
  in one transaction (one audit record per batch). Faster to build big vaults.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from bench.corpus import CorpusBuilder, NoteSpec
from kaeru.api.requests import parse
from kaeru.service import Service, capture
from kaeru.service.mutation import WriteContext, run_mutation
from kaeru.service.requests import NoteRequest

BULK_BATCH = 2_000


def _args(spec: NoteSpec, ids: list[str]) -> dict[str, Any]:
    args = spec.args()
    if spec.link_to is not None:
        args["link_to"] = ids[spec.link_to]
    return args


class Progress:
    def __init__(self, total: int, label: str, quiet: bool):
        self.total, self.label, self.quiet = total, label, quiet
        self.start = time.perf_counter()
        self.next_mark = 0.1

    def update(self, done: int) -> None:
        if self.quiet or self.total < 20_000 or done / self.total < self.next_mark:
            return
        elapsed = time.perf_counter() - self.start
        print(f"  {self.label}: {done:,}/{self.total:,} notes, {elapsed:.0f}s", file=sys.stderr, flush=True)
        self.next_mark += 0.1


def build(service: Service, builder: CorpusBuilder, mode: str, *, quiet: bool = False) -> list[str]:
    """Create the corpus' notes; returns the node id of every note, by corpus index."""
    progress = Progress(builder.size, f"build ({mode})", quiet)
    ids: list[str] = []
    if mode == "service":
        for spec in builder.notes():
            outcome, _ = service.note(parse("note", _args(spec, ids)))
            assert outcome.primary is not None, outcome.issues
            ids.append(outcome.primary.id)
            progress.update(len(ids))
        return ids
    if mode != "bulk":
        raise ValueError(f"unknown build mode {mode!r}")
    specs = builder.notes()
    index = 0
    while index < builder.size:
        batch: dict[str, list[tuple[int, NoteSpec]]] = {}
        for _ in range(min(BULK_BATCH, builder.size - index)):
            batch.setdefault(builder.initiative_of(index), []).append((index, next(specs)))
            index += 1
        ids.extend([""] * (index - len(ids)))
        for initiative, group in batch.items():
            run_mutation(
                service.rt,
                operation="note",
                initiative=initiative,
                request_id=None,
                args={"bench_bulk": [group[0][0], group[-1][0]]},
                actor=service.rt.settings.actor,
                body=_bulk_body(group, ids),
            )
        progress.update(index)
    return ids


def _bulk_body(group: list[tuple[int, NoteSpec]], ids: list[str]) -> Callable[[WriteContext], None]:
    def body(ctx: WriteContext) -> None:
        for position, spec in group:
            capture.note(ctx, NoteRequest.trusted(_args(spec, ids)))
            ids[position] = ctx.outcome.created[-1].id

    return body
