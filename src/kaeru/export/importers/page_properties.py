"""The node properties of a kaeru Markdown export's page (`properties:` in its front matter), read
back by `kaeru import-from kaeru-md`.

The export writes the properties that say which rules apply and what a node is
(`markdown.CARRIED_PROPERTIES`) as one line of JSON. Each is checked here as the write path checks
it (`note`, `task`, `link` action chain) and for the node it is on (a rule's `applicability` and
`constraint_state`, a task's `due`, a chain's steps): a value the write path would refuse — a page
edited by hand — is left out, and `property_skipped` names the page, the property and why; the rest
of the page imports. A page with no such line (an older export, the original kaeru's) imports as
before.

A page names other nodes (a rule's task, a chain's steps and their links) by their pages' `id`s (or
a page's file name, `[[ship]]`): the reader keeps those keys (`Item.refs`), puts the item after the
items it names (`order`), and the write gives it the ids of the nodes made of them (`bind`), so a
task's rule is scoped to the imported task and a chain's steps are the imported nodes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import RULE_TAG, EdgeType, NodeType
from kaeru.domain.timefmt import fmt, parse_date, parse_ts
from kaeru.errors import KaeruError
from kaeru.export.markdown import CARRIED_PROPERTIES
from kaeru.service.capture import parse_reminder
from kaeru.service.outcomes import Issue

if TYPE_CHECKING:
    from kaeru.export.importers.core import Item

_EDGE_TYPES = frozenset(t.value for t in EdgeType)


@dataclass(frozen=True)
class Folder:
    """The folder's pages a property may name: their type by `id`, and their `id` by file name."""

    types: Mapping[str, NodeType]
    stems: Mapping[str, str]

    def key(self, value: Any) -> str | None:
        """The `id` of the page `value` names: its `id`, or its file name (`ship`, `[[ship]]`)."""
        if not isinstance(value, str):
            return None
        if value in self.types:
            return value
        name = value.strip().removeprefix("[[").removesuffix("]]").split("|")[0].strip().lower()
        return self.stems.get(name.removesuffix(".md"))


class _Skip(Exception):
    """A property left out: why, and the part of it named (`applicability.task`)."""

    def __init__(self, why: str, part: str = "") -> None:
        super().__init__(why)
        self.why, self.part = why, part


class _Kept(_Skip):
    """Part of a property left out, the rest of it kept (`value`)."""

    def __init__(self, value: dict[str, Any], why: str, part: str) -> None:
        super().__init__(why, part)
        self.value = value


def read(
    front: dict[str, Any], page: str, node_type: NodeType, tags: list[str], folder: Folder
) -> tuple[dict[str, Any], list[str], list[Issue]]:
    """The properties a page's `properties:` says (`front`: its front matter, as `notes.front_matter`
    read it), the keys of the pages they name, and what was left out (`property_skipped`, naming
    `page`). A page without the key has none (an older export)."""
    if "properties" not in front:
        return {}, [], []
    found = raw = front["properties"]  # None: written over several lines, which the reader does not read
    if isinstance(raw, str):
        try:
            found = json.loads(raw)
        except ValueError:
            found = None
    if not isinstance(found, dict):
        why = 'is not one line of JSON naming properties ({"due": "2026-12-01"}); none of them was imported'
        return {}, [], [Issue("property_skipped", f"{page}: properties {why}", "properties")]
    rule = node_type == NodeType.CONCEPT and RULE_TAG in tags
    out: dict[str, Any] = {}
    refs: list[str] = []
    issues: list[Issue] = []
    for name in sorted(found):
        try:
            value = _checked(name, found[name], node_type, rule, folder, refs)
        except _Skip as skip:
            where = f"properties.{name}{'.' + skip.part if skip.part else ''}"
            issues.append(Issue("property_skipped", f"{page}: {where} {skip.why}; left out", where))
            if isinstance(skip, _Kept):
                out[name] = skip.value
            continue
        if value is not None:
            out[name] = value
    return out, list(dict.fromkeys(refs)), issues


def _checked(name: str, value: Any, node_type: NodeType, rule: bool, folder: Folder, refs: list[str]) -> Any:
    """`value` of the property `name` as the write path stores it (None: nothing to store); raises
    `_Skip` with why it is left out."""
    if name not in CARRIED_PROPERTIES:
        raise _Skip(f"is not a property the import carries (it carries {', '.join(CARRIED_PROPERTIES)})")
    if name in ("url", "branch"):
        if not isinstance(value, str) or not value.strip():
            raise _Skip("must be text")
        return value
    if name == "occurred_at":
        try:
            return fmt(parse_ts(str(value)))
        except ValueError:
            raise _Skip(f"{value!r} is not a stored time such as 2026-03-03T10:00:00.000000Z") from None
    if name == "reminder":
        try:
            return parse_reminder(
                {k: v for k, v in value.items() if k != "seen"} if isinstance(value, dict) else value, ""
            )
        except KaeruError as error:
            raise _Skip(error.message) from None
    if name == "due":
        if node_type != NodeType.TASK:
            raise _Skip(f"is a task's, and this page is {node_type.value}")
        return _day(value)
    if name in ("applicability", "constraint_state") and not rule:
        raise _Skip("applies only to rules (kind:rule)")
    if name == "constraint_state":
        if value not in ("active", "released"):
            raise _Skip(f"is active or released, not {value!r}")
        return value
    if name == "applicability":
        return _applicability(value, folder, refs)
    if node_type != NodeType.CHAIN:
        raise _Skip(f"is a saved chain's, and this page is {node_type.value}")
    return _chain(value, folder, refs)


