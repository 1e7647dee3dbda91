"""Revision tools: `revise` (patch a node in place) and `replace` (new immutable source bytes)."""

from __future__ import annotations

from kaeru.api.envelope import MUTATION_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, mutation

REVISE = """Correct or update a node in place (same id, new revision): `patch` its name, body, description, reminder, or a rule's constraint_state/applicability; old values stay in history. With `expected_revision` from your last read, a node changed since is refused (`revision_conflict`: re-read, retry).
Changes: one revision; a superseded node is revised too, but readers answer its successor (the answer says so). Use `evolve supersede` when another fact replaces it, `replace` for a reference's source. Returns the new revision and what changed."""

REPLACE = """New verbatim `source` text for a reference note, as a new revision; the old bytes stay in history.
Changes: one revision (`expected_revision` makes it compare-and-set). Use `revise` for the name or description. Returns the new revision and the source hash change."""


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
