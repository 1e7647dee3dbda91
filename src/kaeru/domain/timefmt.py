"""Timestamps: one canonical text form (UTC, RFC 3339, microseconds) and parsing of `at` values."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

_RELATIVE = re.compile(r"^\s*(\d+)\s*(s|m|h|d|w)\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def fmt(moment: datetime) -> str:
    """`2026-11-30T04:26:37.123456Z` — fixed width, so text order is time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_ts(text: str) -> datetime:
    """Parse a stored canonical timestamp."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def parse_moment(text: str, now: datetime) -> datetime:
    """An `at`/`as_of` value: RFC 3339, a date (its end, UTC), or a past offset like `5m`, `2d`.

    Raises:
        ValueError: the text is none of these.
    """
    rel = _RELATIVE.match(text)
    if rel:
        return now - timedelta(**{_UNITS[rel.group(2)]: int(rel.group(1))})
    cleaned = text.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", cleaned):
        day = date.fromisoformat(cleaned)
        return datetime(day.year, day.month, day.day, 23, 59, 59, 999999, tzinfo=UTC)
    if cleaned.endswith(("z", "Z")):
        cleaned = cleaned[:-1] + "+00:00"
    moment = datetime.fromisoformat(cleaned)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def parse_date(text: str) -> date:
    """A calendar date `YYYY-MM-DD`.

    Raises:
        ValueError: not a valid date.
    """
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        raise ValueError(f"expected a date YYYY-MM-DD, got {text!r}")
    return date.fromisoformat(text.strip())
