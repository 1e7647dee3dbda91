"""The checks every write path makes of what it is given — sizes, names, tags, initiative names,
secrets — shared by the tools (`run_mutation` and the use cases) and by archive import (decision 14,
issue 15), so an archive is held to exactly what a call is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from kaeru.domain.naming import MAX_NAME_CHARS, canonical, invisible
from kaeru.errors import InvalidArgument, KaeruError, SecretDetected
from kaeru.service.outcomes import Issue

MAX_INITIATIVE_CHARS = 128
MAX_TEXT_CHARS = 4_000_000
MAX_TAGS = 64
MAX_TAG_CHARS = 128


#: ASCII control characters (C0 and DEL), refused in initiative names.
_CONTROL = re.compile("[\x00-\x1f\x7f]")
#: A list position in a field's name (`columns[2].label`).
_POSITION = re.compile(r"\[\d+\]")

T = TypeVar("T")
R = TypeVar("R")


def normalise_initiative(raw: Any, field: str = "initiative") -> str:
    """A trimmed initiative name in NFC (decision 184) of 1–128 characters, no ASCII control among
    them (a name that draws nothing is refused where it would be created: `run_mutation`).

    Raises:
        InvalidArgument: empty, too long, or containing control characters.
    """
    if not isinstance(raw, str):
        raise InvalidArgument("initiative must be a string", field=field)
    name = canonical(raw)
    if not name:
        raise InvalidArgument("initiative must not be blank", field=field)
    # Counted as sent: NFC can lengthen a name the contract accepts (found in review).
    if len(raw.strip()) > MAX_INITIATIVE_CHARS:
        raise InvalidArgument(f"initiative is longer than {MAX_INITIATIVE_CHARS} characters", field=field)
    if _CONTROL.search(name):
        raise InvalidArgument("initiative must not contain control characters", field=field)
    return name


def refuse_invisible(name: str, field: str) -> None:
    """Refuse a new initiative name that draws nothing (`naming.invisible`), or made only of dots:
    `.` and `..` are a URI's dot segments, which URL parsers remove, so the initiative's
    `kaeru://initiative/{name}/context` resource read as another's or as none (and a name of
    three dots says no more). Checked only where a name is made — a write's new initiative, a
    rename — not on reads: a vault (or an archive from one) may already hold such a name, and it
    stays reachable.

    Raises:
        InvalidArgument: `name` draws nothing, or is only dots.
    """
    if invisible(name):
        shown = " ".join(f"U+{ord(ch):04X}" for ch in name[:8])
        raise InvalidArgument(
            f"{field} must not be blank: it holds only characters that draw nothing ({shown})", field=field
        )
    if not name.strip("."):
        raise InvalidArgument(
            f"{field} must not be only dots ({name!r}): name the project, e.g. 'kaeru-memory'", field=field
        )


def check_text(field_name: str, text: str) -> None:
    """A text field within the size limit and free of NUL.

    Raises:
        InvalidArgument: longer than 4,000,000 characters, or holding NUL.
    """
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidArgument(f"{field_name} is longer than {MAX_TEXT_CHARS} characters", field=field_name)
    if "\x00" in text:
        raise InvalidArgument(f"{field_name} contains a NUL character", field=field_name)


def check_name(field_name: str, name: str) -> str:
    """A node name trimmed and in NFC (decision 184), 1–200 characters, without control characters.

    Raises:
        InvalidArgument: blank, too long, or holding a control character.
    """
    sent, name = name.strip(), canonical(name)
    if not name:
        raise InvalidArgument("name must not be blank", field=field_name)
    if len(sent) > MAX_NAME_CHARS:  # counted as sent, as the initiative's
        raise InvalidArgument(f"name is longer than {MAX_NAME_CHARS} characters", field=field_name)
    if any(ord(ch) < 32 for ch in name):
        raise InvalidArgument("name must not contain control characters", field=field_name)
    return name


def check_tag(field_name: str, index: int, tag: str) -> str:
    """Tag `index` trimmed and in NFC (decision 184), 1–128 printable characters.

    Raises:
        InvalidArgument: blank, too long, or holding a control character.
    """
    sent, tag = tag.strip(), canonical(tag)
    if not tag or len(sent) > MAX_TAG_CHARS or any(ord(ch) < 32 for ch in tag):
        raise InvalidArgument(f"tag {index} must be 1–{MAX_TAG_CHARS} printable characters", field=field_name)
    return tag


def screen_secrets(policy: str, field_name: str, text: str, *, handle: bool = False) -> tuple[str, Issue | None]:
    """`text` under the secret policy: as is (`allow`, or nothing found), redacted with the issue
    saying so (`redact`), or refused (`reject`). A `handle` (an initiative's name, a column's key:
    what later calls name it by) is refused under `redact` too: redacted, it would name something
    else than the caller's next call, and every secret of one rule the same thing (decision 352).

    Raises:
        SecretDetected: a secret-looking span under `reject`, or in a handle under `redact`.
    """
    if policy == "allow":
        return text, None
    from kaeru.domain import guard  # imported when first needed (decision 16.S1)

    findings = guard.scan(text)
    if not findings:
        return text, None
    if policy == "redact" and not handle:
        message = f"{len(findings)} secret-looking span(s) redacted in {field_name}"
        return guard.redact(text, findings), Issue("secret_detected", message, field_name)
    first = findings[0]
    advice = "remove it (a name is never redacted)" if handle else "remove it, or set KAERU_SECRET_POLICY=redact"
    raise SecretDetected(
        f"{field_name} looks like it contains a secret (rule {first.rule}: {first.preview!r}); {advice}",
        field=field_name,
    )


def _said(field: str, message: str) -> tuple[str, str]:
    """What an element's issue says whatever its position: its field with the list positions left
    out (`columns[].label`), and its message with the field taken out."""
    return _POSITION.sub("[]", field), message.replace(field, "\0")


def _of_all(fields: list[str], message: str) -> str:
    """`message`, said of `fields[0]`, said of every one of `fields` ("columns[0], columns[2]: …")."""
    named = ", ".join(fields)
    if message.startswith(fields[0]):
        return f"{named}: {message[len(fields[0]) :].lstrip(' :')}"
    if fields[0] in message:
        return message.replace(fields[0], named)
    return f"{named}: {message}"


def each_checked(items: Sequence[T], check: Callable[[int, T], R]) -> list[R]:
    """`check(i, item)` of every item of a list argument. When some are refused, one refusal: the
    first mistake, naming every position that made the same one. A refusal at the first wrong
    element took an agent as many calls as the list had wrong elements.

    Raises:
        InvalidArgument, SecretDetected: the first refusal, of every position that earned it.
    """
    out: list[R] = []
    refused: list[KaeruError] = []
    for i, item in enumerate(items):
        try:
            out.append(check(i, item))
        except (InvalidArgument, SecretDetected) as exc:
            refused.append(exc)
    if not refused:
        return out
    first = refused[0]
    if first.field is None:
        raise first

    def mistake(e: KaeruError) -> Any:
        # A secret is one mistake whatever it is: its rule and quoted preview differ from column to
        # column, and the caller removes them all the same way.
        field, message = _said(str(e.field), e.message)
        return (type(e), field) if isinstance(e, SecretDetected) else (type(e), field, message)

    said = mistake(first)
    fields = [str(e.field) for e in refused if e.field and mistake(e) == said]
    if len(fields) < 2:
        raise first
    raise type(first)(_of_all(fields, first.message), field=first.field, details=first.details) from first


def one_issue_per_mistake(issues: list[Issue]) -> list[Issue]:
    """`issues` of a list's elements, those that say the same of several positions (same code, same
    words but for the position) as one naming them all, in the order first seen: a warning per
    element said the same thing as many times as the list had elements."""
    groups: dict[tuple[str, ...], list[Issue]] = {}
    for n, issue in enumerate(issues):
        key = (issue.code, *_said(issue.field, issue.message)) if issue.field else (str(n),)
        groups.setdefault(key, []).append(issue)
    return [
        group[0]
        if len(group) == 1
        else Issue(
            group[0].code, _of_all([str(i.field) for i in group], group[0].message), group[0].field, group[0].retryable
        )
        for group in groups.values()
    ]
