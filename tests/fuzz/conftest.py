"""An in-process MCP server over a fresh vault, spoken to through the SDK client (legacy handshake):
the same fixtures as the contract tests."""

from tests.contract.conftest import anyio_backend, client, kaeru

__all__ = ["anyio_backend", "client", "kaeru"]
