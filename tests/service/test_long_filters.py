"""`search` filters as long as a caller makes them (the schema bounds neither list): `statuses` was
bound one parameter a status on SQLite, past its 32,766 parameters; `tags` one clause a tag, past
the depth of 1,000 SQLite nests an expression to. Both answered `internal`; now a long list is one
parameter, and the nodes found are those that carry every tag asked, in either spelling. Both
backends."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service

P = "pond"
#: More tags than SQLite binds one clause a tag (`Dialect.listed`), all carried by one note.
TAGS = [f"topic:t{i}" for i in range(12)]

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


@pytest.fixture
def run(service: Service) -> Run:
    return build_server(service).registry.run


def _ids(answer: dict[str, Any]) -> set[str]:
    assert answer["state"] == "ok", answer["issues"]
    return {hit["id"] for hit in answer["data"]["hits"]}


def _made(run: Run, tool: str, **args: Any) -> str:
    answer = run(tool, {"initiative": P, **args})
    assert answer["state"] == "applied", answer
    node_id: str = answer["data"]["primary"]["id"]
    return node_id


def test_a_search_by_more_statuses_than_sqlites_parameters_finds_the_tasks_in_them(run: Run) -> None:
    task = _made(run, "task", text="oil the pump")
    statuses = [f"s{i}" for i in range(40_000)] + ["open"]
    assert _ids(run("search", {"initiatives": [P], "filters": {"statuses": statuses, "types": ["task"]}})) == {task}


@pytest.mark.parametrize("text", [None, "lantern"])
def test_a_search_by_many_tags_finds_the_nodes_that_carry_every_one(run: Run, text: str | None) -> None:
    every = _made(run, "note", text="a tagged lantern", tags=TAGS)
    cafe = _made(run, "note", text="a lantern at the café", tags=["topic:café", *TAGS[:-1]])

    def found(tags: list[str]) -> set[str]:
        args: dict[str, Any] = {"initiatives": [P], "filters": {"tags": tags}}
        return _ids(run("search", args if text is None else {**args, "text": text}))

    assert found(TAGS) == {every}
    assert found(TAGS[:-1]) == {every, cafe}
    assert found([*TAGS, "topic:unheld"]) == set()
    assert found([unicodedata.normalize("NFD", "topic:café"), *TAGS[:-1]]) == {cafe}  # either spelling
    assert found([f"topic:é{i}" for i in range(2_000)]) == set()  # deeper than SQLite nests a clause a tag


def test_made_up_statuses_are_each_looked_for_only_up_to_a_bound_and_the_rest_said_once(run: Run) -> None:
    """Each status no board has costs a search of the nodes: thousands of made-up ones held one call
    for minutes. The first `STATUSES_LOOKED_FOR` are each warned about; the rest in one warning."""
    from kaeru.service.tasks import STATUSES_LOOKED_FOR

    task = _made(run, "task", text="grease the gate")
    statuses = ["open", *[f"made-up-{i}" for i in range(3_000)]]
    answer = run("search", {"initiatives": [P], "filters": {"statuses": statuses}})
    assert _ids(answer) == {task}
    issues = answer["issues"]
    each = [i for i in issues if i["field"].startswith("filters.statuses.")]
    assert [i["field"] for i in each] == [f"filters.statuses.{n}" for n in range(1, STATUSES_LOOKED_FOR + 1)]
    [rest] = [i for i in issues if i["field"] == "filters.statuses"]
    assert rest["message"].startswith(f"{3_000 - STATUSES_LOOKED_FOR} more status(es)")
    assert "'made-up-20'" in rest["message"]
