"""The application API: one method per use case, shared by the MCP tools and the CLI.

Every mutation runs through `run_mutation` (one transaction, replay, audit); every read through a
read snapshot. Callers get `MutationOutcome`/`ReadOutcome` values or a `KaeruError`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from kaeru.config import Settings
from kaeru.domain.timefmt import fmt
from kaeru.errors import KaeruError, Unavailable
from kaeru.service import grants
from kaeru.service.embedding import EXTRA_INSTALL, Embedder, node_text
from kaeru.service.mutation import WriteContext, run_mutation
from kaeru.service.outcomes import Issue, MutationOutcome, ReadOutcome, StateOutcome, TrailOutcome
from kaeru.service.runtime import Runtime, system_clock
from kaeru.service.unembedded import Unembedded
from kaeru.storage.base import Store

if TYPE_CHECKING:
    # Each use case is imported by the method that runs it: the first call after `kaeru serve`
    # starts loads its own use case, not all of them (decision 16.S1).
    from kaeru.service import context, initiatives, recall, reflect
    from kaeru.service import requests as rq

R = TypeVar("R", bound="rq.Request")
log = logging.getLogger(__name__)


class Service:
    """The facade over one store. Thread-safe: each call uses its own transaction."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        clock: Callable[[], datetime] = system_clock,
        entropy: Callable[[int], bytes] | None = None,
        embedder: Embedder | None = None,
    ):
        self.rt = Runtime(store, settings, clock) if entropy is None else Runtime(store, settings, clock, entropy)
        self.rt.embedder = embedder
        self._purged_at: datetime | None = None
        #: The memories the semantic channel cannot find by meaning, counted now and then (`recall`).
        self._unembedded = Unembedded()

    @property
    def store(self) -> Store:
        return self.rt.store

    def _mutate(
        self,
        operation: str,
        request: R,
        body: Callable[[WriteContext, R], None],
        actor: str | None,
        create: bool = True,
        exclusive: bool = False,
    ) -> tuple[MutationOutcome, bool]:
        self._granted(operation, request)
        self._maybe_purge()
        outcome, replayed = run_mutation(
            self.rt,
            operation=operation,
            initiative=getattr(request, "initiative", None),
            request_id=getattr(request, "request_id", None),
            args=request.wire(),
            actor=grants.actor(actor or self.rt.settings.actor),
            body=lambda ctx: body(ctx, request),
            create=create,
            exclusive=exclusive,
        )
        if outcome.state in ("applied", "partial"):
            if self.rt.embedder is not None:
                self._embed_committed(outcome)
            elif self.rt.settings.semantic:
                self._unembedded_without_extra(outcome)
        return outcome, replayed

    def _embed_committed(self, outcome: MutationOutcome) -> None:
        """The written nodes' vectors, after the commit, in their own short write: a slow model never
        holds the write lock. The write is stored whatever happens here, so a failure (a model that
        cannot load, a vault busy for the vectors' write) is logged and said as a `not_embedded`
        warning, never as a refusal: a caller told "nothing was applied" writes it again. A replay
        embeds again too, so a retry mends what its first answer warned of, or says it again."""
        from kaeru.service import recall

        try:
            recall.embed_nodes(self.rt, [ref.id for ref in (*outcome.created, *outcome.affected)])
        except Exception as exc:
            # A model known not to load is said in one line; anything else with its traceback.
            log.warning("the write was stored, its vector was not: %s", exc, exc_info=not isinstance(exc, KaeruError))
            why = exc.message if isinstance(exc, KaeruError) else f"{type(exc).__name__}: {exc}"
            outcome.issues.append(_not_embedded(why))
            self._unembedded.changed()

    def _unembedded_without_extra(self, outcome: MutationOutcome) -> None:
        """KAERU_SEMANTIC=1 without the [semantic] extra: a written memory a model would have
        embedded (live, with text: as `embed_nodes` chooses) gets the `not_embedded` warning a broken
        extra gives, not silence; `recall` says `semantic_unavailable` alike. The nodes are read
        only in that misconfigured state."""
        ids = [ref.id for ref in (*outcome.created, *outcome.affected)]
        if not ids:
            return
        with self.rt.store.read() as session:
            nodes = session.nodes_by_ids(ids).values()
        if any(not n.retracted and node_text(n).strip() for n in nodes):
            outcome.issues.append(
                _not_embedded(f"KAERU_SEMANTIC=1 is set, but the [semantic] extra is not installed: {EXTRA_INSTALL}")
            )

    @staticmethod
    def _granted(operation: str, request: rq.Request) -> None:
        """A token's grants before any write (decision 15.K2): a read-only token writes nothing, a
        limited one names only its initiatives; the actor is the token's name (`grants.actor`)."""
        grants.check_write(operation)
        grants.check_args(request.wire())

    def _maybe_purge(self) -> None:
        """Drop replay keys older than the retention, and result lists stored by earlier versions'
        cursors once they expire (nothing stores them now, decision 15.P4), at most once an hour per
        process."""
        now = self.rt.now()
        if self._purged_at is not None and timedelta(0) <= now - self._purged_at < timedelta(hours=1):
            return
        self._purged_at = now
        with self.rt.store.write() as session:
            window = timedelta(days=self.rt.settings.replay_days)
            session.purge_requests(fmt(now - window), window)
            session.purge_cursors(fmt(now - timedelta(hours=self.rt.settings.cursor_hours)))

    # --- mutations ------------------------------------------------------------------------------
    def note(self, request: rq.NoteRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import capture

        return self._mutate("note", request, capture.note, actor)

    def claim(self, request: rq.ClaimRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import capture

        return self._mutate("claim", request, capture.claim, actor)

    def revise(self, request: rq.ReviseRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import revise

        return self._mutate("revise", request, revise.revise, actor)

    def replace(self, request: rq.ReplaceRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import revise

        return self._mutate("replace", request, revise.replace, actor)

    def link(self, request: rq.LinkRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import graph

        return self._mutate("link", request, graph.link, actor)

    def verdict(self, request: rq.VerdictRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import lifecycle

        return self._mutate("verdict", request, lifecycle.verdict, actor)

    def evolve(self, request: rq.EvolveRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import evolve

        return self._mutate("evolve", request, evolve.evolve, actor)

    def review(self, request: rq.ReviewRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import lifecycle

        return self._mutate("review", request, lifecycle.review, actor)

    def slot(self, request: rq.SlotRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import lifecycle

        return self._mutate("slot", request, lifecycle.slot, actor)

    def layer(self, request: rq.LayerRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import lifecycle

        return self._mutate("layer", request, lifecycle.layer, actor)

    def forget(self, request: rq.ForgetRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import lifecycle

        return self._mutate("forget", request, lifecycle.forget, actor)

    def task(self, request: rq.TaskRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import tasks

        return self._mutate("task", request, tasks.task, actor)

    def task_update(self, request: rq.TaskUpdateRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import tasks

        return self._mutate("task_update", request, tasks.task_update, actor, create=False)

    def initiative(self, request: rq.InitiativeRequest, actor: str | None = None) -> tuple[MutationOutcome, bool]:
        from kaeru.service import initiatives

        create = request.action in ("attach", "set_board")
        # A merge or delete moves its nodes in chunks first, each its own transaction (decision 15.P5),
        # so the token's grants are checked before the first chunk.
        self._granted("initiative", request)
        warned: list[Any] = []
        handled = initiatives.in_chunks(self.rt, request, grants.actor(actor or self.rt.settings.actor), warned=warned)
        try:
            return self._mutate(
                "initiative",
                request,
                lambda ctx, r: initiatives.manage(ctx, r, handled, warned),
                actor,
                create=create,
                exclusive=request.action in initiatives.ALONE,
            )
        except Unavailable as exc:
            if not handled:
                raise
            return initiatives.stopped_part_way(request, handled, exc, warned), False

    def hygiene(self, initiative: str) -> list[Any]:
        """Force one hygiene pass now (the CLI's `kaeru hygiene`; tests drive fixed points with it)."""
        from kaeru.service import context

        return context.run_hygiene(self.rt, initiative)

    # --- reads ----------------------------------------------------------------------------------
    def search(self, request: rq.SearchRequest) -> ReadOutcome:
        from kaeru.service import search

        grants.check_args(request.wire())
        return search.search(self.rt, request)

    def read(self, request: rq.ReadRequest) -> ReadOutcome:
        from kaeru.service import read

        grants.check_args(request.wire())
        return read.read(self.rt, request)

    def trail(self, request: rq.TrailRequest) -> TrailOutcome:
        from kaeru.service import history

        grants.check_args(request.wire())
        return history.trail(self.rt, request)

    def current_state(self, request: rq.CurrentStateRequest) -> StateOutcome:
        from kaeru.service import history

        grants.check_args(request.wire())
        return history.current_state(self.rt, request)

    def initiatives(self, request: rq.InitiativesRequest) -> initiatives.InitiativesOutcome:
        from kaeru.service import initiatives

        grants.check_args(request.wire())
        return initiatives.list_initiatives(self.rt, request)

    def context(self, request: rq.ContextRequest, actor: str | None = None) -> context.ContextOutcome:
        from kaeru.service import context

        grants.check_args(request.wire())
        return context.context(self.rt, request, grants.actor(actor or self.rt.settings.actor))

    def timeline(self, request: rq.TimelineRequest) -> tuple[ReadOutcome, str | None]:
        from kaeru.service import timeline

        grants.check_args(request.wire())
        return timeline.timeline(self.rt, request)

    def reflect(self, request: rq.ReflectRequest) -> reflect.ReflectOutcome:
        from kaeru.service import reflect

        grants.check_args(request.wire())
        return reflect.reflect(self.rt, request)

    def recall(self, request: rq.RecallRequest, *, disabled: frozenset[str] = frozenset()) -> recall.RecallOutcome:
        """Task-aware retrieval; `disabled` switches channels off (for ablation studies)."""
        from kaeru.service import recall

        grants.check_args(request.wire())
        found = recall.recall(self.rt, request, disabled)
        ran = any(c.name == "semantic" for c in found.plan.channels)
        if ran and request.query and not any(i.code == "semantic_unavailable" for i in found.issues):
            # Its memories without a current vector, as last counted (the count never holds it up).
            if (said := self._unembedded.issue(found.coverage.initiatives)) is not None:
                found.issues.append(said)
            self._unembedded.count_soon(self.rt)
        return found

    def warm(self, keep_going: Callable[[], bool] = lambda: True) -> None:
        """Import what the first `recall`, `search` and `context` import, and let the store read ahead
        what their first rankings read while `keep_going()` (decisions 269, 270): run by a server on a
        thread of its own once its first call is answered, while the agent thinks, so that its first
        recalls do not pay for it."""
        import kaeru.service.context
        import kaeru.service.recall.use_case
        import kaeru.service.search  # noqa: F401

        self.store.warm(keep_going)
        self._unembedded.count_now(self.rt, keep_going)

    def recall_channels(self) -> tuple[str, ...]:
        from kaeru.service import recall

        return recall.channel_names()

    def reindex(self, progress: Callable[[int, int], None] | None = None, batch: int = 256) -> int:
        """Compute missing or stale vectors for the semantic channel; returns how many were written."""
        from kaeru.service import recall

        written = recall.reindex(self.rt, progress, batch)
        self._unembedded.changed()
        return written


def _not_embedded(why: str) -> Issue:
    """A stored write whose memory got no vector, and why (decision 322)."""
    return Issue(
        "not_embedded",
        f"stored, but this memory has no vector yet for semantic recall ({why}); recall finds it by its words, "
        "and `kaeru reindex` adds its vector",
    )
