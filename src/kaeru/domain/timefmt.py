"""Timestamps: one canonical text form (UTC, RFC 3339, microseconds) and parsing of `at` values."""

from __future__ import annotations

import contextlib
import re
from bisect import bisect_left
from collections.abc import Callable, Container, Iterator
from datetime import UTC, date, datetime, timedelta, tzinfo

#: A time ago: `5m`, `2d`, `2d ago`, `3 days ago`, `1 week` (the tool descriptions say "2d ago", and
#: an agent writes what it reads: decision 284). `m` is minutes; months and years are no offset.
_RELATIVE = re.compile(
    r"^\s*(\d+)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)(?:\s*ago)?\s*$", re.IGNORECASE
)
#: A calendar day, `YYYY-MM-DD` (ASCII digits: `\\d` also matches full-width ones, which no parser reads).
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: A week with no day (`2026-W10`): ISO 8601 parsers read it as its Monday, which no one meant.
_WEEK = re.compile(r"[0-9]{4}-?W[0-9]{2}", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
#: What a value that is no moment is told to be instead.
MOMENT_FORMS = (
    "an RFC 3339 time (2026-03-03T10:00:00Z), a date (2026-03-03), a time ago (30m, 2h, 3d, 1w, 2 days ago) or now"
)


def fmt(moment: datetime) -> str:
    """`2026-11-30T04:26:37.123456Z` — fixed width, so text order is time order."""
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    # `isoformat` pads the year to four digits, as RFC 3339 and text order need (decision 216: the
    # years before 1000 were written by `strftime`, unpadded), for a third of `strftime`'s cost.
    return moment.isoformat(timespec="microseconds")[:-6] + "Z"


def parse_ts(text: str) -> datetime:
    """Parse a stored canonical timestamp; one with a year of fewer than four digits, as kaeru wrote
    the years before 1000 until decision 216, is read as that year."""
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        if (year := _SHORT_YEAR.match(text)) is None:
            raise
        return parse_ts(year[1].zfill(4) + text[year.end(1) :])


#: A stored timestamp whose year kaeru wrote unpadded (before decision 216).
_SHORT_YEAR = re.compile(r"^(\d{1,3})-\d{2}-\d{2}T")


def parse_moment(text: str, now: datetime, day_start: bool = False, zone: tzinfo | None = UTC) -> datetime:
    """An `at`/`as_of`/`since`/`until`/`occurred_at` value: RFC 3339, a date (its end: as it was
    that day; with `day_start`, its start: a window from that day on, decision 285), or a time ago
    like `5m`, `2d ago`. A date is a day on the calendar of `zone` and a time without an offset a
    wall time there — the user's (None: the machine's own zone; decision 342) — as a due date is.

    Raises:
        ValueError: the text is none of these, or names a moment outside years 1–9999 (in UTC).
    """
    try:
        return _moment(text, now, day_start, zone)
    except OverflowError as exc:  # `10000000d` ago, or 9999-12-31T23:59-05:00 (past 9999 in UTC)
        raise ValueError(f"{text.strip()!r} is outside the years 1 to 9999 (UTC)") from exc


#: The earliest time zone's day begins this long before UTC's (UTC+14).
_EARLIEST_ZONE = timedelta(hours=14)


def parse_occurred(text: str, now: datetime, zone: tzinfo | None = UTC) -> datetime:
    """When something happened (`occurred_at`): `parse_moment`'s moment, except that a date which has
    begun somewhere (its day starts at most `_EARLIEST_ZONE` after now) but not ended is today for
    its writer, so it is now — its end lies ahead, and a note written later today would rank as
    older (decision 286)."""
    moment = parse_moment(text, now, zone=zone)
    if moment > now and _is_day(text) and parse_moment(text, now, True, zone) <= now + _EARLIEST_ZONE:
        return now
    return moment


def is_time_ago(text: str) -> bool:
    """Whether `text` is a time ago (`_RELATIVE`), which a future day (`due`) is not."""
    return _RELATIVE.match(text) is not None


def _is_day(text: str) -> bool:
    """Whether `text` is a calendar day with no time: `2026-03-03`, and the other ISO 8601 spellings
    of one (`20260303`, `2026-W10-2`) — which were read as that day's first moment in UTC."""
    cleaned = text.strip()
    if not cleaned.isascii() or _WEEK.fullmatch(cleaned):
        return False
    try:
        date.fromisoformat(cleaned)
    except ValueError:
        return False
    return True


def _local(naive: datetime, zone: tzinfo | None) -> datetime:
    """A wall time on the calendar of `zone` (None: the machine's own)."""
    if zone is not None:
        return naive.replace(tzinfo=zone)
    try:
        return naive.astimezone()
    except (OverflowError, ValueError):
        # CPython looks the machine's zone up a day to either side, which the calendar's first day
        # (0001-01-01) has not: `since: 0001-01-01` was "not a moment". The next day's offset stands in.
        return naive.replace(tzinfo=(naive + timedelta(days=1)).astimezone().tzinfo)


def _midnight(day: date, zone: tzinfo | None) -> datetime:
    """The first moment of `day` on the calendar of `zone` (None: the machine's own)."""
    return _local(datetime(day.year, day.month, day.day), zone)


def _day_end(day: date, zone: tzinfo | None) -> datetime:
    """The last moment of `day` there: built as such, not as the next midnight less a microsecond, which
    has no next day for 9999-12-31 (`until: 9999-12-31` was refused as past the calendar)."""
    return _local(datetime(day.year, day.month, day.day, 23, 59, 59, 999999), zone)


#: More digits than any time ago inside the calendar has (9999 years is ~3.2e17 microseconds).
_MOST_DIGITS = 20


def _moment(text: str, now: datetime, day_start: bool, zone: tzinfo | None) -> datetime:
    if text.strip().lower() == "now":  # `read --at now` was refused: the moment the call is made
        return now
    rel = _RELATIVE.match(text)
    if rel:
        if len(rel.group(1)) > _MOST_DIGITS:  # past the calendar in any unit; and `int` refuses
            raise OverflowError(text)  # thousands of digits in Python's own words (decision 443)
        return now - timedelta(**{_UNITS[rel.group(2)[0].lower()]: int(rel.group(1))})
    cleaned = text.strip()
    try:
        if _is_day(cleaned):
            day = date.fromisoformat(cleaned)
            try:
                return (_midnight(day, zone) if day_start else _day_end(day, zone)).astimezone(UTC)
            except OverflowError:  # 9999-12-31 west of UTC ends past the calendar (0001-01-01 east
                # of it begins before it): the calendar's own end (start)
                return (datetime.min if day_start else datetime.max).replace(tzinfo=UTC)
        if not cleaned.isascii() or _WEEK.fullmatch(cleaned) or _DATE.fullmatch(cleaned):
            raise ValueError("not ISO 8601 in ASCII digits" if not cleaned.isascii() else "not a calendar day")
        if cleaned.endswith(("z", "Z")):
            cleaned = cleaned[:-1] + "+00:00"
        moment = datetime.fromisoformat(cleaned)
    except ValueError as exc:  # Python's own words ("Invalid isoformat string") tell a caller nothing
        raise ValueError(f"{text.strip()!r} is not a moment{off_calendar(text)}: give {MOMENT_FORMS}") from exc
    if moment.tzinfo is None:  # a wall time: the user's, as a due time without an offset is
        moment = _local(moment, zone)
    return moment.astimezone(UTC)


def parse_date(text: str) -> date:
    """A calendar date `YYYY-MM-DD`.

    Raises:
        ValueError: not a valid date.
    """
    if not _DATE.fullmatch(text.strip()):
        raise ValueError(f"expected a date YYYY-MM-DD, got {text!r}")
    return date.fromisoformat(text.strip())


_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
#: Calendar dates a query can name, most specific first: ISO days and months, "19 August 2023",
#: "August 19, 2023", "August 2023". A bare year or a month without a year names no window.
_DATE_FORMS = (
    re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)(?:-(?P<day>[0-3]\d))?\b"),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
)
#: A named day also admits the day before and after (time zones, "that evening", late notes).
DAY_SLACK = timedelta(days=1)
#: Days and months a query names without their year ("the June 14 call", "on 10 March", "camping in
#: June"): the latest such day or month up to the user's today, as a person means them. Tried after
#: the dated forms, so "June 14, 2023" keeps its year; a month alone only after a preposition; in
#: lower case only a full name that is no other word (decision 345).
_YEARLESS_FORMS = (
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?![\w-])", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+{_DAY}(?![\w:.,-]\d)\b", re.IGNORECASE),
    re.compile(rf"\b(?:in|during|since|until|through|by|early|late|mid-?)\s*{_MONTH}(?![\w-])", re.IGNORECASE),
)
#: Month names a query may write in lower case without a year: the full ones that are no other word
#: ("sep", "dec", "oct" are separators, decimal and octal far more often than months).
_LOWER_CASE_MONTHS = frozenset(
    {"january", "february", "april", "june", "july", "august", "september", "october", "november", "december"}
)
#: A year the query names for its days: after a preposition ("in 2023"), or in a dated form.
_NAMED_YEAR = re.compile(r"\b(?:in|of|during|since|until|through|by)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: "last Tuesday", "on Friday": the latest such weekday before (`last`) or up to (`on`) today.
_WEEKDAY = re.compile(rf"\b(?P<which>last|on|this past)\s+(?P<weekday>{'|'.join(_WEEKDAYS)})\b(?!['’]s)", re.IGNORECASE)


#: How many a relative phrase counts ("3 days ago", "a week ago", "two weeks ago").
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_COUNT = r"(?P<count>\d{1,3}|" + "|".join(_COUNTS) + r")"


def _count(match: re.Match[str]) -> int:
    raw = match.group("count").lower()
    return int(raw) if raw.isdigit() else _COUNTS[raw]


def _month_start(day: date, back: int = 0) -> date:
    month = day.month - back
    return date(day.year + (month - 1) // 12, (month - 1) % 12 + 1, 1)


#: Days a query names relative to the user's today, as (first, last) days of the user's calendar
#: (decision 288), the longest phrase first: "the day before yesterday" holds "yesterday".
_RELATIVE_FORMS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], date], tuple[date, date]]], ...] = (
    (re.compile(r"\bthe day before yesterday\b", re.I), lambda m, t: (t - timedelta(days=2), t - timedelta(days=2))),
    (re.compile(r"\byesterday\b", re.I), lambda m, t: (t - timedelta(days=1), t - timedelta(days=1))),
    (re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.I), lambda m, t: (t, t)),
    (re.compile(rf"\b{_COUNT} days? ago\b", re.I), lambda m, t: (t - timedelta(days=_count(m)),) * 2),
    (
        re.compile(rf"\b{_COUNT} weeks? ago\b", re.I),
        lambda m, t: (t - timedelta(weeks=_count(m), days=3), t - timedelta(weeks=_count(m), days=-3)),
    ),
    (
        re.compile(r"\b(?:the )?(?:past|last) (?:7|seven) days\b|\bpast week\b", re.I),
        lambda m, t: (t - timedelta(days=7), t),
    ),
    (
        re.compile(r"\blast week\b", re.I),
        lambda m, t: (t - timedelta(days=t.weekday() + 7), t - timedelta(days=t.weekday() + 1)),
    ),
    (re.compile(r"\bthis week\b", re.I), lambda m, t: (t - timedelta(days=t.weekday()), t)),
    (re.compile(r"\blast month\b", re.I), lambda m, t: (_month_start(t, 1), _month_start(t) - timedelta(days=1))),
    (re.compile(r"\bthis month\b", re.I), lambda m, t: (_month_start(t), t)),
)


