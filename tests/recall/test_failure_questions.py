"""Questions about what went wrong find the failures (decision 471).

"What went wrong?", "what broke?", "which hypotheses were refuted?" are worded with words no
memory of a failure holds: they answered with nothing, or with the memories that share "last
time", even under `task_intent: debug_failure`. The failures come back: the refuted claim and the
note that refuted it, the memories tagged as failures (a bug, a version that breaks a build, an
incident), newest first. Both backends, through the tool registry."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.recall.helpers import hit_ids, made_id

P = "billing"


def _channels(answer: dict[str, Any]) -> set[str]:
    return {c["name"] for c in answer["data"]["retrieval_plan"]["channels"]}


def _project(service: Service) -> tuple[Any, dict[str, str]]:
    """A project's memories: routine work, notes that share "last time" with a question, and four
    failures — a claim refuted by a fix, a bug, a version that breaks the build, an incident."""
    run = build_server(service).registry.run

    def note(text: str, **extra: Any) -> str:
        return made_id(run("note", {"initiative": P, "text": text, **extra}))

    for i in range(6):
        note(f"Reviewed pull request {240 + i} for the invoice listing; merged after one round.")
    note("Last time we met, the team had a long lunch and talked about the holidays.")
    note("The sprint planning took more time than last time because of the new estimates.")
    made = {}
    made["claim"] = made_id(
        run(
            "claim", {"initiative": P, "text": "The webhook signature failures are caused by clock skew on the worker."}
        )
    )
    made["bug"] = note(
        "Bug: Stripe webhook signature verification fails with HTTP 400 in staging; the handler parsed "
        "the body as JSON before verifying it."
    )
    made["fix"] = note(
        "Fixed the webhook signature bug: verify against the raw request body before parsing. Clock skew was not the cause."
    )
    verdict = run(
        "verdict",
        {
            "initiative": P,
            "hypothesis": {"id": made["claim"]},
            "status": "refuted",
            "evidence": {"node": {"id": made["fix"]}},
        },
    )
    assert verdict["state"] == "applied", verdict
    made["breaks"] = note("Python 3.13 breaks the ReportLab wheels in the Docker build.", name="3.13 breaks reportlab")
    made["incident"] = note("Staging database ran out of connections for ten minutes.", tags=["incident"])
    for i in range(3):
        note(f"Reviewed pull request {250 + i} for the PDF export; merged.")
    return run, made


@pytest.mark.parametrize(
    "query",
    [
        "what went wrong?",
        "What went wrong last time?",
        "what broke",
        "what should I avoid?",
        "what problems did we run into?",
        "Qu'est-ce qui a mal tourné ?",
    ],
)
def test_a_question_about_what_went_wrong_finds_the_failures(service: Service, query: str) -> None:
    run, made = _project(service)
    answer = run("recall", {"initiatives": [P], "query": query})
    found = hit_ids(answer)
    failures = set(made.values())
    assert set(found[: len(failures)]) == failures, found
    newest_first = [made[k] for k in ("incident", "breaks", "fix", "bug", "claim")]
    assert found[: len(failures)] == newest_first, "newest first"
    assert "failures" in _channels(answer)


@pytest.mark.parametrize("query", [None, "what went wrong", "anything odd?"])
def test_debug_failure_brings_back_the_failures_when_no_word_finds_them(service: Service, query: str | None) -> None:
    """`debug_failure`'s priors only reweighted what another channel found: without a word that
    finds a memory it answered with nothing, or with the work in flight of a query-less recall."""
    run, made = _project(service)
    run("task", {"initiative": P, "text": "Write the API docs for the invoices endpoints"})
    args: dict[str, Any] = {"initiatives": [P], "task_intent": "debug_failure"}
    if query is not None:
        args["query"] = query
    found = hit_ids(run("recall", args))
    assert set(found[:5]) == set(made.values()), found


def test_which_hypotheses_were_refuted_lists_the_refuted_claim_and_what_refuted_it(service: Service) -> None:
    run, made = _project(service)
    found = hit_ids(run("recall", {"initiatives": [P], "query": "which hypotheses were refuted?"}))
    assert found[:2] == [made["claim"], made["fix"]], found


def test_a_failure_beside_words_of_a_subject_ranks_first_among_them(service: Service) -> None:
    """Asked about a subject ("what broke the webhook?"), the words' hits answer, its failures
    first; a question that only shares a word with a failure question is not one."""
    run, made = _project(service)
    for text in ("Documented the webhook signature header format.", "Rotated the webhook signature secret."):
        made_id(run("note", {"initiative": P, "text": text}))
    found = hit_ids(run("recall", {"initiatives": [P], "query": "what broke the webhook signature?"}))
    assert set(found[:3]) == {made["bug"], made["fix"], made["claim"]}, found
    answer = run("recall", {"initiatives": [P], "query": "what did the team talk about at lunch last time?"})
    assert "failures" not in _channels(answer)
