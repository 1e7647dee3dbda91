"""The application API: one method per use case, shared by the MCP tools and the CLI.

Every mutation runs through `run_mutation` (one transaction, replay, audit); every read through a
read snapshot. Callers get `MutationOutcome`/`ReadOutcome` values or a `KaeruError`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from kaeru.config import Settings
from kaeru.domain.timefmt import fmt
from kaeru.service import (
    capture,
    context,
    evolve,
    grants,
    graph,
    history,
    initiatives,
    lifecycle,
    read,
    recall,
    reflect,
    revise,
    search,
    tasks,
    timeline,
)
from kaeru.service.embedding import Embedder
from kaeru.service.mutation import WriteContext, run_mutation
from kaeru.service.outcomes import MutationOutcome, ReadOutcome, StateOutcome, TrailOutcome
from kaeru.service.runtime import Runtime, system_clock
from kaeru.storage.base import Store


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

    @property
    def store(self) -> Store:
        return self.rt.store

    def _mutate(
        self,
        operation: str,
        args: dict[str, Any],
        body: Callable[[WriteContext, dict[str, Any]], None],
        actor: str | None,
        create: bool = True,
    ) -> tuple[MutationOutcome, bool]:
        # A token's grants first (decision 15.K2): a read-only token writes nothing, a limited one
        # names only its initiatives; the actor is the token's name.
        grants.check_write(operation)
        grants.check_args(args)
        self._maybe_purge()
        outcome, replayed = run_mutation(
            self.rt,
            operation=operation,
            initiative=args.get("initiative"),
            request_id=args.get("request_id"),
            args=args,
            actor=grants.actor(actor or self.rt.settings.actor),
            body=lambda ctx: body(ctx, args),
            create=create,
        )
        if self.rt.embedder is not None and not replayed and outcome.state in ("applied", "partial"):
            # After the commit, in its own short write: a slow model never holds the write lock.
            recall.embed_nodes(self.rt, [ref.id for ref in (*outcome.created, *outcome.affected)])
        return outcome, replayed

    def _maybe_purge(self) -> None:
        """Drop replay keys older than the retention, at most once an hour per process."""
        now = self.rt.now()
        if self._purged_at is not None and now - self._purged_at < timedelta(hours=1):
            return
        self._purged_at = now
        with self.rt.store.write() as session:
            session.purge_requests(fmt(now - timedelta(days=self.rt.settings.replay_days)))

    # --- mutations ------------------------------------------------------------------------------
    def note(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("note", args, capture.note, actor)

    def claim(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("claim", args, capture.claim, actor)

    def revise(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("revise", args, revise.revise, actor)

    def replace(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("replace", args, revise.replace, actor)

    def link(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("link", args, graph.link, actor)

    def verdict(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("verdict", args, lifecycle.verdict, actor)

    def evolve(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("evolve", args, evolve.evolve, actor)

    def review(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("review", args, lifecycle.review, actor)

    def slot(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("slot", args, lifecycle.slot, actor)

    def layer(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("layer", args, lifecycle.layer, actor)

    def forget(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("forget", args, lifecycle.forget, actor)

    def task(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("task", args, tasks.task, actor)

    def task_update(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        return self._mutate("task_update", args, tasks.task_update, actor, create=False)

    def initiative(self, args: dict[str, Any], actor: str | None = None) -> tuple[MutationOutcome, bool]:
        create = args.get("action") in ("attach", "set_board")
        return self._mutate("initiative", args, initiatives.manage, actor, create=create)

    def hygiene(self, initiative: str) -> list[Any]:
        """Force one hygiene pass now (the CLI's `kaeru hygiene`; tests drive fixed points with it)."""
        return context.run_hygiene(self.rt, initiative)

    # --- reads ----------------------------------------------------------------------------------
    def search(self, args: dict[str, Any]) -> ReadOutcome:
        grants.check_args(args)
        return search.search(self.rt, args)

    def read(self, args: dict[str, Any]) -> ReadOutcome:
        grants.check_args(args)
        return read.read(self.rt, args)

    def trail(self, args: dict[str, Any]) -> TrailOutcome:
        grants.check_args(args)
        return history.trail(self.rt, args)

    def current_state(self, args: dict[str, Any]) -> StateOutcome:
        grants.check_args(args)
        return history.current_state(self.rt, args)

    def initiatives(self, args: dict[str, Any]) -> initiatives.InitiativesOutcome:
        grants.check_args(args)
        return initiatives.list_initiatives(self.rt, args)

    def context(self, args: dict[str, Any], actor: str | None = None) -> context.ContextOutcome:
        grants.check_args(args)
        return context.context(self.rt, args, grants.actor(actor or self.rt.settings.actor))

    def timeline(self, args: dict[str, Any]) -> tuple[ReadOutcome, str | None]:
        grants.check_args(args)
        return timeline.timeline(self.rt, args)

    def reflect(self, args: dict[str, Any]) -> reflect.ReflectOutcome:
        grants.check_args(args)
        return reflect.reflect(self.rt, args)

    def recall(self, args: dict[str, Any], *, disabled: frozenset[str] = frozenset()) -> recall.RecallOutcome:
        """Task-aware retrieval; `disabled` switches channels off (for ablation studies)."""
        grants.check_args(args)
        return recall.recall(self.rt, args, disabled)

    def recall_channels(self) -> tuple[str, ...]:
        return recall.channel_names()

    def reindex(self, progress: Callable[[int, int], None] | None = None, batch: int = 256) -> int:
        """Compute missing or stale vectors for the semantic channel; returns how many were written."""
        return recall.reindex(self.rt, progress, batch)
