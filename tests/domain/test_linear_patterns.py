"""Patterns whose time was quadratic in the length of one word or in the number of dates (decision
414): a long word in a note, or a query naming many dates, is read in time linear in its length, and
ordinary text gives exactly what it gave before.

The hostile inputs are sized so that the old code could not finish within the suite's per-test
timeout (a minute or more), while the new takes a second or two at most; the `timeout`
marks only cap how long a regression takes to fail.
"""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaeru.domain import timefmt
from kaeru.domain.text import fold, identifier_words
from kaeru.domain.timefmt import date_windows
from kaeru.service import Service
from tests.recall.helpers import note, recall

# --- camelCase words ------------------------------------------------------------------------------

#: The camelCase patterns as they were: a token with a case change, and its words.
OLD_CAMEL_TOKEN = re.compile(r"[^\W_]*(?:[a-z][A-Z]|[A-Z]{2}[a-z])[^\W_]*")
CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def reference_camel_parts(text: str) -> list[str]:
    """The words of the camelCase tokens of `text`, found by the unanchored pattern."""
    parts: list[str] = []
    for raw in OLD_CAMEL_TOKEN.findall(text):
        found = CAMEL_PART.findall(raw)
        if len(found) > 1:
            parts.extend(fold(p) for p in found)
    return parts


#: Letters of both cases, digits, joiners and separators, and non-ASCII letters and marks (which are
#: no `[a-z]`/`[A-Z]` but are word characters, or break a word).
CAMEL_ALPHABET = [*"aAbBxXzZ09_.- \n,", "é", "É", "\u0301", "ß", "Ж", "ж", "İ", "ı", "\u212a", "ﬁ", "東", "١"]


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=st.sampled_from(CAMEL_ALPHABET), max_size=60) | st.text(max_size=40))
def test_camel_case_words_are_the_same_as_before(text: str) -> None:
    assert identifier_words(text)[0] == reference_camel_parts(text)


@pytest.mark.parametrize(
    "text",
    [
        "call getUserName, then os.path.join on user_name and HTTPServer",
        "parseJSON and XMLHttpRequest in iOS; ABC, abc, Abc, aBC, ABc",
        "getUser_id x.getName été-getÉté Жgetж 東getUser東 v2Api a1B",
    ],
)
def test_identifiers_in_prose_split_as_before(text: str) -> None:
    assert identifier_words(text)[0] == reference_camel_parts(text)


@pytest.mark.timeout(20)
def test_a_long_word_beside_a_camel_case_one_is_read_in_linear_time() -> None:
    """A 200,000-letter word: the unanchored pattern searched it again from each of its letters."""
    assert identifier_words("x" * 200_000 + " getUser") == (["get", "user"], [])
    assert identifier_words("deploy " + "Q" * 200_000 + "1") == ([], [])


@pytest.mark.timeout(20)
def test_notes_with_a_long_word_do_not_stall_the_recalls_that_score_them(service: Service) -> None:
    """A note with a long word made every later recall that scored it burn CPU for a minute or more
    (and, on a shared HTTP server, hold up everyone's calls). Recall reads a body over
    `LONG_BODY_CHARS` (50,000) through an excerpt, so each of these is just under it."""
    for i in range(5):
        note(service, f"ordinary note {i} about the release plan")
    long_ones = {note(service, f"the release plan {k} calls getUser on " + "x" * 49_000) for k in range(8)}
    answer = recall(service, "release plan getUser", limit=20)
    assert long_ones <= {h.node.id for h in answer.hits}


# --- dates in a query ------------------------------------------------------------------------------


