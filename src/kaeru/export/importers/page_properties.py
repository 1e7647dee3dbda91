"""The node properties of a kaeru Markdown export's page (`properties:` in its front matter), read
back by `kaeru import-from kaeru-md`.

The export writes the properties that say which rules apply and what a node is
(`markdown.CARRIED_PROPERTIES`) as one line of JSON. Each is checked here as the write path checks
it (`note`, `task`, `link` action chain) and for the node it is on (a rule's `applicability` and
`constraint_state`, a task's `due`, a chain's steps): a value the write path would refuse — a page
edited by hand — is left out, and `property_skipped` names the page, the property and why; the rest
of the page imports. A page with no such line (an older export, the original kaeru's) imports as
before. Whatever the line holds (JSON nested past the parser's depth, a list where a name goes),
the page is read: a value that cannot be read is one the write path would refuse.

What says whether a rule is in force is never read wider than the page says it: a rule would
otherwise come back in force where its source holds it out of force, the failure the line exists to
prevent. A rule scoped to a task that is no page of the folder (forgotten in the source, so not
exported, or of an initiative not exported) keeps the source's task id, which names no task of the
importing vault: `context` and `recall` hold it out of force as a rule of a forgotten task, as in
the source. A rule whose `applicability` or `constraint_state` cannot be read (not JSON, not a day,
a state the write path does not know) is imported released: when it applies is not known.

A page names other nodes (a rule's task, a chain's steps and their links) by their pages' `id`s (or
a page's file name, `[[ship]]`): the reader keeps those keys (`Item.refs`), the write takes each
item after the items it names (`ordered`), and gives it the ids of the nodes made of them (`bind`),
so a task's rule is scoped to the imported task and a chain's steps are the imported nodes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from kaeru.domain.model import RULE_TAG, EdgeType, NodeType
from kaeru.domain.timefmt import fmt, parse_date, parse_ts
from kaeru.errors import KaeruError
from kaeru.export.markdown import CARRIED_PROPERTIES
from kaeru.service.capture import parse_reminder
from kaeru.service.outcomes import Issue
from kaeru.service.requests.base import Branch

if TYPE_CHECKING:
    from kaeru.export.importers.core import Item

_EDGE_TYPES = frozenset(t.value for t in EdgeType)
#: Said of a rule whose in-force properties could not be read (`_Skip.release`).
_RELEASED = (
    "; the rule is imported released, in force for no task, as when it applies is not known "
    "(`revise` it active, with its applicability, to put it in force)"
)
#: The properties that say whether a rule is in force.
_IN_FORCE = ("applicability", "constraint_state")
#: The most of a value a message quotes.
_QUOTED = 80


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
    """What is said of a property: why, and the part of it named (`applicability.task`). Raised, the
    property is left out; added to `notes`, the rest of it is kept and the part named is left out
    (`left_out`) or kept as the page gives it. `release`: the rule is imported released."""

    def __init__(self, why: str, part: str = "", *, left_out: bool = True, release: bool = False) -> None:
        super().__init__(why)
        self.why, self.part, self.left_out, self.release = why, part, left_out, release


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
        except (ValueError, RecursionError):  # RecursionError: nested past the parser's depth
            found = None
    rule = node_type == NodeType.CONCEPT and RULE_TAG in tags
    if not isinstance(found, dict):
        why = 'is not one line of JSON naming properties ({"due": "2026-12-01"}); none of them was imported'
        message = f"{page}: properties {why}{_RELEASED if rule else ''}"
        return {"constraint_state": "released"} if rule else {}, [], [Issue("property_skipped", message, "properties")]
    out: dict[str, Any] = {}
    refs: list[str] = []
    issues: list[Issue] = []
    release = False
    for name in sorted(found):
        notes: list[_Skip] = []
        try:
            value = _checked(name, found[name], node_type, rule, folder, refs, notes)
        except _Skip as skip:
            value = None
            notes.append(skip)
        except RecursionError:  # parsed, but nested too deep to be looked at again (`str`, `json.dumps`)
            value = None
            notes.append(_Skip("is nested too deep to be read", release=rule and name in _IN_FORCE))
        for note in notes:
            where = f"properties.{name}{'.' + note.part if note.part else ''}"
            then = ("; left out" if note.left_out else "") + (_RELEASED if note.release else "")
            issues.append(Issue("property_skipped", f"{page}: {where} {note.why}{then}", where))
            release = release or note.release
        if value is not None:
            out[name] = value
    if release:
        out["constraint_state"] = "released"
    return out, list(dict.fromkeys(refs)), issues


def _checked(
    name: str, value: Any, node_type: NodeType, rule: bool, folder: Folder, refs: list[str], notes: list[_Skip]
) -> Any:
    """`value` of the property `name` as the write path stores it (None: nothing to store); raises
    `_Skip` with why it is left out, and adds to `notes` what is said of a value kept."""
    if name not in CARRIED_PROPERTIES:
        raise _Skip(f"is not a property the import carries (it carries {', '.join(CARRIED_PROPERTIES)})")
    if name == "url":
        if not isinstance(value, str) or not value.strip():
            raise _Skip("must be text")
        return value
    if name == "branch":
        try:  # the write path's own type (`note`/`task` `branch`)
            return TypeAdapter(Branch).validate_python(value, strict=True)
        except ValidationError as error:
            why = f"{_shown(value)} is not a git branch name as a write takes it: {error.errors()[0]['msg']}"
            raise _Skip(why) from None
    if name == "occurred_at":
        try:
            return fmt(parse_ts(str(value)))
        except (ValueError, OverflowError):
            raise _Skip(f"{_shown(value)} is not a stored time such as 2026-03-03T10:00:00.000000Z") from None
    if name == "reminder":
        try:
            return parse_reminder(
                {k: v for k, v in value.items() if k != "seen"} if isinstance(value, dict) else value, ""
            )
        except KaeruError as error:
            raise _Skip(error.message[:300]) from None
    if name == "due":
        if node_type != NodeType.TASK:
            raise _Skip(f"is a task's, and this page is {node_type.value}")
        return _day(value)
    if name in _IN_FORCE and not rule:
        raise _Skip("applies only to rules (kind:rule)")
    if name == "constraint_state":
        if not isinstance(value, str) or value not in ("active", "released"):
            raise _Skip(f"is active or released, not {_shown(value)}", release=True)
        return value
    if name == "applicability":
        return _applicability(value, folder, refs, notes)
    if node_type != NodeType.CHAIN:
        raise _Skip(f"is a saved chain's, and this page is {node_type.value}")
    return _chain(value, folder, refs)


def _shown(value: Any) -> str:
    """`value` as a message quotes it: its JSON, cut short."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    quoted = repr(text) if isinstance(value, str) else text
    return quoted if len(quoted) <= _QUOTED else quoted[: _QUOTED - 1] + "…"


