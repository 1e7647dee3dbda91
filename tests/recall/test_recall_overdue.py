"""recall says which of its hits are overdue, as `context` does (session 55's re-entry probe).

Asked "what is left to do?", recall listed the overdue task first but its line read "due
2027-01-08", the line `search` gives (which does not know today), while `context` said "overdue,
due 2027-01-08": a client with only the text had to know today to tell. Now recall's `overdue`
holds the page's tasks overdue today, and its text says so on the task's line. Both backends,
through the tool registry.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kaeru.mcp.render import compact
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Clock, make_call

P = "billing"


def _line(text: str, name: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith(f"- {name} · ")]
    return line


def test_recall_says_which_task_is_overdue(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2027, 1, 4, 10, 0, tzinfo=UTC))
    call = make_call(Service(store, vault.settings(timezone="UTC"), clock=clock))
    late = call("task", initiative=P, name="invoices", text="Generate the December invoices", due="2027-01-08")
    call("task", initiative=P, name="audit", text="Prepare the audit pack for the invoices", due="2027-03-15")
    call("task", initiative=P, name="refunds", text="Send the invoices refunds", due="2027-01-06", status="done")
    clock.advance(days=30)  # 2027-02-03

    for query in ("what is left to do", "invoices"):
        envelope = call("recall", initiatives=[P], query=query)
        assert envelope["data"]["overdue"] == [late["data"]["primary"]["id"]], (query, envelope["data"])
        text = compact(envelope)
        assert _line(text, "invoices").endswith(" · status=open · overdue, due 2027-01-08"), (query, text)
        assert _line(text, "audit").endswith(" · status=open · due 2027-03-15"), (query, text)
        if query == "invoices":  # found by its words, a closed task is not overdue, whatever its due day
            assert " · status=done · due 2027-01-06" in _line(text, "refunds"), text
        assert '"overdue":' not in text  # said on the task's line, not listed again

    # Nothing overdue: no list.
    call("task_update", initiative=P, task=late["data"]["primary"]["id"], status="done")
    assert "overdue" not in call("recall", initiatives=[P], query="invoices")["data"]
