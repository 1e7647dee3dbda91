"""Changing what a token may reach, keeping its secret: `kaeru token grant`, and a rename carrying
the grants of its old name along.

A grant names initiatives (decision 15.K1). When one was renamed or merged, the tokens granted its
old name reached nothing any more, and their next write under that name started a second, empty
project beside it; the only remedy was revoking the token and handing its holder a new secret. Now
the owner changes a token's grants in place (`grant_token`), and a rename grants its new name to
the tokens of the old one, which they keep (`follow_rename`): the new name holds exactly what the old one did (a rename refuses a name held,
in any spelling), so no token comes to reach anything it could not reach before. A merge moves none:
its target holds memories the merged initiative's tokens were never granted, and only the owner may
widen a token to them (`merge_warning` says how). Each change is an audit record `token_grant`,
which `token history` lists.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from kaeru.domain.naming import canonical
from kaeru.domain.timefmt import fmt
from kaeru.errors import InvalidArgument, NotFound
from kaeru.service import grants
from kaeru.service.outcomes import Issue
from kaeru.service.runtime import Runtime
from kaeru.storage.base import AuditRecord, Session, TokenRecord

#: The audit operation of a change of grants (`token history`: "granted").
TOKEN_GRANT = "token_grant"
#: How many token names a merge's warning spells out (the admin's; a limited token is told a count).
NAMED = 5


def grant_token(
    rt: Runtime, name: str, add: Sequence[str], remove: Sequence[str], replace: bool, by: str
) -> tuple[TokenRecord, TokenRecord]:
    """Change the initiatives the token `name` may reach, its secret kept: `add` them to its grants
    (with `replace`: they become its grants), then take `remove` out. A token for every initiative
    is limited to `add` by `replace` only: adding a name to "every initiative" would narrow it
    without saying so. Returns the token before and after.

    Raises:
        NotFound: no token has that name.
        InvalidArgument: nothing to change, a malformed name, or no initiative left.
    """
    if not add and not remove:
        raise InvalidArgument("give --initiative NAME to grant, or --remove NAME to take away", field="initiative")
    with rt.store.write() as session:
        before = session.token_by_name(name)
        if before is None:
            raise NotFound(f"no token named {name!r}", field="name")
        if before.initiatives is None and not replace:
            raise InvalidArgument(
                f"token {name!r} reaches every initiative: --replace limits it to those given", field="initiative"
            )
        kept = [] if replace or before.initiatives is None else list(before.initiatives)
        wanted = grants.grant_list([*kept, *add]) if kept or add else ()
        dropped = {canonical(n) for n in remove}
        left = tuple(n for n in wanted or () if n not in dropped)
        if not left:
            raise InvalidArgument(
                f"token {name!r} would reach no initiative: revoke it instead (`kaeru token revoke {name}`)",
                field="initiative",
            )
        if left == before.initiatives:
            return before, before
        after = session.set_token_grants(name, left)
        assert after is not None  # read above, in this transaction
        now = fmt(rt.write_time(session.newest_stamp()))
        session.append_audit(_record(now, by, before, after))
    return before, after


def _record(now: str, by: str, before: TokenRecord, after: TokenRecord) -> AuditRecord:
    def grant(record: TokenRecord) -> dict[str, Any]:
        initiatives = list(record.initiatives) if record.initiatives is not None else None
        return {"initiatives": initiatives, "read_only": record.read_only, "expires_at": record.expires_at}

    changes: list[dict[str, Any]] = [
        {"field": "token", "before": before.name, "after": after.name},
        {"field": "grant", "before": grant(before), "after": grant(after)},
    ]
    return AuditRecord(now, TOKEN_GRANT, by, None, None, [], changes)


def granting(session: Session, name: str, unless: str | None = None) -> list[TokenRecord]:
    """The tokens whose grants name the initiative `name` (and not `unless`), by name. Tokens are
    few (one per person or agent) and read only when an initiative is renamed or merged."""
    wanted, other = canonical(name), canonical(unless) if unless is not None else None
    return [
        t
        for t in session.list_tokens()
        if t.initiatives is not None and wanted in t.initiatives and (other is None or other not in t.initiatives)
    ]


def follow_rename(session: Session, old: str, new: str, now: str, by: str) -> Issue | None:
    """Grant `new` to the tokens that name `old` (and not yet `new`), within the rename's
    transaction; the answer's warning, or None when no token named `old`. `old` stays in their
    grants, as the owner gave it: a holder writing to it is told where it went, not refused as if
    it had never had it."""
    moved = granting(session, old, unless=new)
    for before in moved:
        assert before.initiatives is not None  # `granting` lists limited tokens only
        after = session.set_token_grants(before.name, (*before.initiatives, canonical(new)))
        if after is not None:
            session.append_audit(_record(now, by, before, after))
    if not moved:
        return None
    return Issue(
        "token_grants",
        f"{_count(moved)} granted {old!r} by name: {'its grant names' if len(moved) == 1 else 'their grants name'} "
        f"{new!r} too now, which holds only what {old!r} held (`kaeru token history` records each change).",
        "to",
    )


def merge_warning(session: Session, subject: str, target: str) -> Issue | None:
    """The warning of a merge of `subject` into `target` when tokens grant `subject` and not
    `target`: they reach none of its memories any more, and a write of theirs under the old name is
    refused (`former_names`). Their grants are not moved: `target` holds memories they were never
    granted, which only the vault's owner may open to them."""
    cut = granting(session, subject, unless=target)
    if not cut:
        return None
    admin = grants.current() is None
    named = ", ".join(t.name for t in cut[:NAMED]) + (f" and {len(cut) - NAMED} more" if len(cut) > NAMED else "")
    which = f" ({named})" if admin else ""
    example = f"{cut[0].name if admin else 'NAME'} --initiative {shlex.quote(target)}"
    return Issue(
        "token_grants",
        f"{_count(cut)} grant {subject!r} by name and not {target!r}{which}: they no longer reach these "
        f"memories, and their writes to {subject!r} are refused. A merge moves no grant, since {target!r} holds "
        f"memories they were never given; `kaeru token grant {example}` gives one all of it.",
        "to",
    )


def _count(tokens: Sequence[TokenRecord]) -> str:
    return "1 token" if len(tokens) == 1 else f"{len(tokens)} tokens"
