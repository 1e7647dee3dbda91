"""Changing what a token may reach, keeping its secret: `kaeru token grant`, and a rename carrying
the grants of its old name along.

A grant names initiatives (decision 15.K1). When one was renamed or merged, the tokens granted its
old name reached nothing any more, and their next write under that name started a second, empty
project beside it; the only remedy was revoking the token and handing its holder a new secret. Now
the owner changes a token's grants in place (`grant_token`), and a rename grants its new name to
the tokens of the old one, which they keep (`follow_rename`): to them the new name holds exactly
what the old one did. Other tokens may be granted the new name already — granted before any
initiative went by it, or keeping it after one was renamed away — and those come to reach memories
they were never given: the admin's rename says so and names them; a limited token's is refused, since
only the vault's owner opens memories to another token. A merge moves none: its target holds
memories the merged initiative's tokens were never granted (`merge_warning` says how to give them).
The tokens granted the target and not the merged initiative come to reach the merged one's memories,
as a rename onto their name would give them: the same rule holds (`merge_widening`).
Each change is an audit record `token_grant`, which `token history` lists.

Grants are compared in NFC (`canonical`), as `grants.principal_of` reads them: a token an older
kaeru stored with a decomposed name follows a rename too. The token rows a change is computed from
are read locked (PostgreSQL: `FOR UPDATE`) in the writing transaction: on READ COMMITTED a removal
racing a rename, or two renames, each wrote back grants read before the other committed, and one
change was lost.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from kaeru.domain.naming import canonical
from kaeru.domain.timefmt import fmt
from kaeru.errors import Forbidden, InvalidArgument, NotFound
from kaeru.service import grants
from kaeru.service.outcomes import Issue
from kaeru.service.runtime import Runtime
from kaeru.storage.base import AuditRecord, Session, TokenRecord

#: The audit operation of a change of grants (`token history`: "granted").
TOKEN_GRANT = "token_grant"
#: How many token names a rename's or merge's warning spells out (the admin's only).
NAMED = 5


def grant_token(
    rt: Runtime, name: str, add: Sequence[str], remove: Sequence[str], replace: bool, by: str
) -> tuple[TokenRecord, TokenRecord]:
    """Change the initiatives the token `name` may reach, its secret kept: `add` them to its grants
    (with `replace`: they become its grants), then take `remove` out. A token for every initiative
    is limited to `add` by `replace` only: adding a name to "every initiative" would narrow it
    without saying so. Returns the token before and after.

    Raises:
        NotFound: no token has that name, or a name to remove is not among its grants.
        InvalidArgument: nothing to change, a malformed name, or no initiative left.
    """
    if not add and not remove:
        raise InvalidArgument("give --initiative NAME to grant, or --remove NAME to take away", field="initiative")
    with rt.store.write() as session:
        before = session.token_by_name(name, for_update=True)
        if before is None:
            raise NotFound(f"no token named {name!r}", field="name")
        if before.initiatives is None and not replace:
            raise InvalidArgument(
                f"token {name!r} reaches every initiative: --replace limits it to those given", field="initiative"
            )
        kept = [] if replace or before.initiatives is None else list(before.initiatives)
        wanted = grants.grant_list([*kept, *add]) if kept or add else ()
        dropped = {canonical(n): n for n in remove}
        # A name not granted, misspelt say, took nothing away and was answered as a success.
        absent = [n for c, n in dropped.items() if c not in (wanted or ())]
        if absent:
            raise NotFound(
                f"token {name!r} has no grant {absent[0]!r} to remove (its grants: {', '.join(wanted or ())})",
                field="remove",
            )
        left = tuple(n for n in wanted or () if n not in dropped)
        if not left:
            raise InvalidArgument(
                f"token {name!r} would reach no initiative: revoke it instead (`kaeru token revoke {name}`)",
                field="initiative",
            )
        if before.initiatives is not None and left == tuple(dict.fromkeys(map(canonical, before.initiatives))):
            return before, before
        after = session.set_token_grants(name, left)
        assert after is not None  # read and locked above, in this transaction
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


def _held(token: TokenRecord) -> frozenset[str]:
    """The names `token` is granted, in NFC (an older kaeru stored them as given: decision 184)."""
    return frozenset(canonical(n) for n in token.initiatives or ())


def granting(session: Session, name: str, unless: str | None = None, lock: bool = False) -> list[TokenRecord]:
    """The tokens whose grants name the initiative `name` (and not `unless`), by name; `lock`: their
    rows locked until the write commits, for a change computed from them. Tokens are few (one per
    person or agent) and read only when an initiative is renamed or merged."""
    wanted, other = canonical(name), canonical(unless) if unless is not None else None
    return [
        t
        for t in session.list_tokens(for_update=lock)
        if t.initiatives is not None and wanted in _held(t) and (other is None or other not in _held(t))
    ]


def follow_rename(session: Session, old: str, new: str, now: str, by: str) -> list[Issue]:
    """Grant `new` to the tokens that name `old` (and not yet `new`), within the rename's
    transaction, and say so; say too which tokens, granted `new` and not `old`, come to reach this
    initiative's memories. `old` stays in their grants, as the owner gave it: a holder writing to it
    is told where it went, not refused as if it had never had it.

    Raises:
        Forbidden: the caller is a limited token and other tokens are granted `new` but not `old`:
            the rename would open these memories to them, which only the vault's owner may do.
    """
    moved = granting(session, old, unless=new, lock=True)
    widened = granting(session, new, unless=old)  # locked by the read above
    principal = grants.current()
    if widened and principal is not None and principal.initiatives is not None:
        raise Forbidden(
            f"no rename to {new!r}: another token is granted {new!r} by name and would reach these memories, "
            "which it was never given; only the vault's owner may open them to it. Choose a name no other "
            "token is granted, or ask the owner",
            field="to",
        )
    for before in moved:
        assert before.initiatives is not None  # `granting` lists limited tokens only
        after = session.set_token_grants(before.name, (*before.initiatives, canonical(new)))
        if after is not None:
            session.append_audit(_record(now, by, before, after))
    admin = principal is None
    said: list[Issue] = []
    if moved:
        who = f"{_count(moved)} granted {old!r} by name: " if admin else f"Every token granted {old!r} by name: "
        grant = "its grant names" if admin and len(moved) == 1 else "their grants name"
        said.append(
            Issue(
                "token_grants",
                f"{who}{grant} {new!r} too now, which holds only what {old!r} held (`kaeru token history` "
                "records each change).",
                "to",
            )
        )
    if widened:
        said.append(_widened(widened, old, new, admin))
    return said


def _widened(tokens: Sequence[TokenRecord], old: str, new: str, admin: bool) -> Issue:
    """The warning of a rename that other tokens' grants of `new` now reach: names for the admin;
    for a token for every initiative, only that it happened."""
    if not admin:
        return Issue(
            "token_grants",
            f"At least one other token, granted {new!r} by name, reaches this initiative now, with the memories "
            f"it held as {old!r}, which that token was never given; the vault's owner can take that back "
            f"(`kaeru token grant NAME --remove {shlex.quote(new)}`).",
            "to",
        )
    one = len(tokens) == 1
    return Issue(
        "token_grants",
        f"{_count(tokens)} granted {new!r} by name ({_named(tokens)}) {'reaches' if one else 'reach'} this "
        f"initiative now, with the memories it held as {old!r}, which {'it was' if one else 'they were'} never "
        f"given; `kaeru token grant {tokens[0].name} --remove {shlex.quote(new)}` takes that back if it was not "
        "meant.",
        "to",
    )


def merge_warning(session: Session, subject: str, target: str) -> Issue | None:
    """The warning of a merge of `subject` into `target` when tokens grant `subject` and not
    `target`: they reach none of its memories any more, and a write of theirs under the old name is
    refused (`former_names`). Their grants are not moved: `target` holds memories they were never
    granted, which only the vault's owner may open to them. Only the admin is told how many and
    which: other people's tokens are the owner's to know."""
    cut = granting(session, subject, unless=target)
    if not cut:
        return None
    if grants.current() is not None:
        return Issue(
            "token_grants",
            f"At least one other token grants {subject!r} by name and not {target!r}: it no longer reaches these "
            f"memories, and its writes to {subject!r} are refused. A merge moves no grant, since {target!r} holds "
            "memories it was never given; the vault's owner can give it them "
            f"(`kaeru token grant NAME --initiative {shlex.quote(target)}`).",
            "to",
        )
    return Issue(
        "token_grants",
        f"{_count(cut)} grant {subject!r} by name and not {target!r} ({_named(cut)}): they no longer reach these "
        f"memories, and their writes to {subject!r} are refused. A merge moves no grant, since {target!r} holds "
        f"memories they were never given; `kaeru token grant {cut[0].name} --initiative {shlex.quote(target)}` "
        "gives one all of it.",
        "to",
    )


def merge_widening(session: Session, subject: str, target: str) -> Issue | None:
    """The warning of a merge of `subject` into `target` when tokens grant `target` and not
    `subject`: they come to reach the memories `subject` held, which they were never given — as a
    rename onto a name they hold would give them (`follow_rename`). Called before a node moves.

    Raises:
        Forbidden: the caller is a limited token: only the vault's owner may open these memories to
            another token.
    """
    widened = granting(session, target, unless=subject)
    if not widened:
        return None
    principal = grants.current()
    if principal is not None and principal.initiatives is not None:
        raise Forbidden(
            f"no merge into {target!r}: another token is granted {target!r} by name and not {subject!r}, and "
            f"would reach the memories of {subject!r}, which it was never given; only the vault's owner may open "
            "them to it. Ask the owner to merge them",
            field="to",
        )
    if principal is not None:
        return Issue(
            "token_grants",
            f"At least one other token, granted {target!r} by name and not {subject!r}, reaches the memories "
            f"{subject!r} held now, which that token was never given; the vault's owner can take that back, with "
            f"the rest of {target!r} (`kaeru token grant NAME --remove {shlex.quote(target)}`).",
            "to",
        )
    one = len(widened) == 1
    return Issue(
        "token_grants",
        f"{_count(widened)} granted {target!r} by name and not {subject!r} ({_named(widened)}) "
        f"{'reaches' if one else 'reach'} the memories {subject!r} held now, which {'it was' if one else 'they were'} "
        f"never given; `kaeru token grant {widened[0].name} --remove {shlex.quote(target)}` takes that back, with "
        f"the rest of {target!r}, if it was not meant.",
        "to",
    )


def _named(tokens: Sequence[TokenRecord]) -> str:
    """The first `NAMED` tokens' names, and how many more."""
    more = f" and {len(tokens) - NAMED} more" if len(tokens) > NAMED else ""
    return ", ".join(t.name for t in tokens[:NAMED]) + more


def _count(tokens: Sequence[TokenRecord]) -> str:
    return "1 token" if len(tokens) == 1 else f"{len(tokens)} tokens"
