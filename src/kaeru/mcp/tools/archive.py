"""The `archive` tool: export to markdown or amg under the export root, import an amg archive."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kaeru.api import envelope as env
from kaeru.mcp.adapter import ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from kaeru.service import Service
    from kaeru.service.outcomes import MutationOutcome
    from kaeru.service.requests import ArchiveRequest

ARCHIVE = """Export the vault to files (`amg`: lossless JSON Lines, `.gz` compresses; `markdown`: an Obsidian folder) or `import` an amg archive (records already there are skipped; secrets are refused as on a write; stopped part way by the vault, e.g. a full disk, it answers `partial` and the same import again completes it). Paths are under the export root (`KAERU_EXPORT_ROOT`). `request_id` replays the first answer (a `partial` one excepted), doing nothing again.
Changes: files on export; the archive's revisions on import. Use `search`/`context` to read memory. Returns the artifacts or the import counts."""


def _archive(service: Service, request: ArchiveRequest) -> dict[str, Any]:
    from kaeru.export import archive  # at the first `archive` call (decision 16.S1)
    from kaeru.service import grants
    from kaeru.service.archive_replay import replayed_or_run

    store, settings = service.store, service.rt.settings
    grants.check_whole_vault("archive")

    def run() -> MutationOutcome:
        if request.action == "export":
            return archive.export(store, settings, request)
        return archive.import_(store, settings, request)

    outcome, replayed = replayed_or_run(service.rt, request.request_id, request.wire(), run)
    return env.mutation_envelope("archive", outcome, replayed=replayed, request_id=request.request_id)


def register(registry: ToolRegistry) -> None:
    registry.add(
        ToolSpec("archive", "Export or import an archive", ARCHIVE, env.MUTATION_KIND, _archive, idempotent=True)
    )
