"""A version 1 archive (from before initiatives kept their ends), gzipped as `kaeru export - | gzip`
leaves it, imports — it is read whole, unlike a version 2 one — and under KAERU_SECRET_POLICY=redact
a secret in it is redacted in the vault and said line by line, as a version 2 archive's is. Both
backends, through the `archive` tool."""

from __future__ import annotations

import gzip
from pathlib import Path

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec

OLD = Path(__file__).resolve().parents[1] / "data" / "old_vault" / "sqlite.amg"
#: The archive's node whose two revisions (in `zeta`, then moved to `alpha`) get the secret.
KEEPER = "019de2c4-5190-7854-b490-8846e4a15e3e"
#: A correctly shaped fake GitHub token, which the guard finds (rule github_pat).
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_a_gzipped_version_1_archive_imports_with_its_secret_redacted_and_said(
    vault: VaultSpec, tmp_path: Path
) -> None:
    root = tmp_path / "exports"
    root.mkdir()
    text = OLD.read_text()
    assert '"version":1' in text.split("\n", 1)[0]
    (root / "old.amg.gz").write_bytes(
        gzip.compress(text.replace("the lighthouse keeper writes letters", f"the keeper's token is {SECRET}").encode())
    )
    settings = vault.settings(export_root=root, secret_policy="redact")
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        answer = run("archive", {"action": "import", "path": "old.amg.gz"})
        assert answer["state"] == "applied", answer
        counts = {c["field"]: c["after"] for c in answer["data"]["changes"]}
        assert counts["imported.node_revisions"] == 12
        said = [(i["code"], i["field"], i["message"]) for i in answer["issues"]]
        assert said and all(code == "secret_detected" and field == "body" for code, field, _ in said), said
        assert all("secret-looking span(s) redacted in body" in message for _, _, message in said)
        read = run("read", {"initiative": "alpha", "node": {"id": KEEPER}})["data"]["hits"][0]
        assert "the keeper's token is" in read["body"] and SECRET not in read["body"], read["body"]
        history = run("trail", {"initiative": "alpha", "node": {"id": KEEPER}, "kind": "history"})
        assert history["state"] == "ok" and SECRET not in str(history), "no revision keeps it"
    finally:
        store.close()
