"""Moments: RFC 3339, dates and relative offsets for `at`, and one sortable stored form."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from kaeru.domain.timefmt import fmt, parse_date, parse_moment, parse_occurred, parse_ts

NOW = datetime(2026, 3, 10, 12, 0, 0, tzinfo=UTC)


def test_rfc3339_with_z() -> None:
    """An RFC 3339 UTC timestamp is taken as is."""
    assert parse_moment("2026-01-02T03:04:05Z", NOW) == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_rfc3339_with_offset_is_converted_to_utc() -> None:
    """An offset is honoured: 05:00+02:00 is 03:00 UTC."""
    assert parse_moment("2026-01-02T05:00:00+02:00", NOW) == datetime(2026, 1, 2, 3, 0, tzinfo=UTC)


def test_rfc3339_with_microseconds() -> None:
    """Microseconds survive, so a read at a recorded_at is exact."""
    moment = parse_moment("2026-01-02T03:04:05.123456Z", NOW)
    assert moment.microsecond == 123456


def test_date_means_that_day() -> None:
    """A plain date is a moment on that UTC day."""
    moment = parse_moment("2026-01-02", NOW)
    assert moment.tzinfo is not None
    assert moment.astimezone(UTC).date() == date(2026, 1, 2)


@pytest.mark.parametrize(
    ("text", "delta"),
    [
        ("5m", timedelta(minutes=5)),
        ("2d", timedelta(days=2)),
        ("3h", timedelta(hours=3)),
        ("30s", timedelta(seconds=30)),
        ("1w", timedelta(weeks=1)),
    ],
)
def test_relative_offsets_are_in_the_past(text: str, delta: timedelta) -> None:
    """`5m`, `2d` … mean that long before now."""
    assert parse_moment(text, NOW) == NOW - delta


@pytest.mark.parametrize(
    ("text", "delta"),
    [
        ("2d ago", timedelta(days=2)),
        ("3 days ago", timedelta(days=3)),
        ("1 day", timedelta(days=1)),
        ("2 Weeks Ago", timedelta(weeks=2)),
        ("30 minutes ago", timedelta(minutes=30)),
        ("5 mins", timedelta(minutes=5)),
        ("4 hours ago", timedelta(hours=4)),
        ("2 hrs", timedelta(hours=2)),
        ("45 seconds ago", timedelta(seconds=45)),
    ],
)
def test_a_time_ago_may_say_ago_and_its_unit_in_words(text: str, delta: timedelta) -> None:
    """The tool descriptions say "2d ago"; an agent writes what it reads (decision 284)."""
    assert parse_moment(text, NOW) == NOW - delta


@pytest.mark.parametrize("text", ["yesterday", "2 months ago", "March 3", "10:00", "ago", "2 d a g o"])
def test_what_is_no_moment_is_told_the_forms_that_are(text: str) -> None:
    with pytest.raises(ValueError, match=r"is not a moment: give an RFC 3339 time .* a date .* a time ago") as err:
        parse_moment(text, NOW)
    assert repr(text) in str(err.value)


@pytest.mark.parametrize("text", ["yesterday", "5x", "", "2026-13-01", "-5m", "5 months ago"])
def test_nonsense_is_rejected(text: str) -> None:
    """Anything else is a ValueError (the service reports invalid_argument on `at`)."""
    with pytest.raises(ValueError):
        parse_moment(text, NOW)


def test_fmt_is_fixed_width_utc_and_round_trips() -> None:
    """The stored form is UTC with microseconds and parses back to the same moment."""
    moment = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    text = fmt(moment)
    assert text == "2026-01-02T03:04:05.000006Z"
    assert parse_ts(text) == moment


def test_fmt_text_order_is_time_order() -> None:
    """Sorting stored timestamps as text sorts them in time."""
    moments = [NOW + timedelta(microseconds=n * 997_003) for n in range(50)]
    texts = [fmt(m) for m in moments]
    assert sorted(texts) == texts


def test_parse_date() -> None:
    """A calendar date parses; anything else is a ValueError."""
    assert parse_date("2026-02-28") == date(2026, 2, 28)
    for bad in ("2026-02-30", "28.02.2026", "2026-2-8"):
        with pytest.raises(ValueError):
            parse_date(bad)


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 1, 2, 3, 4, 5, 0, tzinfo=UTC),
        datetime(2026, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2026, 1, 1, 1, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),  # the day before in UTC
        datetime(1999, 12, 31, 22, 0, 0, 1, tzinfo=timezone(timedelta(hours=-3))),  # the year after in UTC
        datetime(1000, 1, 1, tzinfo=UTC),
        datetime(999, 12, 31, 23, 59, 59, 5, tzinfo=UTC),  # strftime left such a year unpadded (216)
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    ],
)
def test_fmt_writes_rfc_3339_with_a_four_digit_year_that_reads_back(moment: datetime) -> None:
    """`fmt` formats with `isoformat` (issue 14: cheaper on every write): RFC 3339 in UTC with a
    four-digit year in every zone and year, so a stored moment reads back and sorts as text. The
    years before 1000 were written unpadded (`strftime`) until decision 216, which neither
    `parse_ts` nor an import read back."""
    utc = moment.astimezone(UTC)
    assert fmt(moment) == f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.%fZ")
    assert parse_ts(fmt(moment)) == utc


def test_text_order_is_time_order_across_every_year() -> None:
    moments = [datetime(y, 6, 1, tzinfo=UTC) for y in (1, 9, 99, 500, 999, 1000, 2026, 9999)]
    assert sorted(moments, key=fmt) == moments


@pytest.mark.parametrize(("stored", "year"), [("1-01-01T00:00:00.000000Z", 1), ("500-06-01T12:00:00.000001Z", 500)])
def test_a_year_stored_unpadded_before_216_still_reads(stored: str, year: int) -> None:
    assert parse_ts(stored).year == year and fmt(parse_ts(stored)).startswith(f"{year:04d}-")


def test_a_date_that_is_today_somewhere_happened_now_not_at_its_end() -> None:
    """`occurred_at` of today's date was the end of the day, hours ahead: a note written later
    today ranked as older (decision 286). A past day keeps its end, a day ahead everywhere too."""
    assert parse_occurred("2026-03-10", NOW) == NOW  # NOW is 12:00 UTC on 2026-03-10
    assert parse_occurred("2026-03-11", NOW) == NOW  # already the 11th in UTC+14 (from 10:00 UTC)
    assert parse_occurred("2026-03-09", NOW) == datetime(2026, 3, 9, 23, 59, 59, 999999, tzinfo=UTC)
    assert parse_occurred("2026-03-12", NOW) == datetime(2026, 3, 12, 23, 59, 59, 999999, tzinfo=UTC)
    assert parse_occurred("2026-03-10T18:00:00Z", NOW) == datetime(2026, 3, 10, 18, tzinfo=UTC)  # said exactly
    assert parse_occurred("2d ago", NOW) == NOW - timedelta(days=2)


@pytest.mark.parametrize("text", ["now", "NOW", " Now "])
def test_now_is_the_moment_of_the_call(text: str) -> None:
    """`read --at now` was refused as "not a moment" — with a hint printed twice (CLI probe, session 38)."""
    assert parse_moment(text, NOW) == NOW


def test_a_moment_it_cannot_read_names_each_form_once() -> None:
    with pytest.raises(ValueError) as err:
        parse_moment("yesterdayish", NOW)
    said = str(err.value)
    assert said.count("RFC 3339") == 1 and said.endswith("or now")


@pytest.mark.parametrize("text", ["0001-01-01", "0001-01-01T00:00:00", "0001-01-01T12:30:00"])
def test_the_calendars_first_day_is_a_moment_on_the_machines_calendar_too(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Years 1 to 9999, on the machine's own calendar (`zone` None) as on a named one: the first
    day was refused as "not a moment", its wall times as "year 0 is out of range" (decision 443).
    West of UTC it is a moment of that day; east of it, its first hours fall before the calendar."""
    now = datetime(2026, 3, 3, tzinfo=UTC)
    try:
        for machine in ("UTC", "America/New_York"):
            monkeypatch.setenv("TZ", machine)
            time.tzset()
            for day_start in (False, True):
                moment = parse_moment(text, now, day_start, zone=None)
                assert moment.astimezone(UTC).date() in (date(1, 1, 1), date(1, 1, 2)), (machine, moment)
            if machine == "UTC":
                assert parse_moment(text, now, zone=None) == parse_moment(text, now, zone=UTC)
        monkeypatch.setenv("TZ", "Asia/Tokyo")
        time.tzset()
        with pytest.raises(ValueError, match="outside the years 1 to 9999"):
            parse_moment("0001-01-01T00:00:00", now, zone=None)
    finally:
        monkeypatch.undo()
        time.tzset()