def _day_bounds(first: date, last: date, zone: tzinfo | None) -> tuple[str, str]:
    """The canonical `since`/`until` of the user's days `first`..`last` (their zone's midnights;
    None: the machine's own zone)."""

    return fmt(_midnight(first, zone)), fmt(_day_end(last, zone))


def _yearless(match: re.Match[str], today: date, zone: tzinfo | None) -> tuple[str, str] | None:
    """The window of a day or month named without its year: the latest one up to `today` (a day with
    `DAY_SLACK` either side, as a dated day has); None for no such day (31 April)."""
    word = match.group("month")
    if not word[0].isupper() and word.lower() not in _LOWER_CASE_MONTHS:  # "we may 2 …", "split by sep"
        return None
    month = _MONTHS[word.lower()]
    raw_day = match.groupdict().get("day")
    for year in range(today.year, today.year - 8, -1):  # 29 February: back to the last leap year
        try:
            if raw_day:
                day = date(year, month, int(raw_day))
                if day <= today:
                    return _day_bounds(day - DAY_SLACK, day + DAY_SLACK, zone)
            else:
                first = date(year, month, 1)
                if first <= today:
                    last = _month_start(first, -1) - timedelta(days=1)
                    return _day_bounds(first, last, zone)
        except (ValueError, OverflowError):
            continue
    return None


