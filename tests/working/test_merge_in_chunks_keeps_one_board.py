"""A merge large enough to go in chunks (decision 15.P5), of an initiative with a board of its own
into one that has its own: the merged initiative's board is forgotten, not moved, whichever chunk it
falls in — the target keeps one board, its own columns, and every task (decision 314). Both
backends; the chunk size made small, as the other chunked tests do."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.service import initiatives
from tests.working.conftest import Call

CHUNK = 3


def _of_type(call: Call, initiative: str, node_type: str) -> list[dict[str, Any]]:
    found = call("search", initiatives=[initiative], filters={"types": [node_type]}, limit=50)
    assert found["state"] == "ok", found
    return list(found["data"]["hits"])


def test_a_chunked_merge_forgets_the_merged_initiatives_board(call: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(initiatives, "CHUNK", CHUNK)
    columns = [{"key": "todo", "label": "To do"}, {"key": "done", "label": "Done"}]
    assert call("initiative", initiative="old", action="set_board", columns=columns)["state"] == "applied"
    moving = [call("task", initiative="old", text=f"old chore {i}")["data"]["primary"]["id"] for i in range(2 * CHUNK)]
    kept = [{"key": "open", "label": "Open"}, {"key": "doing", "label": "Doing"}, {"key": "closed", "label": "Closed"}]
    assert call("initiative", initiative="new", action="set_board", columns=kept)["state"] == "applied"
    staying = call("task", initiative="new", text="new chore")["data"]["primary"]["id"]

    merged = call("initiative", initiative="old", action="merge", to="new")
    assert merged["state"] == "applied", merged
    boards = _of_type(call, "new", "board")
    assert len(boards) == 1, [b["name"] for b in boards]
    tasks = {t["id"]: t["status"] for t in _of_type(call, "new", "task")}
    assert set(tasks) == {*moving, staying}
    assert set(tasks.values()) <= {c["key"] for c in kept}, tasks
