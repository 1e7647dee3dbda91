"""`kaeru` — serve the MCP server, or inspect and edit a vault from the terminal.

The group and its shared helpers live in `cli/common.py`; the commands in `reads.py`, `writes.py`,
`admin.py` and `doctor.py`, which register themselves on the group when imported here.
"""

from __future__ import annotations

from kaeru.cli import admin, doctor, importers, reads, setup, writes
from kaeru.cli.common import cli

__all__ = ["admin", "cli", "doctor", "importers", "main", "reads", "setup", "writes"]


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()
