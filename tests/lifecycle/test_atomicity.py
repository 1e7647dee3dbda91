"""A multi-step mutation that fails half-way leaves no trace (one transaction)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.domain.model import Edge
from kaeru.service import Service
from kaeru.storage.base import Session, Store


class FaultAfterFirstEdge:
    """The real store, with a failure injected at the first edge written inside a write session."""

    def __init__(self, inner: Store):
        self.inner = inner
        self.backend = inner.backend
        self.armed = False

    @contextmanager
    def write(self) -> Iterator[Session]:
        with self.inner.write() as session:
            if not self.armed:
                yield session
                return
            original = session.put_edge

            def failing(edge: Edge, **who: Any) -> None:
                original(edge, **who)
                raise RuntimeError("injected crash after the first write")

            session.put_edge = failing  # type: ignore[method-assign]
            yield session

    def read(self) -> Any:
        return self.inner.read()

    def close(self) -> None:
        self.inner.close()

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def clock_offset(self) -> timedelta:
        return self.inner.clock_offset()


def _snapshot(service: Service, node_id: str) -> dict[str, Any]:
    read = service.read(parse("read", {"initiative": "proj", "node": node_id, "neighbours": True}))
    hits = service.search(
        parse("search", {"initiatives": ["proj"], "filters": {"current": "all", "types": ["idea", "draft"]}})
    )
    view = read.hits[0]
    return {
        "revision": view.node.revision,
        "tier": view.node.tier,
        "edges": sorted(e.key for e in read.edges or []),
        "ids": sorted(h.node.id for h in hits.hits),
    }


@pytest.mark.parametrize("mode", ["settle", "supersede"])
def test_a_crash_mid_evolve_changes_nothing(store: Store, service: Service, mode: str) -> None:
    faulty = FaultAfterFirstEdge(store)
    svc = Service(faulty, service.rt.settings)  # type: ignore[arg-type]
    source, _ = svc.note(
        parse("note", {"initiative": "proj", "text": "draft: cache tokens per field", "kind": "draft"})
    )
    assert source.primary is not None
    before = _snapshot(svc, source.primary.id)
    faulty.armed = True
    with pytest.raises(RuntimeError, match="injected"):
        svc.evolve(
            parse(
                "evolve",
                {"initiative": "proj", "mode": mode, "source": source.primary.id, "new_body": "cache tokens per node"},
            )
        )
    faulty.armed = False
    assert _snapshot(svc, source.primary.id) == before
