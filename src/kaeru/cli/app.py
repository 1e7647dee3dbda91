"""`kaeru` — serve the MCP server, or inspect and edit a vault from the terminal.

The group and its shared helpers live in `cli/common.py`; the commands in `reads.py`, `writes.py`,
`call.py` (`call`: any tool; `tools`), `admin.py`, `bench.py`, `doctor.py` and `tokens.py`, which register themselves on the group when imported here. This
is the CLI's composition root: the only place (with `mcp/server.py`) that opens a store.
"""

from __future__ import annotations

from kaeru.cli import admin, bench, call, doctor, importers, reads, setup, tokens, ui, writes
from kaeru.cli.common import cli
from kaeru.storage.factory import open_store

__all__ = ["admin", "bench", "call", "cli", "doctor", "importers", "main", "reads", "setup", "tokens", "ui", "writes"]


def main() -> None:
    # One completion variable however kaeru is started (`kaeru`, `python -m kaeru`): click would
    # derive it from the program's name (decision 183).
    cli(obj={"open_store": open_store}, complete_var="_KAERU_COMPLETE")


if __name__ == "__main__":
    main()
