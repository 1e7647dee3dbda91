"""A question that names a day answers with that day, not with memories that say its words.

A probe of time semantics (session 51) found "what happened on 2 February" answered with January
notes — one of them only because it says "v1.2" — and "what happened yesterday" with a week-old note
that says "yesterday": the words that name the time were searched for, and the day's own memories
were the answer only when no word at all was found. And a day whose work was all on memories made
earlier (a task done, a note revised) answered "what happened yesterday" with nothing, said
complete. Both backends, through the tool registry."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kaeru.api.requests import parse
from kaeru.domain.timefmt import fmt
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from kaeru.storage.records import AuditRecord
from kaeru.storage.sql.changes import CHUNK
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.recall.test_day_overflow import _Clock, _ids

P = "billing"


class _Vault:
    def __init__(self, store: Store, vault: VaultSpec, start: datetime) -> None:
        self.clock = _Clock(start)
        self.run = build_server(Service(store, vault.settings(timezone="UTC"), clock=self.clock)).registry.run

    def at(self, day: str, hour: int = 10) -> None:
        self.clock.moment = datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC)

    def write(self, tool: str, args: dict[str, Any]) -> str:
        answer = self.run(tool, {"initiative": P, **args})
        assert answer["state"] == "applied", answer
        return str(answer["data"]["primary"]["id"])

    def recall(self, query: str, **more: Any) -> dict[str, Any]:
        answer = self.run("recall", {"initiatives": [P], "query": query, **more})
        assert answer["state"] == "ok", answer
        return answer


def test_a_named_day_answers_with_that_days_memories_not_with_its_number(store: Store, vault: VaultSpec) -> None:
    v = _Vault(store, vault, datetime(2027, 1, 3, 10, tzinfo=UTC))
    january = [
        v.write("note", {"text": "Released v1.2 of the invoice exporter."}),
        v.write("note", {"text": "Moved 2 cron jobs to the new scheduler."}),
    ]
    v.at("2027-01-12")
    v.write("note", {"text": "Reviewed the dunning emails."})
    v.at("2027-02-01")
    first = v.write("note", {"text": "Kicked off the VAT filing for Q4."})
    v.at("2027-02-02")
    second = v.write("note", {"text": "Paid the Hetzner invoice."})
    v.at("2027-03-05")

    answer = v.recall("what happened on 2 February")
    assert set(_ids(answer)) == {first, second}, "the window (1–3 February), none of January"
    assert answer["coverage"]["complete"] is True
    assert not set(january) & set(_ids(v.recall("what happened on 2 February", explain=True)))


def test_yesterday_is_a_day_not_a_word_to_search_for(store: Store, vault: VaultSpec) -> None:
    v = _Vault(store, vault, datetime(2027, 1, 1, 10, tzinfo=UTC))
    old = v.write("note", {"text": "Fixed what broke yesterday in the payment retries."})
    v.write("note", {"text": "What happened at the audit: nothing, it was postponed."})
    v.at("2027-01-07")
    made = v.write("note", {"text": "Rotated the Stripe webhook secret."})
    v.at("2027-01-08")

    for query in ("what happened yesterday", "what did we do yesterday?", "anything new yesterday"):
        answer = v.recall(query)
        assert _ids(answer) == [made], query
        assert answer["coverage"]["complete"] is True
    # Beside a subject's words, the day's memory that holds them comes first; the old note is at
    # most a neighbour of it in time, not a match of "yesterday".
    topic = v.recall("what did we do about the webhook yesterday", explain=True)
    assert _ids(topic)[:1] == [made]
    assert "lexical" not in topic["data"]["explain"].get(old, {})


def test_a_day_of_work_on_existing_memories_is_what_happened_that_day(store: Store, vault: VaultSpec) -> None:
    v = _Vault(store, vault, datetime(2027, 1, 4, 20, tzinfo=UTC))
    task = v.write("task", {"text": "Close the December books"})
    revised = v.write("note", {"text": "Payment gateway outage noticed at 23:30."})
    untouched = v.write("note", {"text": "The accountant visits on Fridays."})
    v.at("2027-01-06", 5)
    assert v.run("task_update", {"initiative": P, "task": task, "status": "done"})["state"] == "applied"
    body = "Payment gateway outage noticed at 23:30; root cause: an expired TLS certificate."
    assert v.run("revise", {"initiative": P, "node": revised, "patch": {"body": body}})["state"] == "applied"
    v.at("2027-01-07", 9)

    answer = v.recall("what happened yesterday")
    assert set(_ids(answer)) == {task, revised}, "the task done and the note revised that day"
    assert untouched not in _ids(answer)
    assert answer["coverage"]["complete"] is True
    v.at("2027-03-05")
    assert {task, revised} <= set(_ids(v.recall("what happened in January")))


def test_the_timeline_of_a_window_lists_the_memories_changed_in_it(store: Store, vault: VaultSpec) -> None:
    v = _Vault(store, vault, datetime(2027, 1, 4, 20, tzinfo=UTC))
    task = v.write("task", {"text": "Close the December books"})
    revised = v.write("note", {"text": "Payment gateway outage noticed at 23:30."})
    v.write("note", {"text": "The accountant visits on Fridays."})
    v.at("2027-01-06", 5)
    made = v.write("note", {"text": "Renewed the gateway's TLS certificate."})
    assert v.run("task_update", {"initiative": P, "task": task, "status": "done"})["state"] == "applied"
    body = "Payment gateway outage noticed at 23:30; root cause: an expired TLS certificate."
    assert v.run("revise", {"initiative": P, "node": revised, "patch": {"body": body}})["state"] == "applied"
    v.at("2027-01-06", 7)
    later = "Payment gateway outage noticed at 23:30; fixed the same night."
    assert v.run("revise", {"initiative": P, "node": revised, "patch": {"body": later}})["state"] == "applied"
    v.at("2027-01-08", 9)
    assert (
        v.run("revise", {"initiative": P, "node": revised, "patch": {"body": "Outage: see the postmortem."}})["state"]
        == "applied"
    )

    day = {"initiatives": [P], "since": "2027-01-06", "until": "2027-01-06"}
    answer = v.run("timeline", day)
    assert answer["state"] == "ok", answer
    hits = answer["data"]["hits"]
    assert [h["id"] for h in hits] == [made, task, revised], "in the order it happened"
    assert answer["data"]["total"] == 3 and answer["coverage"]["complete"] is True
    done, note = hits[1], hits[2]
    assert done["status"] == "done" and done["created_at"] < "2027-01-06" <= done["recorded_at"] < "2027-01-07"
    # The note as its last revision of that day, not as it reads now.
    assert note["body"] == later and note["created_at"] < "2027-01-06" <= note["recorded_at"] < "2027-01-07"

    seen, page = [], v.run("timeline", {**day, "limit": 1})
    while True:
        seen += [h["id"] for h in page["data"]["hits"]]
        if page["continuation"] is None:
            break
        page = v.run("timeline", page["continuation"]["next_arguments"])
    assert seen == [made, task, revised], "paged one by one, without a gap or a repeat"


def _old_records(store: Store, initiatives: list[str], count: int, at: datetime) -> None:
    """`count` audit records of writes long before `at`, in each of `initiatives` (which exist)."""
    with store.write() as session:
        ids = {i.name: i.id for i in session.all_initiatives()}
        for name in initiatives:
            for k in range(count):
                stamp = fmt(at - timedelta(days=20, seconds=k))
                session.append_audit(AuditRecord(stamp, "layer", "someone", None, ids[name], [], []))


def test_an_import_of_old_records_does_not_hide_the_changes_made_before_it(
    store: Store, vault: VaultSpec, tmp_path: Path
) -> None:
    # The log is walked newest first and stops after `CHUNK` records in a row older than the window.
    # An import appends the records it brings, stamped when they were first written, after every
    # earlier record: yesterday's revision lay below them, and "since yesterday" answered nothing,
    # complete. The import is stamped by the machine's clock, so this vault's days are this week's.
    root = tmp_path / "exports"
    now = datetime.now(UTC).replace(microsecond=0)
    source = new_vault(vault.backend, tmp_path)
    other = open_store(source.settings())
    try:
        old = Service(other, source.settings(), clock=_Clock(now - timedelta(days=400)))
        build_server(old).registry.run("note", {"initiative": P, "text": "A note from the old vault."})
        _old_records(other, [P], CHUNK + 50, now - timedelta(days=300))
        export = parse("archive", {"action": "export", "path": "old.amg"})
        assert archive.export(other, replace(source.settings(), export_root=root), export).state == "applied"
    finally:
        other.close()
        drop_vault(source)

    v = _Vault(store, vault, now - timedelta(days=3))
    plan = v.write("note", {"text": "Deploy on Tuesday."})
    v.clock.moment = now - timedelta(days=1)
    assert (
        v.run("revise", {"initiative": P, "node": plan, "patch": {"body": "Deploy on Wednesday."}})["state"]
        == "applied"
    )
    v.clock.moment = now
    imported = archive.import_(
        store, replace(vault.settings(), export_root=root), parse("archive", {"action": "import", "path": "old.amg"})
    )
    assert imported.state == "applied"
    since = (now - timedelta(days=1, hours=1)).isoformat()
    answer = v.run("timeline", {"initiatives": [P], "since": since})
    assert _ids(answer) == [plan] and answer["coverage"]["complete"] is True, answer


def test_every_initiative_of_a_wide_scope_is_read_for_its_changes(store: Store, vault: VaultSpec) -> None:
    # Each initiative's walk ends with up to `CHUNK` records older than the window, and those were
    # charged to the one budget of the whole scope: over 21 initiatives with a long past, yesterday's
    # change in the last one was missed, and the answer said it might be.
    v = _Vault(store, vault, datetime(2027, 1, 1, 10, tzinfo=UTC))
    names = [f"proj{i:02d}" for i in range(21)]
    notes = {n: v.write("note", {"initiative": n, "text": f"The release checklist of {n}."}) for n in names}
    _old_records(store, names, CHUNK + 10, datetime(2027, 1, 14, tzinfo=UTC))
    v.at("2027-01-13")
    for n in (names[5], names[-1]):
        assert (
            v.run("revise", {"initiative": n, "node": notes[n], "patch": {"body": "Checklist, revised."}})["state"]
            == "applied"
        )
    v.at("2027-01-14")
    answer = v.run("timeline", {"initiatives": names, "since": "2027-01-13", "until": "2027-01-13"})
    assert _ids(answer) == [notes[names[5]], notes[names[-1]]] and answer["coverage"]["complete"] is True, answer
    found = v.run("recall", {"initiatives": names, "query": "what happened yesterday"})
    assert set(_ids(found)) == {notes[names[5]], notes[names[-1]]} and found["coverage"]["complete"] is True


def test_a_date_whose_days_hold_no_memory_is_searched_for_as_words(store: Store, vault: VaultSpec) -> None:
    """A date may be what a memory says rather than when it was written ("the budget holds until
    April 9", asked the next year): its days hold nothing, so its words are searched for."""
    v = _Vault(store, vault, datetime(2027, 1, 10, 10, tzinfo=UTC))
    budget = v.write("note", {"text": "The patent budget holds until April 9."})
    v.write("note", {"text": "Paid the patent attorney's retainer."})
    v.at("2027-03-05")
    assert _ids(v.recall("what is the patent budget until April 9"))[:1] == [budget]


def test_the_words_that_say_when() -> None:
    from kaeru.domain.timefmt import date_windows, without_dates

    def words(text: str, held: set[tuple[str, str]] | None = None) -> str:
        return " ".join(without_dates(text, now, UTC, held=held).split())

    now = datetime(2027, 3, 5, 10, tzinfo=UTC)
    assert words("what happened on 2 February") == "what happened on"
    text = "the plan until April 9, and what changed yesterday"
    # A relative phrase is always a time; a date only when its days hold memories (`held`).
    assert words(text, held=set()) == "the plan until April 9, and what changed"
    april, _ = date_windows(text, now, UTC)
    assert words(text, held={april}) == "the plan until , and what changed"
