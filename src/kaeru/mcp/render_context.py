"""The compact text of `context`'s sections besides their nodes, and of a rule's applicability.

`render.compact` wrote a section's extras as they are in the envelope: `## slots` began
`{"holders":{…ids…},"slots_total":2}`, `## tasks` `{"columns":[…],"overdue_total":1,"scoped_rules":
{"<id>":1}}`, and a rule scoped to a task said `properties={"applicability":{"task":"01a2…"}}`, an id
where a model looks for the task it is on. They are said here in words, the task by the name the
answer shows; `structuredContent` keeps them as they are.
"""

from __future__ import annotations

import json
from typing import Any


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def applicability_words(applicability: dict[str, Any], names: dict[str, str]) -> str | None:
    """A rule's `applicability` in words: "applies while on task "Migrate to Postgres 16" through
    2026-12-20". Written as JSON it named the task by its id, which a model cannot read as the task
    it is working on. None (the JSON is kept) for a value this does not know how to say."""
    task, through = applicability.get("task"), applicability.get("through")
    if set(applicability) - {"task", "through"} or not (task or through):
        return None
    if not all(v is None or isinstance(v, str) for v in (task, through)):
        return None
    words = ["applies"]
    if task:
        words.append(f"while on task {_json(names[task])}" if task in names else f"while on task id={task}")
    if through:
        words.append(f"through {through}")
    return " ".join(words)


def section_notes(section: dict[str, Any], names: dict[str, str]) -> list[str]:
    """What a `context` section says besides its nodes, in words: its board's columns, how many
    tasks are overdue, the rules waiting for each task (by the task's name), how many slots are held.
    Dumped as JSON, `## tasks` began `{"columns":[…],"overdue_total":1,"scoped_rules":{"<id>":1}}`.
    The slots' holders and the doubts' sources are said on the nodes' own lines (`node_marks`); an extra
    this does not know is still written as JSON, so nothing the envelope says is lost."""
    said: list[str] = []
    skip = {"name", "items", "total", "filters", "filters_not_applying", "overdue", "holders", "reasons"}
    columns = section.get("columns")
    if isinstance(columns, list) and all(isinstance(c, dict) and "key" in c for c in columns):
        skip.add("columns")
        labelled = [c["key"] if _spelt(c["key"], c.get("label")) else f"{c['key']} ({c['label']})" for c in columns]
        said.append("board: " + ", ".join(labelled))
    if isinstance(section.get("overdue_total"), int):
        skip.add("overdue_total")
        total, listed = section["overdue_total"], len(section.get("overdue") or ())
        if total:
            said.append(f"overdue: {total}" + (f" ({listed} shown)" if listed != total else ""))
    scoped = section.get("scoped_rules")
    if isinstance(scoped, dict):
        skip.add("scoped_rules")
        for task, count in scoped.items():
            named = _json(names[task]) if task in names else f"id={task}"
            said.append(f"rules for {named}: {count} (`context` with `task` shows them)")
    if isinstance(section.get("slots_total"), int):
        skip.add("slots_total")
        total, shown = section["slots_total"], len(section.get("holders") or {})
        if shown != total:
            said.append(f"slots held: {total} ({shown} holders shown)")
    lines = ["; ".join(said)] if said else []
    rest = {k: v for k, v in section.items() if k not in skip and v}
    if rest:
        lines.append(_json(rest))
    return lines


def _spelt(key: str, label: Any) -> bool:
    """Whether a column's label only spells its key (`In progress` for `in-progress`): not repeated."""
    return not isinstance(label, str) or label.casefold().replace(" ", "-") == str(key).casefold()


def node_marks(sections: list[dict[str, Any]]) -> dict[str, list[str]]:
    """What `context`'s sections say of a node, by id, for its own line: the slots it holds (which
    may be shown in another section: a holder whose reminder is due) and which nodes doubt it."""
    marks: dict[str, list[str]] = {}
    for section in sections:
        holders = section.get("holders")
        if isinstance(holders, dict):
            for slot, node in holders.items():
                marks.setdefault(str(node), []).append(f"slot {slot}")
        reasons = section.get("reasons")
        if isinstance(reasons, dict):
            for node, sources in reasons.items():
                if isinstance(sources, list) and sources:
                    marks.setdefault(str(node), []).append("contradicted by " + ", ".join(map(str, sources)))
    return marks
