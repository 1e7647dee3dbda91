"""Which tools a server offers: `KAERU_TOOLS` / `kaeru serve --tools` (decision 439).

Every tool's name and description sits in the model's context for the whole session, and some
clients cap how many tools all their servers may offer together. An agent that only resumes,
looks up and captures needs about half of them, so a person may serve fewer: a list of tool names
and presets (`core`, `all`), where `-NAME` takes a tool or a preset away again. The names are the
registry's (`kaeru.mcp.tools`, in its order), checked against it by a test, so a setting can be
read and refused without building or importing any tool.
"""

from __future__ import annotations

import re

from kaeru.domain.similar import suggest

#: Every tool, in the order `tools/list` lists them.
TOOL_NAMES = (
    "initiatives",
    "context",
    "recall",
    "timeline",
    "reflect",
    "search",
    "read",
    "trail",
    "current_state",
    "note",
    "claim",
    "revise",
    "replace",
    "link",
    "verdict",
    "evolve",
    "review",
    "slot",
    "layer",
    "forget",
    "task",
    "task_update",
    "initiative",
    "archive",
)

#: The day's work of an agent: re-entry, looking up, capturing, changing, hypotheses opened and
#: closed, links, tasks. It holds every tool the prompts run or name (`mcp.prompts.NEEDS`), so a
#: `core` server offers them all.
CORE = (
    "initiatives",
    "context",
    "recall",
    "search",
    "read",
    "note",
    "claim",
    "revise",
    "link",
    "verdict",
    "task",
    "task_update",
)

PRESETS = {"all": TOOL_NAMES, "core": CORE}


class ToolSetError(ValueError):
    """A tool list kaeru cannot read: an unknown name, or nothing left to serve."""


def served_tools(raw: str | None) -> tuple[str, ...]:
    """The tools `raw` names, in `TOOL_NAMES` order: all of them when `raw` is empty.

    `raw` is tool names and presets separated by commas or spaces, read left to right; `-NAME`
    removes what NAME adds, and a list that starts with a removal starts from all of them
    (`-archive` is every tool but `archive`).

    Raises:
        ToolSetError: an entry that is neither a tool nor a preset (with the nearest names), or a
            list that leaves no tool.
    """
    entries = [e for e in re.split(r"[\s,]+", (raw or "").strip()) if e]
    if not entries:
        return TOOL_NAMES
    chosen: set[str] = set(TOOL_NAMES) if entries[0].startswith("-") else set()
    for entry in entries:
        name = entry.removeprefix("-").strip().lower()
        names = PRESETS.get(name) or ((name,) if name in TOOL_NAMES else None)
        if names is None:
            near = suggest(name, [*PRESETS, *TOOL_NAMES])
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise ToolSetError(
                f"{entry!r} is not a tool or a preset{hint}; presets: {', '.join(PRESETS)}; "
                f"tools: {', '.join(TOOL_NAMES)}"
            )
        if entry.startswith("-"):
            chosen.difference_update(names)
        else:
            chosen.update(names)
    if not chosen:
        raise ToolSetError(f"{raw!r} leaves no tool to serve")
    return tuple(name for name in TOOL_NAMES if name in chosen)