def reference_date_windows(text: str, now: datetime | None = None, zone: tzinfo | None = None) -> list[tuple[str, str]]:
    """`date_windows` as it was: each match checked against every span taken before it."""
    t = timefmt
    found: list[tuple[int, tuple[str, str]]] = []
    dated_years: list[int] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return not any(a < span[1] and span[0] < b for a, b in taken)

    for form in t._DATE_FORMS:
        for match in form.finditer(text):
            span = match.span()
            if not free(span):
                continue
            raw_month = match.group("month").lower()
            month = int(raw_month) if raw_month.isdigit() else t._MONTHS[raw_month]
            year = int(match.group("year"))
            dated_years.append(year)
            day = match.groupdict().get("day")
            try:
                if day:
                    start = datetime(year, month, int(day), tzinfo=UTC) - t.DAY_SLACK
                    end = start + 2 * t.DAY_SLACK + timedelta(days=1)
                else:
                    start = datetime(year, month, 1, tzinfo=UTC)
                    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
            except ValueError:
                continue
            taken.append(span)
            found.append((span[0], (t.fmt(start), t.fmt(end - timedelta(microseconds=1)))))
    if now is not None:
        today = now.astimezone(zone).date()
        named_years = dated_years + [int(y) for y in t._NAMED_YEAR.findall(text)]
        latest = min(today, date(max(named_years), 12, 31)) if named_years else today
        for form in t._YEARLESS_FORMS:
            for match in form.finditer(text):
                span = match.span()
                if free(span) and (window := t._yearless(match, latest, zone)) is not None:
                    taken.append(span)
                    found.append((span[0], window))
        for match in t._WEEKDAY.finditer(text):
            span = match.span()
            if free(span):
                back = (today.weekday() - t._WEEKDAYS.index(match.group("weekday").lower())) % 7
                if back == 0 and match.group("which").lower() != "on":
                    back = 7
                with contextlib.suppress(ValueError, OverflowError):
                    day_ = today - timedelta(days=back)
                    found.append((span[0], t._day_bounds(day_, day_, zone)))
                    taken.append(span)
        for form, days in t._RELATIVE_FORMS:
            for match in form.finditer(text):
                span = match.span()
                if not free(span):
                    continue
                try:
                    first, last = days(match, today)
                    window = t._day_bounds(first, last, zone)
                except (ValueError, OverflowError):
                    continue
                taken.append(span)
                found.append((span[0], window))
    return [w for _, w in sorted(found)][:3]


#: Pieces of queries that name dates (some overlapping others, some no day at all), and words.
DATE_PIECES = [
    "2023-08-19", "2023-08", "2023-02-31", "1999-12", "2024-02-29", "19 August 2023", "19th of August, 2023",
    "August 19, 2023", "Aug. 19 2023", "August 2023", "May 2023", "June 14", "14 June", "3rd of March", "in June",
    "mid-May", "during july", "may 5", "sep 3", "31 April", "29 February", "last Tuesday", "on Friday",
    "this past sunday", "yesterday", "the day before yesterday", "today", "this morning", "3 days ago",
    "a week ago", "two weeks ago", "the past 7 days", "past week", "last week", "this week", "last month",
    "this month", "in 2021", "of 2019", "between", "and", "the", "call", "12", "2023", "-", ",", ":", "'s",
]  # fmt: skip
SEPARATORS = [" ", "", "-", ", ", " of ", "\n"]
ZONES: list[tzinfo | None] = [UTC, None, ZoneInfo("America/Los_Angeles"), ZoneInfo("Pacific/Kiritimati")]


@st.composite
def date_queries(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(DATE_PIECES), max_size=12))
    out = ""
    for piece in pieces:
        out += draw(st.sampled_from(SEPARATORS)) + piece
    return out


NOWS = (
    st.none()
    | st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC))
    | st.sampled_from([datetime(2026, 3, 5, 12, tzinfo=UTC), datetime(2024, 3, 1, 1, tzinfo=UTC)])
)


@settings(max_examples=1500, deadline=None)
@given(date_queries() | st.text(max_size=40), NOWS, st.sampled_from(ZONES))
def test_the_windows_a_query_names_are_the_same_as_before(text: str, now: datetime | None, zone: tzinfo | None) -> None:
    assert date_windows(text, now, zone) == reference_date_windows(text, now, zone)


@pytest.mark.timeout(20)
def test_a_query_naming_many_dates_is_read_in_linear_time() -> None:
    """70,000 dates: each was checked against every one taken before it (40,000 took the old code
    a minute of CPU on a loaded 2-core machine, so 70,000 about three: far past the timeout on a
    machine several times faster, where the new code takes a second or two)."""
    text = " ".join(f"{2000 + i % 25}-{i % 12 + 1:02d}-{i % 28 + 1:02d}" for i in range(70_000))
    windows = date_windows(text, datetime(2026, 3, 5, 12, tzinfo=UTC), UTC)
    assert [(a[:10], b[:10]) for a, b in windows] == [
        ("1999-12-31", "2000-01-02"),
        ("2001-02-01", "2001-02-03"),
        ("2002-03-02", "2002-03-04"),
    ]
