"""The `archive` tool: export to markdown or amg under the export root, import an amg archive."""

from __future__ import annotations

from typing import Any

from kaeru.api import envelope as env
from kaeru.export import archive
from kaeru.mcp.adapter import ToolRegistry, ToolSpec
from kaeru.service import Service, grants
from kaeru.service.requests import ArchiveRequest

ARCHIVE = """Export the vault to files, or import an archive — for backup, hand-over and moving between machines.

What it does: `export` with format `amg` writes the lossless archive (JSON Lines: every node \\
revision, edge revision, membership, slot state and audit record; exporting, importing into an \\
empty vault and exporting again gives byte-identical files; a `.gz` path compresses it); with \\
format `markdown` it writes an Obsidian-friendly folder (README, INDEX, LOG, one page per node with \\
front matter and typed, weighted wikilinks). `initiatives` limits the export. `import` reads an amg \\
archive into this vault in one transaction; records already present (same id and revision) are \\
skipped, so importing twice changes nothing. An import passes the same limits and secret policy \
as a tool write: under `reject` an archive holding a refused record imports nothing and the issue \
names every refused line and field; under `redact` the texts are redacted and reported. Paths are relative to the server's export root \\
(`KAERU_EXPORT_ROOT`, default `<vault>/exports`); anything outside it is `path_not_allowed`.
Changes: export writes files only; import adds the archive's revisions to the vault.
Use `search`/`context` to read memory; this is for files.
Returns MutationData: `artifacts` [{path, format, bytes, sha256, initiatives, omissions, nodes, \\
edges}] (export) or `changes` [{field: imported.<kind>, before, after}] (import)."""


def _archive(service: Service, request: ArchiveRequest) -> dict[str, Any]:
    store, settings = service.store, service.rt.settings
    grants.check_whole_vault("archive")
    if request.action == "export":
        outcome = archive.export(store, settings, request)
    else:
        outcome = archive.import_(store, settings, request)
    return env.mutation_envelope("archive", outcome, replayed=False, request_id=None)


def register(registry: ToolRegistry) -> None:
    registry.add(
        ToolSpec("archive", "Export or import an archive", ARCHIVE, env.MUTATION_KIND, _archive, idempotent=True)
    )
