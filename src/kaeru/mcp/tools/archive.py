"""The `archive` tool: export to markdown or amg under the export root, import an amg archive."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kaeru.api import envelope as env
from kaeru.mcp.adapter import ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from kaeru.service import Service
    from kaeru.service.requests import ArchiveRequest

ARCHIVE = """Export the vault to files (`amg`: lossless JSON Lines, `.gz` compresses; `markdown`: an Obsidian folder) or `import` an amg archive (records already there are skipped; secrets are refused as on a write; stopped part way by the vault, e.g. a full disk, it answers `partial` and the same import again completes it). Paths are under the export root (`KAERU_EXPORT_ROOT`).
Changes: files on export; the archive's revisions on import. Use `search`/`context` to read memory. Returns the artifacts or the import counts."""


def _archive(service: Service, request: ArchiveRequest) -> dict[str, Any]:
    from kaeru.export import archive  # at the first `archive` call (decision 16.S1)
    from kaeru.service import grants

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
