"""The web viewer (issue 19): what a person sees of the vault in a browser, under `/ui`.

Served by `kaeru serve --http` beside `/mcp`, and by `kaeru ui` on 127.0.0.1. Pages are rendered on
the server (HTML, the graph as inline SVG, one stylesheet shipped in the package: no script, no CDN;
decision 19.W1). Every read and every edit is a tool call through the same handlers the MCP tools
use (`Backend.call`: the registry's `envelope`), so the grants, the audit and the mutation path are
the tools' own; this package imports neither the storage nor the MCP layer (tests/test_architecture.py).
"""

from kaeru.web.app import Backend, ui_app

__all__ = ["Backend", "ui_app"]
