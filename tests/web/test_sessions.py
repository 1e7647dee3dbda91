"""The viewer's sign-in sessions and edit notices (`web/sessions.py`), in process: a session is found by
the random id its cookie holds, never holds the token in the clear, ends when signed out, when unused
for `IDLE_SECONDS`, and the oldest is dropped past `SESSIONS_KEPT` (the bound per token, and what a
dropped session's page says: `test_session_bounds.py`); an edit's notice is found only by its id and
only by whoever made the edit. The clock is the table's own parameter, moved by hand."""

from __future__ import annotations

from kaeru.web.app import Backend, ViewerApp, ui_app
from kaeru.web.sessions import IDLE_SECONDS, Notices, Sessions

TOKEN = "kaeru_9xqZT0kenForTheSessionTests-abcdefghijklmnop"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_is_found_by_its_cookies_id_and_does_not_hold_the_token() -> None:
    sessions = Sessions(clock=Clock())
    secret, session = sessions.open(TOKEN)
    assert TOKEN not in secret and len(secret) >= 40
    kept = repr(vars(sessions)) + repr(vars(session))
    assert TOKEN not in kept and TOKEN.encode() not in session.sealed and secret not in kept
    found = sessions.find(secret)
    assert found is not None and found.token == TOKEN and found.session is session
    assert sessions.find(secret[:-1] + ("A" if secret[-1] != "A" else "B")) is None
    assert sessions.find("") is None


def test_signing_out_ends_a_session_and_only_that_one() -> None:
    sessions = Sessions(clock=Clock())
    first, _ = sessions.open(TOKEN)
    second, _ = sessions.open(TOKEN)
    found = sessions.find(first)
    assert found is not None
    sessions.close(found.key)
    assert sessions.find(first) is None and sessions.find(second) is not None


def test_a_session_unused_for_the_idle_time_ends_and_one_in_use_stays() -> None:
    clock = Clock()
    sessions = Sessions(clock=clock)
    used, _ = sessions.open(TOKEN)
    left, _ = sessions.open(TOKEN)
    clock.now += IDLE_SECONDS - 1
    assert sessions.find(used) is not None
    clock.now += 2
    assert sessions.find(left) is None, "unused for longer than the idle time"
    assert sessions.find(used) is not None, "used one second within it"
    assert len(sessions) == 1


def test_the_table_is_bounded_and_drops_the_least_recently_used() -> None:
    sessions = Sessions(kept=3, clock=Clock())
    ids = [sessions.open(TOKEN)[0] for _ in range(3)]
    assert sessions.find(ids[0]) is not None  # used again: now the most recent
    newest, _ = sessions.open(TOKEN)
    assert len(sessions) == 3
    assert sessions.find(ids[1]) is None
    assert all(sessions.find(i) is not None for i in (ids[0], ids[2], newest))


def test_each_viewer_keeps_its_own_sessions() -> None:
    """The tables belong to the app object (one per server), not to the module."""

    async def never(token: str) -> None:
        return None

    async def closed(scope: object) -> bool:
        return True

    async def call(tool: str, args: dict[str, object]) -> dict[str, object]:
        return {"state": "ok"}

    backend = Backend(call=call, verify=never, required=closed, allowed_hosts=[], allowed_origins=[])
    one, other = ui_app(backend), ui_app(backend)
    assert isinstance(one, ViewerApp) and one.sessions is not other.sessions and one.notices is not other.notices
    secret, _ = one.sessions.open(TOKEN)
    assert other.sessions.find(secret) is None


def test_a_notice_is_found_by_its_id_for_its_owner_only() -> None:
    notices = Notices(kept=2)
    first = notices.add("flag: applied", False, "owner-a")
    found = notices.find(first, "owner-a")
    assert found is not None and (found.text, found.refused) == ("flag: applied", False)
    assert notices.find(first, "owner-b") is None
    assert notices.find("Your sign-in expired", "owner-a") is None
    notices.add("layer: applied", False, "owner-a")
    notices.add("move: applied", False, "owner-a")
    assert notices.find(first, "owner-a") is None, "the oldest is dropped past the bound"
