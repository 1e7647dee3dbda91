"""Lifecycle tools: link, verdict, evolve, review, slot, layer, forget."""

from __future__ import annotations

from kaeru.api.envelope import MUTATION_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, mutation

LINK = """Connect two nodes with a typed, weighted edge — or save the strongest path between them.

What it does: `add` creates the edge from → to (re-adding with another weight reweights it), \
`remove` retracts it (history keeps it), `reweight` changes its weight, `chain` finds the \
strongest directed path from → to over live edges inside `initiative` (cost 1 − weight per hop, \
at most 12 hops) and saves it as a `chain` node (an identical path reuses the existing chain). \
Edge types: refers_to (see also), derived_from (provenance, derived → source), supersedes \
(new → old: a verdict, the old node becomes superseded), contradicts (a doubt: target under \
review), verifies / falsifies (evidence → hypothesis; falsifies is a verdict), targets, \
consolidated_to, part_of, causal, temporal, blocks. `weight` is required for add/reweight: how \
load-bearing the edge is (0.9–1 cause/source/supersession, 0.6–0.8 supporting, 0.3–0.5 associative).
Changes: one edge revision (or one chain node), plus an audit record; `request_id` replays.
Use `evolve supersede` instead when the replacing node does not exist yet; `review flag` to doubt \
a node without deciding.
Returns MutationData: `primary` (the source node or the chain), `changes` [{field: edge.<type>, \
before, after}], `created` (the chain)."""

VERDICT = """Close an existing hypothesis: supported, refuted or inconclusive, with its evidence.

What it does: sets the hypothesis' status (a new revision; history keeps the old status) and, \
with `evidence` {node} or {method} (creates an `experiment`), writes the evidence edge: verifies \
(supported), falsifies (refuted) or targets (inconclusive). A refuted hypothesis reads as \
`refuted` in every read and search.
Changes: the hypothesis (new revision), optionally an experiment node and an edge; audit record.
Use `claim` to record a new hypothesis (optionally already decided); use this one for a \
hypothesis that already exists.
Returns MutationData: `primary` (the hypothesis), `changes` [{field: status}], `evidence` \
[{id, relation}], `created` (the experiment)."""

EVOLVE = """Move knowledge to a new identity: settle, unsettle, supersede or synthesise.

What it does: `settle` makes an archival successor of an operational node (type derived: \
episode/task/experiment/hypothesis → outcome, draft/scratch → idea), carries name, body, tags, \
layer, initiatives, slots and `derived_from` provenance, links old → new with consolidated_to \
and retracts the old node. `unsettle` is the reverse (archival → operational). `supersede` \
creates a new node (new_body/new_name; type and layer carried) that `supersedes` the old one: \
the old stays readable but is flagged `superseded`, and `search` (current: preferred) shows the \
new one instead. `synthesise` creates a new node (default type summary) `derived_from` every \
node in `sources`.
Changes: creates one node and its edges; settle/unsettle also retract the source — all in one \
transaction. `request_id` replays.
Use `revise` to correct the same node in place; use this when the fact itself was replaced, \
when work is settled into knowledge, or to combine several notes.
Returns MutationData: `primary` (the new node), `created`, `affected` (the source)."""

REVIEW = """Doubt a node, or resolve the doubts about it.

What it does: `flag` writes a review note (your `reason`) that `contradicts` the target: the \
target is *under review* (a doubt, not a verdict — it stays current). `close` retracts every \
open `contradicts` edge into the target; with `resolution` a resolution note is written that \
supersedes the review notes.
Changes: a review or resolution note and edges; audit record. `request_id` replays.
Use `evolve supersede` or `link … supersedes` when you know the replacement; `verdict` for \
hypotheses.
Returns MutationData: `primary` (the review or resolution note), `affected` (the target)."""

SLOT = """Give a role (slot) in an initiative to a node, or release it.

What it does: a slot such as `handoff`, `entrypoint` or `prod-state` is held by exactly one node \
at a time. Taking it from another holder writes `supersedes` new → previous and moves the \
previous holder to the cold layer (it stays a true record). Omit `node` to release the slot. \
`expected_slot_revision` (the slot revision you last saw; "0" for a slot never taken) makes it a \
compare-and-set: `slot_conflict` (retryable) if someone moved it since.
Changes: the slot (new revision), possibly the previous holder's layer and a supersedes edge.
Use `note`/`claim` `options.slot` to capture and take a slot in one call; `current_state` to read \
who holds it.
Returns MutationData: `slots` [{slot, before, after, revision}], `primary` (the holder)."""

LAYER = """Set how eagerly nodes come back into context: their layer and/or pin.

What it does: for every node in `nodes`, sets `layer` (core: always re-loaded; hot; warm — the \
default; cold and frozen: only on request) and/or `pin` (pinned nodes are never moved by \
automatic hygiene). Each change is a new revision, so past reads show the old layer.
Changes: the listed nodes' layer/pin; audit record. `request_id` replays.
Use `forget` to remove a node, `evolve settle` to archive knowledge.
Returns MutationData: `affected` (the moved nodes), `changes` [{field: <id>.layer, before, after}]."""

FORGET = """Retract a node and its edges now — it leaves every ordinary read, but not history.

What it does: marks the node retracted (a new revision) with your `reason` in the audit record, \
retracts every live edge touching it and releases any slot it holds. `read` with `at` before the \
retraction, and `trail history`, still show it (name it by id).
Changes: the node, its edges and slots; audit record. `request_id` replays.
Use `evolve supersede` when the node is replaced rather than wrong; `layer cold` to keep it out \
of context without retracting it.
Returns MutationData: `primary` (the node's retracted revision), `changes`, `slots`."""


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
