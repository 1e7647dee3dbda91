"""`reflect` never offers to archive, settle or forget memory still in force — an active rule, a
current decision, an open task, an open claim, a slot's holder — whose loss an agent following the advice would not
notice; and it offers finished work (a task in the done column, a supported or refuted claim) once
it is old, as it does any other old memory, each with a fix that works as given."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from tests.working.conftest import Call, Clock

P = "ledger"
#: The items that move memory out of context or away: archiving, settling, or "link it or forget it".
LOSING = ("orphan", "archivable", "settle_candidate")


def _listed(call: Call) -> tuple[dict[str, set[str]], dict[str, Any]]:
    """Each node's item kinds among LOSING, and the whole answer."""
    answer = call("reflect", initiative=P)
    assert answer["state"] == "ok", answer["issues"]
    kinds: dict[str, set[str]] = {}
    for item in answer["data"]["items"]:
        if item["kind"] in LOSING:
            kinds.setdefault(item["node"], set()).add(item["kind"])
    return kinds, answer


def _made(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer["issues"]
    node_id: str = answer["data"]["primary"]["id"]
    return node_id


def _today(call: Call) -> date:
    return date.fromisoformat(call("context", initiative=P)["data"]["today"])


def test_memory_in_force_is_never_offered_for_archiving_settling_or_forgetting(call: Call, clock: Clock) -> None:
    rule = _made(call("note", initiative=P, kind="rule", text="Never deploy on a Friday."))
    task = _made(call("task", initiative=P, text="Write the refund runbook"))
    scoped = _made(
        call(
            "note",
            initiative=P,
            kind="rule",
            text="While writing the runbook, cite the provider's refund API.",
            applicability={"task": {"id": task}},
        )
    )
    decision = _made(call("note", initiative=P, kind="decision", text="Decision: Stripe is the payment provider."))
    relied = _made(call("note", initiative=P, kind="decision", text="Decision: the ledger runs on PostgreSQL 16."))
    citing = _made(call("note", initiative=P, text="The migration plan follows the ledger database decision."))
    linked = call(
        "link", initiative=P, **{"from": {"id": citing}, "to": {"id": relied}}, edge_type="refers_to", weight=0.8
    )
    assert linked["state"] == "applied", linked["issues"]
    doing = _made(call("task", initiative=P, text="Migrate the ledger", status="in-progress"))
    claim = _made(call("claim", initiative=P, text="Webhooks arrive twice under load"))
    handoff = _made(
        call("note", initiative=P, text="Handoff: the refund runbook is half written.", options={"slot": "handoff"})
    )
    lonely = _made(call("note", initiative=P, text="A thought about invoice fonts nobody followed up"))

    clock.advance(days=20)
    kinds, answer = _listed(call)
    for node in (rule, scoped, decision, relied, task, doing, claim, handoff):
        assert node not in kinds, f"{node} is in force but offered as {kinds.get(node)}"
    # Old memory not in force is still offered, and the counts are of what is listed.
    assert kinds[lonely] == {"orphan", "archivable"} and kinds[citing] == {"archivable"}
    orphans = [i for i in answer["data"]["items"] if i["kind"] == "orphan"]
    assert answer["data"]["counts"]["orphan"] == len(orphans) == 1


def test_memory_no_longer_in_force_and_finished_work_are_offered_once_old(call: Call, clock: Clock) -> None:
    released = _made(call("note", initiative=P, kind="rule", text="Freeze deploys during the audit."))
    patched = call("revise", initiative=P, node={"id": released}, patch={"constraint_state": "released"})
    assert patched["state"] == "applied", patched["issues"]
    through = (_today(call) + timedelta(days=2)).isoformat()
    expired = _made(
        call(
            "note",
            initiative=P,
            kind="rule",
            text="Hold refunds until the migration.",
            applicability={"through": through},
        )
    )
    refuted = _made(call("note", initiative=P, kind="decision", text="Decision: keep invoices in Redis."))
    evidence = _made(call("note", initiative=P, text="Redis lost the invoices on failover."))
    falsified = call(
        "link", initiative=P, **{"from": {"id": evidence}, "to": {"id": refuted}}, edge_type="falsifies", weight=1.0
    )
    assert falsified["state"] == "applied", falsified["issues"]
    done = _made(call("task", initiative=P, text="Set up CI"))
    assert call("task_update", initiative=P, task=done, status="done")["state"] == "applied"
    relied = _made(call("task", initiative=P, text="Generate PDF invoices"))
    assert call("task_update", initiative=P, task=relied, status="done")["state"] == "applied"
    user = _made(call("note", initiative=P, text="Invoices are the PDFs the invoice task set up."))
    assert (
        call("link", initiative=P, **{"from": {"id": user}, "to": {"id": relied}}, edge_type="refers_to", weight=0.8)[
            "state"
        ]
        == "applied"
    )
    late = _made(call("task", initiative=P, text="Rotate the webhook secret"))
    supported = _made(
        call("claim", initiative=P, text="EUR rounding needs banker's rounding", initial_status="supported")
    )
    wrong = _made(call("claim", initiative=P, text="Redis is needed for rate limiting", initial_status="refuted"))

    clock.advance(days=15)
    # Finished today: old by its last change, not by when it was written.
    assert call("task_update", initiative=P, task=late, status="done")["state"] == "applied"
    kinds, answer = _listed(call)
    for node in (released, expired, refuted, done, supported, wrong):
        assert "archivable" in kinds.get(node, set()), f"{node} is old and not in force: {kinds.get(node)}"
    assert kinds[relied] == {"settle_candidate"}
    assert "archivable" not in kinds.get(late, set())

    items = {
        (i["kind"], i["node"]): i for i in answer["data"]["items"] if i["kind"] in ("archivable", "settle_candidate")
    }
    for node in (done, wrong):
        fix = items[("archivable", node)]["fix"]
        assert call(fix["tool"], **fix["arguments"])["state"] == "applied"
        assert call("read", initiative=P, node={"id": node})["data"]["hits"][0]["layer"] == "cold"
    fix = items[("settle_candidate", relied)]["fix"]
    settled = call(fix["tool"], **fix["arguments"])
    assert settled["state"] == "applied", settled["issues"]
    after, _ = _listed(call)
    assert not any(after.get(node, set()) & {"archivable", "settle_candidate"} for node in (done, wrong, relied))
