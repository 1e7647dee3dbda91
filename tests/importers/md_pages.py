"""Tool calls and a second vault for the tests of a kaeru Markdown export imported again: shared by
the tests of the `properties:` line its pages carry."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import drop_vault, new_vault

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


def ok(run: Run, tool: str, **args: Any) -> str:
    """The id of what `tool` wrote (or found unchanged)."""
    answer = run(tool, args)
    assert answer["state"] in ("applied", "unchanged"), answer
    return str(answer["data"]["primary"]["id"])


def rule(run: Run, initiative: str, name: str, text: str, **applicability: Any) -> str:
    """A rule of `initiative`, in force where `applicability` says (everywhere, when none)."""
    scope = {"applicability": applicability} if applicability else {}
    return ok(run, "note", initiative=initiative, kind="rule", name=name, text=text, **scope)


@contextmanager
def other_vault(backend: str, tmp_path: Path) -> Iterator[Service]:
    spec = new_vault(backend, tmp_path / "other")
    store = open_store(spec.settings())
    try:
        yield Service(store, spec.settings())
    finally:
        store.close()
        drop_vault(spec)


def rules(run: Run, initiative: str, task: str | None = None) -> list[str]:
    """The names of the rules `context` gives as in force (for `task`, when given)."""
    args: dict[str, Any] = {"initiative": initiative, **({"task": task} if task else {})}
    sections = run("context", args)["data"]["sections"]
    return sorted(item["name"] for s in sections if s["name"] == "rules" for item in s["items"])
