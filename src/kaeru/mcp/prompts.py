"""MCP prompts: the capture habits as slash commands a person can pick in their client.

* `resume` (initiative) — the initiative's re-entry bundle (the `context` tool's answer, as its text
  block reads, and its coverage) as one message, with how to carry on;
* `decide` (initiative, decision?, why?) — record a decision with its reason, linked to what it rests on;
* `hypothesis` (initiative, statement?) — record something uncertain as a claim, and close it later
  with evidence.

`initiative` completes from the vault's names, most active first (decision 19.I5). `resume` refuses
an initiative that does not exist, with did-you-mean (the `context` tool's refusal). `decide` and
`hypothesis` take a new one — a project's first decision is recorded into a new initiative, and a
refusal left no way to do it from the prompt — but say it will be new and name the close existing
names, for the model to ask before it writes; they refuse what the write itself would (a name no
initiative may take, a former name that now leads elsewhere, one outside the caller's grants).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from kaeru.mcp.resources import LISTED, initiative_names, refused, vault_read

if TYPE_CHECKING:
    from kaeru.mcp.adapter import ToolRegistry

_INITIATIVE = types.PromptArgument(
    name="initiative", description="The initiative (project scope), as spelled in the vault.", required=True
)

PROMPTS = [
    types.Prompt(
        name="resume",
        title="Resume an initiative",
        description="Load the initiative's re-entry bundle (rules, open work, recent memory) and carry on.",
        arguments=[_INITIATIVE],
    ),
    types.Prompt(
        name="decide",
        title="Record a decision",
        description="Capture a decision with its reason, linked to what it rests on.",
        arguments=[
            _INITIATIVE,
            types.PromptArgument(name="decision", description="What was decided.", required=False),
            types.PromptArgument(name="why", description="Why (the reason, the alternatives left).", required=False),
        ],
    ),
    types.Prompt(
        name="hypothesis",
        title="Record a hypothesis",
        description="Capture something uncertain as a claim to test, and how to close it.",
        arguments=[
            _INITIATIVE,
            types.PromptArgument(name="statement", description="What might be true.", required=False),
        ],
    ),
]


#: The tools each prompt runs or tells the model to call: a server that does not offer them all
#: (`KAERU_TOOLS`, decision 439) does not offer the prompt either.
NEEDS = {"resume": ("context",), "decide": ("search", "note", "link"), "hypothesis": ("claim", "verdict")}


def offered(registry: ToolRegistry) -> list[types.Prompt]:
    """The prompts whose tools `registry` offers."""
    return [p for p in PROMPTS if registry.served is None or registry.served.issuperset(NEEDS[p.name])]


def list_prompts(registry: ToolRegistry) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=offered(registry))


def _user(text: str) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))


async def get_prompt(registry: ToolRegistry, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    args = arguments or {}
    names = [p.name for p in offered(registry)]
    if name not in names:
        raise MCPError(INVALID_PARAMS, f"unknown prompt {name!r}; prompts: {', '.join(names) or 'none'}")
    initiative = (args.get("initiative") or "").strip()
    if not initiative:
        raise MCPError(INVALID_PARAMS, f"prompt {name!r} needs the argument 'initiative'")
    quoted = json.dumps(initiative, ensure_ascii=False)
    if name == "resume":
        envelope = await registry.envelope("context", {"initiative": initiative})
        if envelope["state"] == "rejected":
            raise refused(envelope, INVALID_PARAMS)
        # The bundle as the `context` tool's own text (compact, or JSON under KAERU_TEXT=json), and its
        # coverage: indented JSON of the data alone was several times the size and said nothing of
        # what was left out.
        output = registry.output
        bundle = output.text_of(envelope)
        coverage = envelope.get("coverage") or {}
        text = (
            f"We are resuming initiative {quoted}. Below is kaeru's re-entry bundle for it: the rules in force "
            "come first and bind you; then open tasks, open hypotheses and recent memory. "
            f"{_coverage_said(coverage)} Read it, tell me in a few lines where things stand and what you would "
            f"do next, and keep naming {quoted} on every kaeru call (initiative={quoted}; initiatives=[{quoted}] "
            f"for search, recall and timeline).\n\n```{output.text if output.text == 'json' else 'text'}\n{bundle}\n```\n"
            f"coverage: {json.dumps(coverage, ensure_ascii=False, separators=(',', ':'))}"
        )
        return types.GetPromptResult(description=f"Re-entry context of {initiative}", messages=[_user(text)])
    new = await vault_read(registry, "prompts/get", _new_scope, initiative)
    if name == "decide":
        decision = args.get("decision") or "the decision we just reached"
        why = f" Reason given: {_sentence(args['why'])}" if args.get("why") else ""
        text = (
            f"Record this decision in kaeru: {_sentence(decision)}{why}\n{new}"
            f"1. `search` initiatives=[{quoted}] for earlier decisions on the same question.\n"
            f"2. `note` with kind=decision, initiative={quoted}: the text states what was chosen AND why "
            "(the alternatives left and the reason). Give it a short name and a `request_id`.\n"
            "3. Link it to what it rests on: `link_to` (in the same `note`) or `link` with edge_type "
            "derived_from or refers_to and a weight (0.9–1 load-bearing, 0.6–0.8 supporting).\n"
            "4. If it replaces an earlier decision, `link` the new one to the old with edge_type supersedes.\n"
            "Then tell me the node's name."
        )
        return types.GetPromptResult(description="Record a decision", messages=[_user(text)])
    statement = args.get("statement") or "the hypothesis we are discussing"
    text = (
        f"Record this as a hypothesis in kaeru: {_sentence(statement)}\n{new}"
        f"1. `claim` with initiative={quoted}, the statement as text, initial_status open (or supported / "
        "refuted at once when the evidence is already in hand: pass `evidence` {node} or {method}), and "
        "`about` the node it concerns, if any.\n"
        "2. Say how it could be tested. When the evidence arrives, close it with `verdict` (supported, "
        "refuted or inconclusive) — a refuted claim then reads as refuted everywhere.\n"
        "Then tell me the claim's name."
    )
    return types.GetPromptResult(description="Record a hypothesis", messages=[_user(text)])


def _new_scope(registry: ToolRegistry, initiative: str) -> str:
    """What a capture prompt says of `initiative` before its steps: nothing when it exists; else
    that the first write creates it, and the existing names it may be a misspelling of, for the
    model to ask about before writing (run by `vault_read`).

    Raises:
        KaeruError: what the write would refuse — text no vault holds, a name no new initiative may
            take, a former name that now leads to another initiative, one outside the grants.
    """
    from kaeru.domain.similar import suggest
    from kaeru.domain.surrogates import refusal_of_unstorable
    from kaeru.service import grants
    from kaeru.service.checks import normalise_initiative, refuse_invisible
    from kaeru.service.former_names import FormerNames, refuse_former_name

    if (refusal := refusal_of_unstorable({"initiative": initiative})) is not None:
        raise refusal
    name = normalise_initiative(initiative)
    grants.check_name(name, "initiative")
    with registry.service.store.read() as session:
        if session.initiative_by_name(name) is not None:
            return ""
        refuse_invisible(name, "initiative")
        known = FormerNames(session)
        refuse_former_name(session, name, known)
        close = suggest(name, known.visible_names())
    quoted = json.dumps(name, ensure_ascii=False)
    if not close:
        return f"(There is no initiative {quoted} yet: the first write creates it.)\n"
    return (
        f"(There is no initiative {quoted} yet: the first write would create it. The vault has "
        f"{', '.join(json.dumps(c, ensure_ascii=False) for c in close)}: ask me which I meant before you write.)\n"
    )


def _coverage_said(coverage: dict[str, Any]) -> str:
    """What the bundle's `coverage` means for the model, in words: whether every rule in force is in
    it, and what was left out and how to get it."""
    omitted = coverage.get("omitted") or []
    reasons = {o.get("reason") for o in omitted}
    said = []
    if coverage.get("rules_complete", True):
        said.append("It holds every rule in force.")
    else:
        said.append(
            "It does NOT hold every rule in force (the budget cut some): call `context` with "
            'sections ["rules"] and a larger budget_chars before you act.'
        )
    if "task_scoped" in reasons:
        said.append(
            "Some rules apply only while working on a task (the notice names it): call `context` with that "
            "`task` before you work on it."
        )
    if reasons - {"task_scoped"}:
        said.append(
            "Some sections were cut: `omitted` says which (an `all …: search` line, where given, lists them all)."
        )
    return " ".join(said)


def _sentence(text: str) -> str:
    """`text` ended by one full stop ("We use uv." stays one sentence: it rendered "We use uv..")."""
    text = text.strip()
    return text if text.endswith((".", "!", "?", "…")) else f"{text}."


def complete(registry: ToolRegistry, ref: Any, argument: types.CompletionArgument) -> types.Completion | None:
    """Values for a prompt's argument (None when `ref` is not a prompt)."""
    if not isinstance(ref, types.PromptReference):
        return None
    if argument.name != "initiative" or ref.name not in {p.name for p in offered(registry)}:
        return types.Completion(values=[])
    values = initiative_names(registry, argument.value)
    return types.Completion(values=values[:LISTED], total=len(values), has_more=len(values) > LISTED)
