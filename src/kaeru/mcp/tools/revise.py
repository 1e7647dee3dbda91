"""Revision tools: `revise` (patch a node in place) and `replace` (new immutable source bytes)."""

from __future__ import annotations

from kaeru.api.envelope import MUTATION_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, mutation

REVISE = """Correct or update a node in place (same id, new revision): `patch` name, body, description, or a rule's constraint_state/applicability, or a reminder. Old values stay in history. Pass `expected_revision` from your last read: `revision_conflict` if the node changed since (re-read, retry).
Changes: one revision. Use `evolve supersede` when a fact is replaced by another, `replace` for a reference's source. Returns the new revision and what changed."""

REPLACE = """Record new verbatim `source` text for a reference note as a new revision; the old bytes stay in history.
Changes: one revision (`expected_revision` makes it a compare-and-set). Use `revise` for the name or description. Returns the new revision and the source hash change."""


def register(registry: ToolRegistry) -> None:
    registry.add(ToolSpec("revise", "Revise a node", REVISE, MUTATION_KIND, mutation("revise"), idempotent=True))
    registry.add(
        ToolSpec(
            "replace",
            "Replace a reference's source",
            REPLACE,
            MUTATION_KIND,
            mutation("replace"),
            idempotent=True,
        )
    )
