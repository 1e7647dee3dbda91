"""Moments: RFC 3339, dates and relative offsets for `at`, and one sortable stored form."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from kaeru.domain.timefmt import fmt, parse_date, parse_moment, parse_ts

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


@pytest.mark.parametrize("text", ["yesterday", "5x", "", "2026-13-01", "-5m", "5 minutes ago"])
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
        datetime(999, 12, 31, 23, 59, 59, 5, tzinfo=UTC),  # strftime leaves such a year unpadded
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    ],
)
def test_fmt_writes_what_strftime_wrote(moment: datetime) -> None:
    """`fmt` formats with `isoformat` (issue 14: cheaper on every write); the stored text is the
    `strftime` form it always was, in every zone and year."""
    assert fmt(moment) == moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
