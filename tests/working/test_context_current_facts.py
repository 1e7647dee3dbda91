"""What an agent re-entering learns of the facts that are still current, and how the bundle's text
says it (the re-entry probe, session 55): `warm` was the layer's newest notes, so forty routine notes
written after "API port 9443" left the port out of the whole bundle; and the text of `## slots` and
`## tasks` began with the sections' extras as raw JSON (ids, board columns), a task-scoped rule's
task given by its id."""

from __future__ import annotations

from kaeru.mcp.render import compact
from tests.working.conftest import Call, section, section_ids
from tests.working.limited import applied_id


def _routine(call: Call, count: int) -> list[str]:
    return [applied_id(call("note", initiative="svc", text=f"CI run #{i} was green.")) for i in range(count)]


def test_a_named_fact_that_supersedes_another_is_shown_past_forty_routine_notes(call: Call) -> None:
    named = [
        applied_id(call("note", initiative="svc", text=f"Service {i} runs on node {i}.", name=f"svc {i}"))
        for i in range(12)
    ]
    old = applied_id(call("note", initiative="svc", text="The API listens on port 8080.", name="API port"))
    port = applied_id(
        call(
            "note",
            initiative="svc",
            text="The API now listens on port 9443 (TLS).",
            name="API port 9443",
            link_to={"id": old},
            edge_type="supersedes",
        )
    )
    # A task is always named, and a closed one is no fact; a named note of `hot` has its own
    # section: neither takes a place in `warm` ahead of its newest notes.
    task = applied_id(call("task", initiative="svc", text="Upgrade the cluster", name="cluster upgrade"))
    call("task_update", initiative="svc", task={"id": task}, status="done")
    hot = applied_id(
        call("note", initiative="svc", text="Deploys go through Argo.", name="deploys", options={"layer": "hot"})
    )
    routine = _routine(call, 40)

    answer = call("context", initiative="svc")
    warm = section_ids(answer, "warm")
    assert warm[0] == port, "the current fact comes before the routine notes"
    assert warm[1:10] == named[::-1][:9]  # facts take at most 10 of the 15 places
    assert section_ids(answer, "hot") == [hot]
    assert old not in {i for s in answer["data"]["sections"] for i in (item["id"] for item in s["items"])}
    assert "9443" in compact(answer)
    # Recent work is still seen: the newest routine notes fill the rest of `warm`, then `recent`.
    assert warm[10:] == routine[::-1][:5]
    assert section_ids(answer, "recent") == routine[::-1][5:15]
    assert {"section": "warm", "count": 53 - 15 - 10, "reason": "limit"} in answer["coverage"]["omitted"]


def test_the_current_end_of_a_chain_is_a_fact_though_nobody_named_it(call: Call) -> None:
    """`evolve` names a successor after its new body when no name is given: the chain is the mark."""
    first = applied_id(call("note", initiative="svc", text="We use pydantic 1.10."))
    now = applied_id(
        call("evolve", initiative="svc", mode="supersede", source={"id": first}, new_body="We use pydantic 2.5 now.")
    )
    _routine(call, 30)
    answer = call("context", initiative="svc")
    assert section_ids(answer, "warm")[0] == now
    assert "pydantic 2.5" in compact(answer) and "pydantic 1.10" not in compact(answer)


