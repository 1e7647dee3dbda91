"""One way in: an archive's records pass the write path's checks before any of them is stored.

Every text an archive line carries goes through the same limits and secret guard as a tool write
(`kaeru.service.mutation`: names ≤ 200 characters, texts ≤ 4,000,000, tags 1–128 printable
characters and ≤ 64 of them besides the families the server derives, initiative names ≤ 128
without control characters, no NUL, no lone surrogate). What is refused is named by line and
field, all of it at once, and the whole archive is refused (decisions 15.N1–15.N4).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kaeru.domain import guard
from kaeru.domain.surrogates import refusal_of_lone_surrogate
from kaeru.errors import InvalidArgument, KaeruError, SecretDetected
from kaeru.export import amg, shape
from kaeru.export.lineage import Lineage
from kaeru.service.checks import MAX_TAGS, check_name, check_tag, check_text, normalise_initiative, screen_secrets
from kaeru.service.outcomes import Issue

#: Tag families the server writes itself (derived topics and language, a task's kind and status):
#: a tool write may hold 64 tags of its caller's besides these, so the count limit leaves them out.
SERVER_TAG_FAMILIES = ("topic:", "lang:", "kind:", "status:")


def too_many_tags(tags: Sequence[object]) -> str | None:
    """Why `tags` are refused, or None: only the caller's own count against `MAX_TAGS`, as a tool
    write counts them — the families the server derives (and an importer's `kind:`) are not theirs."""
    own = sum(1 for t in tags if not (isinstance(t, str) and t.startswith(SERVER_TAG_FAMILIES)))
    return f"at most {MAX_TAGS} tags ({own} given)" if own > MAX_TAGS else None


#: How many refusals a refusal's message lists (all of them are counted).
LISTED = 50


def secret_advice(refusals: Sequence[Any], source: str) -> str:
    """What to do about refused secrets: `redact` imports a text redacted, but a name is never
    redacted (decision 352), so for a name that advice changed nothing (review, session 40)."""
    if any("never redacted" in str(r.message) for r in refusals):
        return (
            f". Rename what holds a secret in its name in the {source}'s vault (`initiative` with action rename) "
            f"and export again, or import with KAERU_SECRET_POLICY=allow; remove any other secret, or set "
            "KAERU_SECRET_POLICY=redact for those"
        )
    return f". Remove the secrets from the {source}, or set KAERU_SECRET_POLICY=redact"


@dataclass
class Refusal:
    line: int
    field: str
    code: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line} {self.field}: {self.message}"


@dataclass
class Screening:
    """What screening an archive found: refusals (nothing may be written), redactions made in
    place (`redact`), and secret-looking texts kept as they are (`report`, for copy)."""

    refusals: list[Refusal] = field(default_factory=list)
    #: (the record's `id()`, the issue saying what was redacted in it).
    redacted: list[tuple[int, Issue]] = field(default_factory=list)
    flagged: list[Refusal] = field(default_factory=list)

    def error(self) -> KaeruError | None:
        """The refusal of the whole archive, naming every refused line and field; None if none."""
        if not self.refusals:
            return None
        secrets_only = all(r.code == SecretDetected.code for r in self.refusals)
        listed = "; ".join(str(r) for r in self.refusals[:LISTED])
        more = f"; and {len(self.refusals) - LISTED} more" if len(self.refusals) > LISTED else ""
        message = (
            f"the archive was not imported (nothing of it was written): {len(self.refusals)} field(s) "
            f"refused — {listed}{more}"
        )
        if secrets_only:
            return SecretDetected(message + secret_advice(self.refusals, "archive"), field="path")
        return InvalidArgument(message, field="path")


def numbered(archive: amg.Archive) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line, kind, record) of every record, by the line it was read from (or would be written to)."""
    line = 1
    for kind, group in (
        ("initiative", archive.initiatives),
        ("initiative", archive.ended),
        ("node", archive.nodes),
        ("edge", archive.edges),
        ("slot", archive.slots),
        ("audit", archive.audit),
    ):
        for record in group:
            line += 1
            yield archive.line_of.get(id(record), line), kind, record


def screen(archive: amg.Archive, policy: str) -> Screening:
    """Check every record of `archive` under the secret `policy` (`allow`, `redact`, `reject`, or
    `report`: find secrets but keep them). `redact` rewrites the records' texts in place."""
    return _Screen(policy).run(archive)


class Screener:
    """Screening one record at a time, for an archive read as a stream (see `screen`)."""

    def __init__(self, policy: str) -> None:
        self._screen = _Screen(policy)

    @property
    def found(self) -> Screening:
        return self._screen.found

    def check(self, line: int, kind: str, record: dict[str, Any]) -> list[Issue]:
        """Screen `record` (redacted in place under `redact`); the redaction issues it got."""
        before = len(self._screen.found.redacted)
        self._screen.check(line, kind, record)
        return [issue for _, issue in self._screen.found.redacted[before:]]


