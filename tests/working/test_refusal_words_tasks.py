"""The words of a task's refusals, as the next call is made from them."""

from __future__ import annotations

import pytest

from tests.working.conftest import Call


@pytest.mark.parametrize("sent", ["null", "None"])
def test_a_new_task_with_the_word_null_for_due_is_told_to_leave_due_out(call: Call, sent: str) -> None:
    """`task` takes no null due (only `task_update` does, to clear one): told "send null", the
    next call was refused again."""
    answer = call("task", initiative="g", text="migrate the ledger", due=sent)
    assert answer["state"] == "rejected", answer
    [issue] = answer["issues"]
    assert issue["field"] == "due" and "a new task leaves due out" in issue["message"], issue
    assert call("task", initiative="g", text="migrate the ledger")["state"] == "applied"


def test_a_status_off_the_board_reads_as_one_sentence(call: Call) -> None:
    """The hint came before the columns: "did you mean 'done'?; this board's columns are: …"."""
    said = call("task", initiative="g", text="another", status="Done")["issues"][0]["message"]
    assert "?;" not in said and said.endswith("columns are: open, in-progress, done; did you mean 'done'?"), said
