"""Functions run in child processes by the race tests (importable, so the fork server the tests
start their racers from can preload them)."""

from __future__ import annotations

from typing import Any

from kaeru.config import Settings
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store


def call_after_barrier(env: dict[str, str], barrier: Any, tool: str, args: dict[str, Any], out: Any) -> None:
    """Open the vault, wait for every racer, make one tool call, report the envelope."""
    settings = Settings.from_env(env)
    store = open_store(settings)
    try:
        registry = build_server(Service(store, settings)).registry
        barrier.wait(timeout=30)
        out.put(registry.run(tool, args))
    finally:
        store.close()
