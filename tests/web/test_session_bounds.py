"""The viewer's sign-in table is bounded per token as well as in all (decision 411).

It was bounded in all only, least recently used dropped first: one token's holder (a script, a reader
with a read-only token) signing in `SESSIONS_KEPT` times signed every other person out, whose page then
said "you signed out, it went unused for 12 hours, or it is from an earlier run" — none of it true.
Now a token's sign-ins past `SESSIONS_PER_TOKEN` end that token's own least recently used session, a
full table still ends the least recently used of all, and a browser whose session was dropped for room
is told which of the two happened. Over HTTP against a real `kaeru serve --http` (both backends), and
on the table itself where small bounds make the order plain. The constants are read from the module at
run time (`web_sessions.X`), so each test states the behaviour whatever the bounds are set to.
"""

from __future__ import annotations

import random
import re
from urllib.parse import urlencode

import pytest

from kaeru.service import Service, grants
from kaeru.storage.factory import open_store
from kaeru.web import sessions as web_sessions
from kaeru.web.app import ENDED
from kaeru.web.sessions import Sessions
from tests.web.conftest import Site
from tests.web.test_viewer_security import ask

TOKEN = "kaeru_9xqZT0kenForTheBoundTests-abcdefghijklmnopq"
OTHER = "kaeru_9xqZT0kenOfSomeoneElse-abcdefghijklmnopqrstu"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- the table ------------------------------------------------------------------------------------
def test_one_token_signing_in_past_the_whole_bound_leaves_another_tokens_session() -> None:
    sessions = Sessions(clock=Clock())
    theirs, _ = sessions.open(OTHER)
    for _ in range(web_sessions.SESSIONS_KEPT + 1):
        sessions.open(TOKEN)
    assert sessions.find(theirs) is not None, "another token's sign-ins ended this one"


def test_a_token_at_its_bound_ends_its_own_least_recently_used_session() -> None:
    sessions = Sessions(kept=50, per_token=3, clock=Clock())
    theirs, _ = sessions.open(OTHER)
    ids = [sessions.open(TOKEN)[0] for _ in range(3)]
    assert sessions.find(ids[0]) is not None  # used again: ids[1] is now its least recently used
    newest, _ = sessions.open(TOKEN)
    assert len(sessions) == 4
    assert sessions.find(ids[1]) is None and sessions.why_ended(ids[1]) == "token"
    assert all(sessions.find(i) is not None for i in (ids[0], ids[2], newest, theirs))
    assert sessions.why_ended(theirs) is None


def test_a_full_table_of_many_tokens_ends_the_least_recently_used_of_all() -> None:
    sessions = Sessions(kept=4, per_token=2, clock=Clock())
    first, _ = sessions.open("token-a")
    second, _ = sessions.open("token-b")
    sessions.open("token-c")
    sessions.open("token-c")
    assert sessions.find(first) is not None  # used again: token-b's is the least recently used of all
    sessions.open("token-d")
    assert len(sessions) == 4
    assert sessions.find(second) is None and sessions.why_ended(second) == "room"
    assert sessions.find(first) is not None


def test_only_a_session_dropped_for_room_has_a_reason() -> None:
    """Signed out, idle, or never opened here: the general message, which names every way."""
    clock = Clock()
    sessions = Sessions(clock=clock)
    signed_out, _ = sessions.open(TOKEN)
    idle, _ = sessions.open(OTHER)
    found = sessions.find(signed_out)
    assert found is not None
    sessions.close(found.key)
    clock.now += web_sessions.IDLE_SECONDS + 1
    assert sessions.find(idle) is None and len(sessions) == 0
    for secret in (signed_out, idle, "an id this viewer never gave"):
        assert sessions.why_ended(secret) is None
    assert sessions.ended == 0


def test_the_table_and_its_record_of_drops_stay_bounded() -> None:
    sessions = Sessions(kept=12, per_token=3, ended_kept=5, clock=Clock())
    shuffled = random.Random(7)
    held: dict[str, list[str]] = {f"token-{n}": [] for n in range(8)}
    for _ in range(400):
        token = shuffled.choice(list(held))
        held[token].append(sessions.open(token)[0])
        if shuffled.random() < 0.3:
            sessions.find(shuffled.choice(held[token]))
        assert len(sessions) <= 12 and sessions.ended <= 5
    for token, ids in held.items():
        assert sum(sessions.find(i) is not None for i in ids) <= 3, token
    assert len(sessions) == 12, "the table is full, not emptied by the drops"


