"""`task` and `task_update` refused a status no column has with the columns alone, while `search`
offered the close one for the same value ("did you mean 'in-progress'?"): one hint now, and one
that sees past case (`Done`, `Open`) since column keys are lower case."""

from __future__ import annotations

from typing import Any

import pytest

from tests.working.conftest import Call


def _refused(answer: dict[str, Any]) -> str:
    assert answer["state"] == "rejected", answer
    [issue] = answer["issues"]
    assert (issue["code"], issue["field"]) == ("invalid_argument", "status"), issue
    return str(issue["message"])


@pytest.mark.parametrize(("sent", "meant"), [("in_progress", "in-progress"), ("Done", "done"), ("Open", "open")])
def test_a_status_off_the_board_is_offered_the_column_it_most_likely_meant(call: Call, sent: str, meant: str) -> None:
    made = call("task", initiative="g", text="migrate the ledger")
    assert made["state"] == "applied", made
    moved = _refused(call("task_update", initiative="g", task=made["data"]["primary"]["id"], status=sent))
    assert f"did you mean {meant!r}?" in moved and "columns are: open, in-progress, done" in moved, moved
    created = _refused(call("task", initiative="g", text="another", status=sent))
    assert f"did you mean {meant!r}?" in created, created


def test_a_status_close_to_no_column_gets_no_guess(call: Call) -> None:
    made = call("task", initiative="g", text="migrate the ledger")
    said = _refused(call("task_update", initiative="g", task=made["data"]["primary"]["id"], status="blocked"))
    assert "did you mean" not in said and "columns are: open, in-progress, done" in said, said


@pytest.mark.parametrize("sent", ["null", "None"])
def test_a_due_of_the_word_null_is_told_that_json_null_clears_it(call: Call, sent: str) -> None:
    made = call("task", initiative="g", text="migrate the ledger", due="3d")
    answer = call("task_update", initiative="g", task=made["data"]["primary"]["id"], due=sent)
    assert answer["state"] == "rejected", answer
    [issue] = answer["issues"]
    assert issue["field"] == "due" and "send null (JSON null, not a text)" in issue["message"], issue
    cleared = call("task_update", initiative="g", task=made["data"]["primary"]["id"], due=None)
    assert cleared["state"] == "applied", cleared