class _Taken:
    """The spans of a text already read as dates: disjoint, in order of position, so whether a match
    overlaps one is a binary search. Asking each match of every one of them took time quadratic in
    the number of dates a query holds (decision 414)."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []
        self._new: list[tuple[int, int]] = []

    def free(self, form: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
        """The matches of `form` in `text` that overlap no span taken before it. The spans `take`n
        meanwhile join the others once `form` is done: `finditer`'s matches never overlap one
        another, so those spans could keep out none of this form's own matches."""
        spans = self._spans
        for match in form.finditer(text):
            start, end = match.span()
            i = bisect_left(spans, (end,))  # the spans that begin before this match ends
            if i == 0 or spans[i - 1][1] <= start:
                yield match
        if self._new:
            self._spans = sorted(spans + self._new)  # two sorted runs: merged in one pass
            self._new = []

    def take(self, match: re.Match[str]) -> None:
        self._new.append(match.span())


def date_windows(text: str, now: datetime | None = None, zone: tzinfo | None = None) -> list[tuple[str, str]]:
    """The time windows (canonical `since`, `until`, both inclusive) of the dates `text` names: a
    calendar day (with one day of slack either side) or a whole month; with `now`, also the days a
    phrase names relative to the user's today in `zone` ("yesterday", "3 days ago", "last week",
    "this month": decision 288), so a plan is the same for one query on one day. A bare year names
    no window. At most three, in order of appearance."""
    return [w for _, w, _ in _dated(text, now, zone)][:3]