def test_what_the_table_keeps_of_a_drop_is_no_token_and_no_id() -> None:
    """A drop's record is keyed like the table, by a digest of the id: nothing in it can be replayed."""
    sessions = Sessions(kept=3, per_token=1, clock=Clock())
    dropped, _ = sessions.open(TOKEN)
    newer, _ = sessions.open(TOKEN)
    assert sessions.why_ended(dropped) == "token"
    kept = repr(vars(sessions))
    for secret in (TOKEN, dropped, newer):
        assert secret not in kept


def test_the_bounds_leave_room_for_many_tokens() -> None:
    assert 1 < web_sessions.SESSIONS_PER_TOKEN < web_sessions.SESSIONS_KEPT
    assert web_sessions.SESSIONS_KEPT // web_sessions.SESSIONS_PER_TOKEN >= 32


# --- over HTTP --------------------------------------------------------------------------------------
def signed_in(site: Site, token: str) -> str:
    """One sign-in over HTTP as the form does, from a browser with no cookie: its `Cookie` header."""
    status, headers, _ = ask(f"{site.base}/ui/login", {"Origin": site.base}, urlencode({"token": token}).encode())
    assert status == 303, status
    cookie: str = headers["Set-Cookie"].split(";")[0]
    return cookie


def home(site: Site, cookie: str) -> tuple[int, str, str]:
    """The viewer's first page for a cookie: (status, the alert it shows, the header's `Set-Cookie`)."""
    status, headers, body = ask(f"{site.base}/ui/", {"Cookie": cookie})
    alert = re.search(r'<p class="error" role="alert">([^<]*)</p>', body)
    return status, alert.group(1) if alert else "", headers.get("Set-Cookie", "")


def who(site: Site, cookie: str) -> str:
    _, _, body = ask(f"{site.base}/ui/", {"Cookie": cookie})
    found = re.search(r'class="who">([^<]*)<', body)
    return found.group(1) if found else ""


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_reader_signing_in_over_and_over_signs_only_itself_out(site: Site) -> None:
    """Alice is signed in; a holder of the read-only token signs in more times than the viewer keeps
    sign-ins in all. Alice stays signed in; the reader's first sign-in is the one that ended, and its
    page says so, not that its browser signed out or left it unused."""
    alice = signed_in(site, site.fixture.alice)
    assert who(site, alice) == "as alice"
    first = signed_in(site, site.fixture.rita)
    for _ in range(web_sessions.SESSIONS_KEPT):
        last = signed_in(site, site.fixture.rita)
    assert home(site, alice)[0] == 200 and who(site, alice) == "as alice"
    assert home(site, last)[0] == 200
    status, alert, cleared = home(site, first)
    assert status == 401
    assert "more sign-ins were opened with the same token" in alert, alert
    assert "you signed out" not in alert and "unused" not in alert
    assert cleared.startswith(first.split("=")[0] + '=""'), "the ended session's cookie is cleared"


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_session_ended_to_make_room_for_many_tokens_is_told_so(site: Site) -> None:
    """When many tokens each sign in up to their own bound, the table fills and the least recently
    used of all ends: that browser is told the viewer made room, not that it signed out. One token
    more than fill the table, so Alice's (older than all of theirs) ends whatever earlier tests left."""
    per_token = web_sessions.SESSIONS_PER_TOKEN
    alice = signed_in(site, site.fixture.alice)
    store = open_store(site.vault.settings(actor="seeder"))
    try:
        service = Service(store, site.vault.settings(actor="seeder"))
        tokens = [
            grants.add_token(service.rt, f"room{n}-{site.vault.backend}", None, True, "test")[0]
            for n in range(web_sessions.SESSIONS_KEPT // per_token + 1)
        ]
    finally:
        store.close()
    newest = [[signed_in(site, token) for _ in range(per_token)][-1] for token in tokens]
    status, alert, _ = home(site, alice)
    assert status == 401
    assert "keeps at most" in alert and "in all" in alert, alert
    assert "you signed out" not in alert
    assert all(home(site, cookie)[0] == 200 for cookie in newest[-3:])


def test_the_general_message_names_a_drop_whose_reason_was_not_kept() -> None:
    """A drop's record is bounded: a browser back after many more drops gets the general message,
    which must then still be true."""
    assert "to make room for newer sign-ins" in ENDED
