"""An auto-name without its id suffix names its node while it is the only one (decision 292).

A note without a name is named by its first words and the end of its id (`write-docs-a51c80`,
decision 12), and an agent calls it by the words it wrote: `write-docs` was not found."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from tests.service.support import primary

P = "tasks"


def task(service: Service, text: str, **extra: Any) -> str:
    return primary(service.task(parse("task", {"initiative": P, "text": text, **extra}))[0])


def update(service: Service, ref: Any, status: str) -> Any:
    return service.task_update(parse("task_update", {"initiative": P, "task": ref, "status": status}))[0]


def test_the_words_of_an_auto_name_name_its_only_node(service: Service) -> None:
    docs = task(service, "write docs")
    task(service, "write docs and tests")  # `write-docs-and-tests-…`: the same start, another name
    task(service, "write", name="write-docs-by-hand")  # a name given: not an auto-name of `write-docs`
    assert primary(update(service, "write-docs", "done")) == docs
    shown = service.read(parse("read", {"initiative": P, "node": "write-docs"}))
    assert shown.hits[0].node.id == docs and shown.hits[0].node.name.startswith("write-docs-")


def test_two_nodes_of_one_auto_name_are_ambiguous_and_a_full_name_wins(service: Service) -> None:
    first = task(service, "write docs")
    second = task(service, "write docs")
    with pytest.raises(KaeruError) as err:
        update(service, "write-docs", "done")
    assert err.value.code == "ambiguous_ref" and first in str(err.value) and second in str(err.value)
    exact = task(service, "anything", name="write-docs")  # a node named exactly so is the one named
    assert primary(update(service, "write-docs", "done")) == exact


def test_the_words_name_nothing_in_another_initiative(service: Service) -> None:
    task(service, "write docs")
    with pytest.raises(KaeruError) as err:
        service.read(parse("read", {"initiative": "elsewhere", "node": "write-docs"}))
    assert err.value.code in ("not_found", "unknown_initiative")
