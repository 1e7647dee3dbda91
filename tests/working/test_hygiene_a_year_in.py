"""A year of a project with hygiene on: `reflect` keeps asking about what is still in context, finished
tasks settle out of context as finished notes do, and a week's passes share one report note, each move
told once — the year probe found 743 orphans listed oldest first (all January chatter already cold),
139 finished tasks that stayed warm for ever, and 250 report notes crowding the cold listings."""

from __future__ import annotations

from kaeru.service import Service
from tests.working.conftest import Call, Clock
from tests.working.hygiene_week import P, first_of_two_moved, made, report_notes


def _layer(call: Call, node: str) -> str:
    layer: str = call("read", initiative=P, node={"id": node})["data"]["hits"][0]["layer"]
    return layer


def _items(call: Call, kind: str) -> tuple[list[str], int]:
    answer = call("reflect", initiative=P)
    assert answer["state"] == "ok", answer["issues"]
    listed = [i["node"] for i in answer["data"]["items"] if i["kind"] == kind]
    return listed, answer["data"]["counts"].get(kind, 0)


def test_an_orphan_already_out_of_context_is_not_asked_about_again(call: Call, clock: Clock) -> None:
    chatter = made(call("note", initiative=P, text="Standup: nothing blocking, paired on the exporter."))
    shelved = made(call("note", initiative=P, text="Ran the test suite, all green."))
    clock.advance(days=20)
    moved = call("layer", initiative=P, nodes=[{"id": chatter}], layer="cold")
    assert moved["state"] == "applied", moved["issues"]
    assert call("layer", initiative=P, nodes=[{"id": shelved}], layer="frozen")["state"] == "applied"
    fresh = made(call("note", initiative=P, text="The API style guide lives in docs/api-style.md."))
    listed, counted = _items(call, "orphan")
    # Only what `context` still brings back is asked "link it or forget it", and counted.
    assert listed == [fresh] and counted == 1


def test_a_finished_task_settles_out_of_context_as_a_finished_note_does(
    call: Call, timed: Service, clock: Clock
) -> None:
    finished = made(call("task", initiative=P, text="Add the refund flow"))
    assert call("task_update", initiative=P, task=finished, status="done")["state"] == "applied"
    relied = made(call("task", initiative=P, text="Write the CSV importer"))
    assert call("task_update", initiative=P, task=relied, status="done")["state"] == "applied"
    citing = made(call("note", initiative=P, text="The import runbook builds on the CSV importer task."))
    linked = call(
        "link", initiative=P, **{"from": {"id": citing}, "to": {"id": relied}}, edge_type="refers_to", weight=0.8
    )
    assert linked["state"] == "applied", linked["issues"]
    late = made(call("task", initiative=P, text="Document the rate limiter", due="2026-03-10"))
    clock.advance(days=20)
    just_done = made(call("task", initiative=P, text="Fix the admin audit log"))
    assert call("task_update", initiative=P, task=just_done, status="done")["state"] == "applied"

    moves = {m.node_id: m for m in timed.hygiene(P)}
    assert finished in moves and (moves[finished].before.value, moves[finished].after.value) == ("warm", "cold")
    # Open work stays however late it is; a finished task others rely on, or finished today, stays too.
    for node in (late, relied, just_done):
        assert node not in moves and _layer(call, node) == "warm"
    assert _layer(call, finished) == "cold"
    archivable, _ = _items(call, "archivable")
    assert finished not in archivable
    assert timed.hygiene(P) == [], "a fixed point"


def test_a_weeks_passes_share_one_report_and_each_move_is_told_once(call: Call, timed: Service, clock: Clock) -> None:
    first, second = first_of_two_moved(call, timed, clock)
    told = call("context", initiative=P)["data"]["notices"]
    assert len(told) == 1 and first in told[0] and second not in told[0]

    clock.advance(days=1)
    assert [m.node_id for m in timed.hygiene(P)] == [second]
    reports = report_notes(call)
    assert len(reports) == 1, "the week's passes revise one report note"
    told = call("context", initiative=P)["data"]["notices"]
    assert len(told) == 1 and second in told[0] and first not in told[0], "a move already told is not told again"
    assert told[0].startswith("Hygiene moved 1 node(s)")
    assert call("context", initiative=P)["data"]["notices"] == [], "reported once"
    body = call("read", initiative=P, node={"id": reports[0]["id"]})["data"]["hits"][0]["body"]
    assert first in body and second in body, "the report keeps the week's moves"

    # Two passes before anyone looks, the first a week after the report began: a new report tells both.
    third = made(call("note", initiative=P, text="Investigated the flaky refund test."))
    clock.advance(days=1)
    fourth = made(call("note", initiative=P, text="Cleaned up feature branch leftovers."))
    clock.advance(days=13, hours=1)
    assert [m.node_id for m in timed.hygiene(P)] == [third]
    clock.advance(days=1)
    assert [m.node_id for m in timed.hygiene(P)] == [fourth]
    assert len(report_notes(call)) == 2, "a pass a week after the report started begins a new one"
    told = call("context", initiative=P)["data"]["notices"]
    assert len(told) == 1 and third in told[0] and fourth in told[0] and told[0].startswith("Hygiene moved 2 node(s)")
    cold = call("context", initiative=P, sections=["cold"])["data"]["sections"]
    listed = [i["id"] for s in cold if s["name"] == "cold" for i in s["items"]]
    assert sum(1 for r in report_notes(call) if r["id"] in listed) == 2
