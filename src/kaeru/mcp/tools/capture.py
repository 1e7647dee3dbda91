"""Capture tools: `note` (one node by epistemic status) and `claim` (a hypothesis with evidence)."""

from __future__ import annotations

from kaeru.api.envelope import MUTATION_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, mutation

NOTE = """Remember one thing, filed by how you know it.

What it does: creates one node in `initiative` (created with a `new_initiative` warning and \
did-you-mean suggestions if it does not exist yet). `kind` says its epistemic status: observation \
(default; something seen), decision (what was chosen and why), jot (a quick aside), reference \
(an outside source; put its verbatim text in `source`, which becomes immutable), rule (a standing \
constraint — `context` always delivers active rules; scope it with `applicability`), idea, draft, \
scratch, entity, concept, checklist, roadmap. Without `name` one is made from the first words plus \
a unique suffix. `link_to` + `edge_type` + `weight` link the new node in the same transaction; \
`options.slot` makes it the holder of a role such as `handoff` (the previous holder is superseded \
and cooled); `reminder` resurfaces it later. Text that looks like a secret is rejected \
(`secret_detected`) unless the server's policy redacts it.
Changes: adds one node (and its link, slot change and audit record) atomically. With `request_id` \
a retry returns the first call's result (`replayed: true`) instead of writing twice.
Use `claim` instead for something uncertain that evidence should settle, and `revise` to change \
an existing node.
Returns MutationData: `primary` {id, revision} of the new node, `created`, `slots`, and warnings \
in `issues`."""

CLAIM = """Record a hypothesis — open, or already settled with its evidence — in one atomic call.

What it does: creates a `hypothesis` node with `initial_status` (open, supported, refuted, \
inconclusive). `about` links it to the node it is about (`refers_to`). `evidence` is either \
{node}: an existing node, or {method}: how it was/will be tested, which creates an `experiment` \
node. The evidence edge follows the status: `verifies` (supported), `falsifies` (refuted — the \
hypothesis reads as `refuted` everywhere), `targets` (open or inconclusive). `options.slot` / \
`options.layer` / `options.expected_slot_revision` work as in `note`.
Changes: adds the hypothesis, optionally an experiment, their edges and a slot change, all or \
nothing. With `request_id` a retry is answered from the first result (`replayed: true`).
Use `note` for things you know rather than suspect; close an existing hypothesis later with \
`verdict`.
Returns MutationData: `primary` (the hypothesis), `created` (hypothesis, experiment), `evidence` \
[{id, relation}], `slots`."""


def register(registry: ToolRegistry) -> None:
    registry.add(ToolSpec("note", "Capture a note", NOTE, MUTATION_KIND, mutation("note"), idempotent=True))
    registry.add(ToolSpec("claim", "Record a hypothesis", CLAIM, MUTATION_KIND, mutation("claim"), idempotent=True))