class _Screen:
    def __init__(self, policy: str) -> None:
        self.policy = policy
        self.found = Screening()
        self.lineage = Lineage()
        self.line = 0
        self.record = 0

    def run(self, archive: amg.Archive) -> Screening:
        for line, kind, record in numbered(archive):
            self.check(line, kind, record)
        return self.found

    def check(self, line: int, kind: str, record: dict[str, Any]) -> None:
        """Screen one record (redacting it in place under `redact`)."""
        self.line, self.record = line, id(record)
        if (surrogate := refusal_of_lone_surrogate(record)) is not None:
            self.refuse(surrogate)
        elif wrong := shape.problems(kind, record) or self.lineage.check(kind, record):
            for field_name, why in wrong:  # screened only once it has the shape written
                self.refuse(InvalidArgument(why, field=field_name))
        else:
            self._check(kind, record)

    def _check(self, kind: str, record: dict[str, Any]) -> None:
        if kind == "initiative":
            self.initiative(record, "name", record.get("name"))
            for i, span in enumerate(record.get("names") or []):
                self.initiative(span, f"names[{i}].name", span.get("name"))
            self.walk(record, "properties")
        elif kind == "node":
            self.node(record)
        elif kind == "edge":
            self.walk(record, "properties")
        elif kind in ("slot", "audit"):
            if record.get("initiative") is not None:
                self.initiative(record, "initiative", record["initiative"])
            if kind == "audit":
                self.walk(record, "changes")
        if isinstance(record.get("request_id"), str):  # provenance here, no longer a replay key: text
            record["request_id"] = self.text("request_id", record["request_id"])
        if kind == "slot":
            self.slot(record)

    def refuse(self, error: KaeruError, field_name: str | None = None) -> None:
        self.found.refusals.append(Refusal(self.line, field_name or error.field or "", error.code, error.message))

    def node(self, record: dict[str, Any]) -> None:
        name = record.get("name")
        if isinstance(name, str):
            try:
                check_name("name", name)
            except KaeruError as error:
                self.refuse(error)
            else:
                record["name"] = self.text("name", name)
        for key in ("body", "description"):
            if isinstance(record.get(key), str):
                record[key] = self.text(key, record[key])
        tags = record.get("tags") or []
        if (too_many := too_many_tags(tags)) is not None:
            self.refuse(InvalidArgument(too_many, field="tags"))
        for i, tag in enumerate(tags):
            if not isinstance(tag, str):
                continue
            try:
                check_tag("tags", i, tag)
            except KaeruError as error:
                self.refuse(error, f"tags[{i}]")
            else:
                tags[i] = self.text(f"tags[{i}]", tag)
        for i, name in enumerate(record.get("initiatives") or []):
            self.initiative(record, f"initiatives[{i}]", name)
        self.walk(record, "properties")

    def initiative(self, record: dict[str, Any], field_name: str, name: Any) -> None:
        """A name an initiative goes by: within the limits, and no secret under `reject` or `redact`
        (a name is never redacted, as on the write path: decision 352)."""
        try:
            normalise_initiative(name, field_name)
            if isinstance(name, str) and self.policy in ("reject", "redact"):
                screen_secrets(self.policy, field_name, name, handle=True)
        except KaeruError as error:
            self.refuse(error)

    def slot(self, record: dict[str, Any]) -> None:
        """A slot's name: a handle later calls name, screened as the write path screens it (refused
        under `reject` and `redact`, never redacted: decision 362)."""
        value = record.get("slot")
        if isinstance(value, str) and self.policy in ("reject", "redact"):
            try:
                screen_secrets(self.policy, "slot", value, handle=True)
            except KaeruError as error:
                self.refuse(error)

    def text(self, field_name: str, text: str) -> str:
        """`text` checked against the limits and screened for secrets: as is, redacted, or refused."""
        try:
            check_text(field_name, text)
        except KaeruError as error:
            self.refuse(error)
            return text
        if self.policy == "report":
            if findings := guard.scan(text):
                message = f"{len(findings)} secret-looking span(s) (rule {findings[0].rule}), copied as they are"
                self.found.flagged.append(Refusal(self.line, field_name, SecretDetected.code, message))
            return text
        try:
            cleaned, issue = screen_secrets(self.policy, field_name, text)
        except SecretDetected as error:
            self.refuse(error)
            return text
        if issue is not None:
            self.found.redacted.append(
                (self.record, Issue(issue.code, f"line {self.line}: {issue.message}", field_name))
            )
        return cleaned

    def walk(self, record: dict[str, Any], key: str) -> None:
        """Every string inside `record[key]` (properties, an audit record's changes), screened in place."""
        if key in record:
            record[key] = self._walk(record[key], key)

    def _walk(self, value: Any, path: str) -> Any:
        if isinstance(value, str):
            return self.text(path, value)
        if isinstance(value, dict):
            return {k: self._walk(v, f"{path}.{k}") for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return value
