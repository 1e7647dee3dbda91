"""Recall's semantic channel (the `[semantic]` extra): the query's vector against the stored ones
in scope, a vector of a text its node no longer holds left out, a model that cannot load said."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import TYPE_CHECKING

from kaeru.errors import KaeruError
from kaeru.service.embedding import node_text, text_digest
from kaeru.service.outcomes import Issue
from kaeru.storage.sql.apart import apart

if TYPE_CHECKING:
    from kaeru.service.recall.channels import _Nodes
    from kaeru.service.recall.fusion import Fusion
    from kaeru.storage.base import Session

log = logging.getLogger(__name__)


def semantic_channel(
    session: Session,
    scope_ids: list[int],
    started: Future[tuple[bytes, list[tuple[str, float]] | None]],
    fusion: Fusion,
    model: str,
    loaded: _Nodes,
    issues: list[Issue] | None = None,
    candidates: int = 100,
) -> None:
    """Cosine similarity between the query and the stored vectors in scope: the best `candidates`,
    ranked in the database (decisions 17.V1, 17.X1); the query's vector and its first candidates
    were started on a worker thread when recall began (17.X2). A model that cannot load: said in
    `issues`, and the recall goes on with its other channels; so does a scan that fails."""
    try:
        # A model that cannot load, or a scan that fails (its first round on the worker's snapshot,
        # the rest here: past the statement timeout on a big scope, a lock waited for too long),
        # costs the recall its semantic channel, not its answer; on PostgreSQL the failed statement
        # must not abort the transaction the other channels still read in (`apart`).
        vector, first_round = started.result()
        with apart(session):
            nearest = session.nearest_vectors(scope_ids, model, vector, candidates, first_round)
            rows = [(i, s) for i, s in nearest if s > 0]
            # A vector of a text its node no longer holds (revised without the channel; `kaeru
            # reindex`) found it by its old meaning: left out. The candidates' digests in one read.
            stored = session.vector_digests_of(model, [i for i, _ in rows]) if rows else {}
    except Exception as exc:
        _without(issues, exc)
        return
    loaded.get([i for i, _ in rows])
    rows = [(i, s) for i, s in rows if (n := loaded.whole.get(i)) and stored.get(i) == text_digest(node_text(n))]
    if not rows:
        return
    # Rescaled between the last and the best candidate: cosine similarities of a small sentence model
    # crowd into a narrow band (the 100th match is often 0.6× the best), so dividing by the best
    # alone gave a hundred loosely related memories most of the channel's weight.
    best, floor = rows[0][1], rows[-1][1]
    for node_id, sim in rows:
        fusion.put("semantic", node_id, (sim - floor) / (best - floor) if best > floor else 1.0)


def _without(issues: list[Issue] | None, exc: Exception) -> None:
    """The recall goes on without its semantic channel: logged (with the traceback of what is not
    ours), and said as `semantic_unavailable` (decision 322)."""
    log.warning("recall without its semantic channel: %s", exc, exc_info=not isinstance(exc, KaeruError))
    if issues is not None:
        why = exc.message if isinstance(exc, KaeruError) else f"{type(exc).__name__}: {exc}"
        issues.append(Issue("semantic_unavailable", f"{why}; this recall used the lexical channels only"))
