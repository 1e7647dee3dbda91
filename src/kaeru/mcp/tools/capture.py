"""Capture tools: `note` (one node by epistemic status) and `claim` (a hypothesis with evidence)."""

from __future__ import annotations

from kaeru.api.envelope import MUTATION_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, mutation

NOTE = """Remember one thing, filed by how you know it (`kind`): observation (default), decision (chosen + why), rule (a standing constraint `context` always delivers), reference (verbatim `source`, immutable), jot, idea, draft, scratch, entity, concept, checklist, roadmap. In the same transaction: a `link_to` edge (`supersedes` onto a node superseded before also supersedes its current version), a slot (`options.slot`), a `reminder`. When it replaces what an older note said, `link_to` that note with `edge_type` `supersedes`, or both read as current. Secrets are rejected.
Changes: one node (with its link and slot), atomically; `request_id` replays. Use `claim` for something uncertain, `revise` to change a node. Returns the new node's id and revision."""

CLAIM = """Record a hypothesis, open or already settled, in one call: `initial_status`, `about` (the node it concerns), `evidence` {node} or {method} (creates an experiment). A refuted hypothesis reads as refuted everywhere.
Changes: the hypothesis, its experiment and edges, all or nothing; `request_id` replays. Use `note` for what you know, `verdict` to settle an existing claim. Returns the hypothesis and evidence ids."""


def register(registry: ToolRegistry) -> None:
    registry.add(ToolSpec("note", "Capture a note", NOTE, MUTATION_KIND, mutation("note"), idempotent=True))
    registry.add(ToolSpec("claim", "Record a hypothesis", CLAIM, MUTATION_KIND, mutation("claim"), idempotent=True))