def without_dates(
    text: str,
    now: datetime | None = None,
    zone: tzinfo | None = None,
    held: Container[tuple[str, str]] | None = None,
) -> str:
    """`text` with the phrases `date_windows` reads as a time blanked out: each relative one
    ("yesterday", "last week", "on Friday"), and a calendar date ("2 February", "in March 2024") whose
    window is in `held` (None: every one) — the days that hold memories. Those words say when, and
    searched for, the day's number found "v1.2" and "yesterday" every note that says it, above the
    day's own memories. A date whose days hold none is kept: then it is likely what a memory says
    ("the plan until April 9"), not when it was written."""
    for (start, end), window, relative in reversed(_dated(text, now, zone)):
        if relative or held is None or window in held:
            text = text[:start] + " " * (end - start) + text[end:]
    return text


def _dated(text: str, now: datetime | None, zone: tzinfo | None) -> list[tuple[tuple[int, int], tuple[str, str], bool]]:
    """Each date phrase of `text` (its span) with its window and whether it is relative to today
    ("yesterday", "last Friday"), in order of appearance."""
    found: list[tuple[tuple[int, int], tuple[str, str], bool]] = []
    dated_years: list[int] = []
    taken = _Taken()
    for form in _DATE_FORMS:
        for match in taken.free(form, text):
            raw_month = match.group("month").lower()
            month = int(raw_month) if raw_month.isdigit() else _MONTHS[raw_month]
            year = int(match.group("year"))
            dated_years.append(year)
            day = match.groupdict().get("day")
            try:
                if day:
                    start = datetime(year, month, int(day), tzinfo=UTC) - DAY_SLACK
                    end = start + 2 * DAY_SLACK + timedelta(days=1)
                else:
                    start = datetime(year, month, 1, tzinfo=UTC)
                    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
            except ValueError:
                continue
            taken.take(match)
            found.append((match.span(), (fmt(start), fmt(end - timedelta(microseconds=1))), False))
    if now is not None:
        today = now.astimezone(zone).date()
        # "between August 11 and August 15 2023": a year the query names is the yearless days' too.
        named_years = dated_years + [int(y) for y in _NAMED_YEAR.findall(text)]
        latest = min(today, date(max(named_years), 12, 31)) if named_years else today
        for form in _YEARLESS_FORMS:
            for match in taken.free(form, text):
                if (window := _yearless(match, latest, zone)) is not None:
                    taken.take(match)
                    found.append((match.span(), window, False))
        for match in taken.free(_WEEKDAY, text):
            back = (today.weekday() - _WEEKDAYS.index(match.group("weekday").lower())) % 7
            if back == 0 and match.group("which").lower() != "on":
                back = 7  # "last Friday" on a Friday is a week ago
            with contextlib.suppress(ValueError, OverflowError):
                day = today - timedelta(days=back)
                found.append((match.span(), _day_bounds(day, day, zone), True))
                taken.take(match)
        for form, days in _RELATIVE_FORMS:
            for match in taken.free(form, text):
                try:
                    first, last = days(match, today)
                    window = _day_bounds(first, last, zone)
                except (ValueError, OverflowError):  # before year 1
                    continue
                taken.take(match)
                found.append((match.span(), window, True))
    return sorted(found)


def off_calendar(text: str) -> str:
    """Why a `YYYY-MM-DD` (at the start of `text`) is no day on the calendar, as ` (month 13 does not
    exist)`; empty when it is one or is not written so (decision 391: "'2026-13-01' is not a
    moment" did not say which part was wrong)."""
    found = re.match(r"\s*(\d{4})-(\d{2})-(\d{2})", text)
    if found is None:
        return ""
    year, month, day = (int(g) for g in found.groups())
    if not 1 <= month <= 12:
        return f" (month {month} does not exist)"
    try:
        date(max(year, 1), month, day)
    except ValueError:
        return f" ({found.group(1)}-{found.group(2)} has no day {day})"
    return ""