def _day(value: Any, part: str = "", *, release: bool = False) -> str:
    try:
        return parse_date(str(value)).isoformat()
    except (ValueError, OverflowError):
        raise _Skip(f"{_shown(value)} is not a day such as 2026-12-01", part, release=release) from None


def _applicability(value: Any, folder: Folder, refs: list[str], notes: list[_Skip]) -> dict[str, Any] | None:
    """A rule's `{task?, through?}` (`capture.parse_applicability`), its task a task page's `id`.

    A task that is no page of the folder is kept as the page says it: the source's task id, which
    names no task here, so the rule is in force for none, as in the source where that task was
    forgotten or not exported. A part that cannot be read is left out and the rule released."""
    if not isinstance(value, dict) or not value or not set(value) <= {"task", "through"}:
        raise _Skip("needs task and/or through", release=True)
    out: dict[str, Any] = {}
    if "through" in value:
        try:
            out["through"] = _day(value["through"], "through", release=True)
        except _Skip as skip:
            notes.append(skip)
    if "task" in value:
        named = value["task"]
        task = folder.key(named)
        if task is not None and folder.types[task] == NodeType.TASK:
            refs.append(task)
            out["task"] = task
        elif task is None and isinstance(named, str) and named.strip():
            out["task"] = named
            why = (
                f"{_shown(named)} is no page of the folder (a task forgotten in the source, or of an "
                "initiative not exported, is not written): the rule stays scoped to it, a task this vault "
                "does not hold, so it is in force for no task, as a rule of a forgotten task"
            )
            notes.append(_Skip(why, "task", left_out=False))
        else:
            what = f"a {folder.types[task].value}, not a task" if task is not None else "not the id of a task page"
            notes.append(_Skip(f"{_shown(named)} is {what}", "task", release=True))
    return out or None