def test_the_sections_extras_are_said_in_words_and_a_scoped_rule_names_its_task(call: Call) -> None:
    call("note", initiative="svc", text="Next: the PG16 cutover.", name="handoff", options={"slot": "handoff"})
    task = applied_id(
        call("task", initiative="svc", text="Upgrade PostgreSQL 15 to 16.", name="Migrate to Postgres 16")
    )
    call("task", initiative="svc", text="Add rate limiting.", name="Rate limiting", due="2026-03-01")
    rule = applied_id(
        call(
            "note",
            initiative="svc",
            kind="rule",
            text="Take a verified backup before any destructive migration.",
            applicability={"task": {"id": task}},
        )
    )

    answer = call("context", initiative="svc")
    text = compact(answer)
    assert '{"holders"' not in text and '{"columns"' not in text and '"scoped_rules"' not in text
    assert "board: open, in-progress, done; overdue: 1; " in text
    assert 'rules for "Migrate to Postgres 16": 1' in text
    assert " · slot handoff" in text
    # The envelope is unchanged: the ids and counts are still there for a program.
    assert section(answer, "tasks")["scoped_rules"] == {task: 1}
    assert section(answer, "tasks")["overdue_total"] == 1
    assert list(section(answer, "slots")["holders"]) == ["handoff"]

    on_task = call("context", initiative="svc", task="Migrate to Postgres 16")
    line = next(line for line in compact(on_task).splitlines() if f"id={rule}" in line)
    assert line.endswith(' · applies while on task "Migrate to Postgres 16"'), line
    assert "properties=" not in line
    assert on_task["data"]["sections"][0]["items"][0]["properties"]["applicability"] == {"task": task}


def test_a_rule_of_a_task_the_answer_does_not_show_is_given_by_id_and_a_dated_rule_in_words(call: Call) -> None:
    task = applied_id(call("task", initiative="svc", text="Old work.", name="old work", status="done"))
    call("note", initiative="svc", kind="rule", text="Old work: CSV only.", applicability={"task": {"id": task}})
    call("note", initiative="svc", kind="rule", text="Code freeze.", applicability={"through": "2026-12-20"})
    found = compact(call("search", initiatives=["svc"], text="CSV freeze", filters={"types": ["concept"]}))
    assert f"applies while on task id={task}" in found
    assert "applies through 2026-12-20" in found and "properties=" not in found


def test_doubted_nodes_are_shown_at_the_default_budget_though_long_named_facts_fill_warm(call: Call) -> None:
    """Reviews were granted the budget after `warm`: once `warm` led with its standing facts, a
    project's long named notes took what tasks and decisions left, and the re-entry showed none of
    the nodes awaiting a verdict (the benchmark's corpus: reviews 0 of 10 at the default budget)."""
    filler = " It was checked against the staging cluster, the runbook and the last three incident reports."
    for i in range(16):
        call("task", initiative="svc", text=f"Task {i}: migrate service {i}." + filler * 3, name=f"task {i}")
    for i in range(8):
        call("note", initiative="svc", kind="decision", text=f"Decision {i}: keep shard {i}." + filler * 3)
    facts = [
        applied_id(call("note", initiative="svc", text=f"Service {i} runs on node {i}." + filler * 3, name=f"svc {i}"))
        for i in range(12)
    ]
    believed = applied_id(call("note", initiative="svc", text="The cache is warmed at boot.", name="cache warm-up"))
    call(
        "note",
        initiative="svc",
        text="The boot log shows the cache cold for the first minute.",
        link_to={"id": believed},
        edge_type="contradicts",
    )

    answer = call("context", initiative="svc")
    assert section_ids(answer, "reviews") == [believed], answer["coverage"]["omitted"]
    assert section_ids(answer, "warm")[:3] == facts[::-1][:3], "the standing facts still lead warm"
    assert "cache is warmed at boot" in compact(answer)


def test_a_settled_then_unsettled_chat_line_is_no_fact_though_it_carries_a_server_made_name(call: Call) -> None:
    # `evolve` carries the source's name onto its successor: the server-made name of the first id.
    first = applied_id(call("note", initiative="svc", text="Lunch was pizza today."))
    settled = applied_id(call("evolve", initiative="svc", mode="settle", source={"id": first}))
    back = applied_id(call("evolve", initiative="svc", mode="unsettle", source={"id": settled}))
    routine = _routine(call, 30)
    warm = section_ids(call("context", initiative="svc"), "warm")
    assert back not in warm[:1] and warm[0] == routine[-1], "the newest note leads warm, no chat line as a fact"
