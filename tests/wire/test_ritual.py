"""The re-entry ritual over a real stdio server: initiatives → context → capture → context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.wire.support import call_ok, connect


def _section(envelope: dict[str, Any], name: str) -> list[str]:
    return [i["id"] for s in envelope["data"]["sections"] if s["name"] == name for i in s["items"]]


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_ritual_over_stdio(server_env: dict[str, str], tmp_path: Path) -> None:
    async with connect("stdio", server_env, tmp_path) as client:
        await call_ok(client, "note", {"initiative": "ritual", "text": "project started", "kind": "jot"})
        listed = await call_ok(client, "initiatives", {})
        assert [i["name"] for i in listed["data"]["initiatives"]] == ["ritual"]
        before = await call_ok(client, "context", {"initiative": "ritual"})
        assert before["data"]["sections"][0]["name"] == "rules"

        rule = await call_ok(
            client, "note", {"initiative": "ritual", "kind": "rule", "text": "send a request_id on every write"}
        )
        claim = await call_ok(client, "claim", {"initiative": "ritual", "text": "stdio servers can share one vault"})
        task = await call_ok(client, "task", {"initiative": "ritual", "text": "write the soak test", "due": "1d"})
        after = await call_ok(client, "context", {"initiative": "ritual"})
        assert _section(after, "rules") == [rule["data"]["primary"]["id"]]
        assert _section(after, "claims") == [claim["data"]["primary"]["id"]]
        assert _section(after, "tasks") == [task["data"]["primary"]["id"]]
        assert after["coverage"]["rules_complete"] is True