def _day(value: Any, part: str = "") -> str:
    try:
        return parse_date(str(value)).isoformat()
    except ValueError as exc:
        raise _Skip(str(exc), part) from None


def _applicability(value: Any, folder: Folder, refs: list[str]) -> dict[str, Any]:
    """A rule's `{task?, through?}` (`capture.parse_applicability`), its task a task page's `id`. A
    task that is no page of the folder is left out, and the rest kept: the rule then applies to
    every task, which the issue says."""
    if not isinstance(value, dict) or not value or not set(value) <= {"task", "through"}:
        raise _Skip("needs task and/or through")
    out: dict[str, Any] = {}
    if "through" in value:
        out["through"] = _day(value["through"], "through")
    if "task" in value:
        task = folder.key(value["task"])
        if task is None or folder.types[task] != NodeType.TASK:
            what = "no page of the folder" if task is None else f"a {folder.types[task].value}, not a task"
            why = f"{value['task']!r} is {what}: the rule is imported for every task"
            raise _Kept(out, why, "task") if out else _Skip(why, "task")
        refs.append(task)
        out["task"] = task
    return out


def _chain(value: Any, folder: Folder, refs: list[str]) -> dict[str, Any]:
    """A saved chain's `{members, edges, cost}` (`link` action chain): two steps or more, each a page
    of the folder, and the links between them, one fewer, each `[from, to, edge type, weight 0–1]`."""
    if not isinstance(value, dict) or not isinstance(value.get("members"), list) or len(value["members"]) < 2:
        raise _Skip("needs members: the ids of two pages or more")
    members = [folder.key(m) for m in value["members"]]
    if None in members:
        missing = [m for m, k in zip(value["members"], members, strict=True) if k is None]
        raise _Skip(f"names steps that are no page of the folder: {', '.join(map(repr, missing[:5]))}", "members")
    links = value.get("edges")
    if not isinstance(links, list) or len(links) != len(members) - 1:
        raise _Skip(f"needs edges: the {len(members) - 1} link(s) between its steps", "edges")
    edges: list[list[Any]] = []
    for i, link in enumerate(links):
        ok = isinstance(link, list) and len(link) == 4
        ends = [folder.key(x) for x in link[:2]] if ok else []
        weight = link[3] if ok else None
        if not (
            ok
            and None not in ends
            and link[2] in _EDGE_TYPES
            and isinstance(weight, int | float)
            and not isinstance(weight, bool)
            and 0 <= weight <= 1
        ):
            raise _Skip("needs [from, to, edge type, weight 0–1], from and to pages of the folder", f"edges[{i}]")
        edges.append([*ends, link[2], weight])
    cost = value.get("cost", 0)
    if not isinstance(cost, int | float) or isinstance(cost, bool) or not math.isfinite(cost) or cost < 0:
        raise _Skip("must be a number ≥ 0", "cost")
    keys = [k for k in members if k is not None]
    refs.extend([*keys, *(e for edge in edges for e in edge[:2])])
    return {"members": keys, "edges": edges, "cost": cost}


def order(item: Item) -> int:
    """Where `item` goes among a batch's items: one naming none first, then a rule (which names a
    task), then a chain (whose steps may be rules): each after the items it names."""
    if not item.refs:
        return 0
    return 2 if "chain" in item.extra else 1


def bind(item: Item, node_of: Callable[[str], str | None]) -> tuple[Item, list[Issue]]:
    """`item` with the page keys its properties name made the ids of their nodes (`node_of`), its
    digest still of what the source said; a key no node was made of is left out and said."""
    extra = dict(item.extra)
    issues: list[Issue] = []
    scope = extra.get("applicability")
    if isinstance(scope, dict) and "task" in scope:
        task = node_of(scope["task"])
        if task is not None:
            extra["applicability"] = {**scope, "task": task}
        else:
            rest = {k: v for k, v in scope.items() if k != "task"}
            extra.pop("applicability")
            if rest:
                extra["applicability"] = rest
            issues.append(_unbound(item, "applicability.task", "the rule is imported for every task"))
    chain = extra.get("chain")
    if isinstance(chain, dict):
        ids = {k: node_of(k) for k in [*chain["members"], *(e for edge in chain["edges"] for e in edge[:2])]}
        if None in ids.values():
            extra.pop("chain")
            issues.append(_unbound(item, "chain", "the chain is imported as a node naming no steps"))
        else:
            extra["chain"] = {
                **chain,
                "members": [ids[m] for m in chain["members"]],
                "edges": [[ids[a], ids[b], kind, weight] for a, b, kind, weight in chain["edges"]],
            }
    return replace(item, extra=extra, said=item.digest()), issues


def _unbound(item: Item, where: str, then: str) -> Issue:
    return Issue(
        "property_skipped",
        f"{item.origin or item.key}: properties.{where} names a page no node was imported of; {then}",
        f"properties.{where}",
    )