def _number(value: Any) -> float | int | None:
    """`value` when it is a finite number (not a boolean) a float holds, else None."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return value if math.isfinite(value) else None
    except OverflowError:  # an int past a float's range
        return None


def _chain(value: Any, folder: Folder, refs: list[str]) -> dict[str, Any]:
    """A saved chain's `{members, edges, cost}` (`link` action chain): two steps or more, each a page
    of the folder, and the links between them, one fewer, each `[from, to, edge type, weight 0–1]`."""
    if not isinstance(value, dict) or not isinstance(value.get("members"), list) or len(value["members"]) < 2:
        raise _Skip("needs members: the ids of two pages or more")
    members = [folder.key(m) for m in value["members"]]
    if None in members:
        missing = [_shown(m) for m, k in zip(value["members"], members, strict=True) if k is None]
        raise _Skip(f"names steps that are no page of the folder: {', '.join(missing[:5])}", "members")
    links = value.get("edges")
    if not isinstance(links, list) or len(links) != len(members) - 1:
        raise _Skip(f"needs edges: the {len(members) - 1} link(s) between its steps", "edges")
    edges: list[list[Any]] = []
    for i, link in enumerate(links):
        ok = isinstance(link, list) and len(link) == 4
        ends = [folder.key(x) for x in link[:2]] if ok else []
        kind = link[2] if ok and isinstance(link[2], str) else None
        weight = _number(link[3]) if ok else None
        if None in ends or kind not in _EDGE_TYPES or weight is None or not 0 <= weight <= 1:
            raise _Skip("needs [from, to, edge type, weight 0–1], from and to pages of the folder", f"edges[{i}]")
        edges.append([*ends, kind, weight])
    cost = _number(value.get("cost", 0))
    if cost is None or cost < 0:
        raise _Skip("must be a number ≥ 0", "cost")
    keys = [k for k in members if k is not None]
    refs.extend([*keys, *(e for edge in edges for e in edge[:2])])
    return {"members": keys, "edges": edges, "cost": cost}


def ordered(items: list[Item]) -> list[Item]:
    """`items` (one per key) each after the items it names (`Item.refs`: a rule's task, a chain's
    steps, which may be rules or chains themselves), else in the order read: a node named is made
    before the item naming it is written. Names that go round (a chain among its own steps, by hand)
    are taken in the order read; the one reached first is written before the one it names."""
    at = {item.key: i for i, item in enumerate(items)}
    done = [False] * len(items)
    out: list[Item] = []
    for first in range(len(items)):
        # Depth first without recursion: a folder may hold a long line of chains each naming the next.
        stack = [(first, 0)]
        while stack:
            i, next_ref = stack.pop()
            if done[i] and next_ref == 0:
                continue
            done[i] = True
            refs = items[i].refs
            while next_ref < len(refs) and (refs[next_ref] not in at or done[at[refs[next_ref]]]):
                next_ref += 1
            if next_ref < len(refs):
                stack += [(i, next_ref + 1), (at[refs[next_ref]], 0)]
            else:
                out.append(items[i])
    return out


def bind(item: Item, node_of: Callable[[str], str | None]) -> tuple[Item, list[Issue]]:
    """`item` with the page keys its properties name made the ids of their nodes (`node_of`), its
    digest still of what the source said. A key no node was made of is said: a rule's task stays as
    the page gave it (a task this vault does not hold: the rule in force for none), a chain names no
    steps; the digest is then of what was written, so an import that can bind them revises the node."""
    extra = dict(item.extra)
    issues: list[Issue] = []
    scope = extra.get("applicability")
    if isinstance(scope, dict) and "task" in scope:
        task = node_of(scope["task"])
        if task is not None:
            extra["applicability"] = {**scope, "task": task}
        else:
            issues.append(_unbound(item, "applicability.task", "the rule stays scoped to it, in force for no task"))
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
    bound = replace(item, extra=extra)
    return replace(bound, said=bound.digest() if issues else item.digest()), issues


def _unbound(item: Item, where: str, then: str) -> Issue:
    return Issue(
        "property_skipped",
        f"{item.origin or item.key}: properties.{where} names a page no node was imported of; {then}",
        f"properties.{where}",
    )
