"""Revision tools: `revise` (patch a node in place) and `replace` (new immutable source bytes)."""

from __future__ import annotations

from kaeru.api.envelope import MUTATION_KIND
from kaeru.mcp.adapter import ToolRegistry, ToolSpec, mutation

REVISE = """Correct or update a node in place: same id, same tier, a new revision.

What it does: applies `patch` — any of name, body, description, constraint_state (rules: active \
or released), applicability (rules: {task, through}; null clears), reminder ({after, window_days}; \
null clears). Omitted fields stay as they are. The old values stay in history: `read` with `at` \
still shows them. A patch equal to the current values changes nothing (`state: unchanged`). The \
verbatim source of a reference cannot be patched (`immutable_source`; use `replace`). Pass \
`expected_revision` (from a read) to make it a compare-and-set: if someone changed the node since, \
the call is rejected with `revision_conflict` (retryable after a re-read) and nothing is written.
Changes: one new revision of one node, and an audit record.
Use it to fix or refine the same fact; when a fact is replaced by a different one, record the new \
node and let it supersede the old (`evolve supersede`) so both stay true to history.
Returns MutationData: `primary` {id, new revision}, `changes` [{field, before, after}]."""

REPLACE = """Record new verbatim source bytes for a reference note, as a new revision.

What it does: swaps the immutable `source` of a reference (the body of a sourced reference) for \
new text; the sha256 of the new bytes is stored in properties.source, the old bytes stay in \
history (`read … at=` before the swap returns them). Identical bytes change nothing. \
`expected_revision` makes it a compare-and-set.
Changes: one new revision of one reference node, and an audit record.
Use it only for source text; use `revise` for the reference's name or description.
Returns MutationData: `primary` {id, new revision}, `changes` [{field: source.sha256, before, \
after}]."""


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
