"""Tool families; each module exposes `register(registry)` and registers nothing at import time.

`register_tools` adds them all to a registry. It lives here, not beside the server, so that a
registry can be built without the MCP SDK (`kaeru call`, `kaeru tools`: decision 200).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kaeru.mcp.adapter import ToolRegistry


def register_tools(registry: ToolRegistry) -> None:
    """Every tool family, in the order `tools/list` lists them."""
    from kaeru.mcp.tools import admin, archive, capture, evolve, history, read, revise, working

    for family in (working, read, history, capture, revise, evolve, admin, archive):
        family.register(registry)
