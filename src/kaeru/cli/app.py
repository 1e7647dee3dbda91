"""`kaeru` — serve the MCP server, or inspect and edit a vault from the terminal.

The group and its shared helpers live in `cli/common.py`; the commands in `reads.py`, `writes.py`,
`call.py` (`call`: any tool; `tools`), `admin.py`, `bench.py`, `doctor.py` and `tokens.py`, which
register themselves on the group when imported here. This is the CLI's composition root: the only
place (with `mcp/server.py`) that opens a store.

The command modules are imported by `main`, not when this module is: the console script imports
this module before any of kaeru's code runs, and a Ctrl-C during those imports (a few tenths of a
second) printed a Python traceback. `main` ends it as a Ctrl-C at any later moment ends a command:
one line, exit 130 (`cli/interrupt.py`); so this module imports nothing at its top but `importlib`.
`cli` and the command modules are still attributes of this module, imported on first use.
"""

from __future__ import annotations

import importlib

#: The modules whose commands make up `kaeru`.
COMMANDS = ("admin", "bench", "call", "doctor", "importers", "reads", "setup", "tokens", "ui", "writes")

__all__ = ["COMMANDS", "main"]  # and, through `__getattr__`, `cli` and each command module


def main() -> None:
    try:
        _register()
        from kaeru.cli.common import cli
        from kaeru.storage.factory import open_store

        # One completion variable however kaeru is started (`kaeru`, `python -m kaeru`): click would
        # derive it from the program's name (decision 183).
        cli(obj={"open_store": open_store}, complete_var="_KAERU_COMPLETE")
    except KeyboardInterrupt:  # before the group's own handler exists, or after it ended
        from kaeru.cli.interrupt import interrupted

        interrupted()


def _register() -> None:
    """Every command registered on the group (each module adds its own when imported)."""
    for name in COMMANDS:
        importlib.import_module(f"kaeru.cli.{name}")


def __getattr__(name: str) -> object:
    """`cli` (with its commands) and the command modules, imported when first asked for."""
    if name == "cli":
        _register()
        from kaeru.cli.common import cli

        return cli
    if name in COMMANDS:
        return importlib.import_module(f"kaeru.cli.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    main()
