"""Lifecycle tools: link, verdict, evolve, review, slot, layer, forget."""

from __future__ import annotations

from kaeru.api.envelope import MUTATION_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, mutation

LINK = """Connect two nodes with a typed, weighted edge (`add`, `remove`, `reweight`), or save the strongest path from → to as a chain node (`chain`). supersedes and falsifies are verdicts: the target stops being current (a target superseded before keeps its current successors current beside the new one; the answer names them); contradicts puts it under review. `weight`: 0.9–1 load-bearing, 0.6–0.8 supporting, 0.3–0.5 associative.
Changes: one edge (or chain node); `request_id` replays. Use `evolve supersede` when the replacement does not exist yet. Returns the source node or chain and the edge change."""

VERDICT = """Settle an existing hypothesis: supported, refuted or inconclusive, with optional `evidence` {node} or {method}.
Changes: its status (history keeps the old) and that of the experiments under way on it (a `claim` {method}'s), an evidence edge, maybe an experiment node; a new status retracts the old verdict's evidence edges. Use `claim` for a new hypothesis. Returns the hypothesis and evidence ids."""

EVOLVE = """Move knowledge to a new identity: `settle` (operational → archival successor), `unsettle` (back), `supersede` (a new node replaces the old, still readable as superseded; when the old was superseded before, the new node supersedes its current version too, so one stays current), `synthesise` (a summary derived from `sources`).
Changes: one new node and its edges, atomically; `request_id` replays. Use `revise` to correct a node in place. Returns the new node and the source."""

REVIEW = """Doubt a node (`flag` with a `reason`: it stays current but under review) or resolve its doubts (`close`, optionally with a `resolution` note).
Changes: a review or resolution note and its edges. Use `verdict` for hypotheses, `evolve supersede` when you know the replacement. Returns the note and the target."""

SLOT = """Give a role (slot, e.g. handoff) to a node, or release it (omit `node`). One holder at a time: the previous one is superseded and cooled. `expected_slot_revision` makes it compare-and-set (`slot_conflict`).
Changes: the slot, maybe the previous holder. Use `options.slot` of `note`/`claim` to capture and take a slot at once. Returns the slot change."""

LAYER = """Set how eagerly `nodes` come back into context: `layer` (core always, hot, warm default, cold/frozen only on request) and/or `pin` (hygiene never moves pinned nodes).
Changes: a revision per node. Use `forget` to remove a node. Returns the moved nodes."""

FORGET = """Retract a node and its edges now, with a `reason`: it leaves every ordinary read but stays in history (`read` with `at`, `trail`).
Changes: the node, its edges and slots. Use `evolve supersede` when it was replaced rather than wrong, `layer cold` to keep it out of context. Returns the retracted revision."""


def register(registry: ToolRegistry) -> None:
    registry.add(ToolSpec("link", "Link nodes / save a chain", LINK, MUTATION_KIND, mutation("link"), idempotent=True))
    registry.add(
        ToolSpec("verdict", "Close a hypothesis", VERDICT, MUTATION_KIND, mutation("verdict"), idempotent=True)
    )
    registry.add(
        ToolSpec(
            "evolve", "Settle, supersede or synthesise", EVOLVE, MUTATION_KIND, mutation("evolve"), idempotent=True
        )
    )
    registry.add(
        ToolSpec("review", "Flag or close a review", REVIEW, MUTATION_KIND, mutation("review"), idempotent=True)
    )
    registry.add(ToolSpec("slot", "Take or release a role", SLOT, MUTATION_KIND, mutation("slot"), idempotent=True))
    registry.add(ToolSpec("layer", "Set layer or pin", LAYER, MUTATION_KIND, mutation("layer"), idempotent=True))
    registry.add(
        ToolSpec(
            "forget", "Forget a node", FORGET, MUTATION_KIND, mutation("forget"), destructive=True, idempotent=True
        )
    )
