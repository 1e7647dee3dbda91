"""Who is calling and what they may touch: HTTP tokens, their grants, and the checks on them (issue 15).

A `Principal` is the caller of one request: a name (the actor of every audit record it writes), the
initiatives it may see (None: all) and whether it may write. The transport sets it for the request
(`acting`); stdio and the CLI set none and act as the local admin (the whole vault, as
`KAERU_ACTOR`). The use cases ask this module at the few points every call passes through: the
initiatives a call names, a node it resolves, the initiative names it shows, the suggestions it
makes (decision 15.K2).

Tokens are random (32 bytes, url-safe), shown once, and stored as their sha256 (decision 15.K1).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kaeru.domain.model import Edge, Node
from kaeru.domain.naming import canonical
from kaeru.domain.timefmt import fmt, parse_ts
from kaeru.errors import Forbidden, InvalidArgument, NotFound, Unavailable
from kaeru.service.runtime import Runtime
from kaeru.storage.base import AuditRecord, Session, Store, TokenRecord

#: Prefix of the tokens `kaeru token add` makes (recognisable in a leaked config; not a secret).
TOKEN_PREFIX = "kaeru_"
TOKEN_BYTES = 32
_TOKEN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
#: How stale a token's `last_used` may get before a request records the use again: a read never
#: writes more than once an hour per token.
TOUCH_EVERY = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller of one request."""

    name: str
    #: The initiative names it may see and write; None: every initiative.
    initiatives: frozenset[str] | None = None
    read_only: bool = False

    def may_see(self, initiative_name: str) -> bool:
        return self.initiatives is None or canonical(initiative_name) in self.initiatives


class _Call:
    """One request run as a principal (`acting`), and what it found its grants' names to be: the ids
    of the granted initiatives, asked once per transaction rather than at each of the many checks a
    call makes. Made when the request starts and dropped when it ends, so a later request sees
    renames, merges and new initiatives; within a request, a new transaction asks again, and a name
    not found is asked again at each check (the call may create that initiative, or rename one to
    it, before its next check). A name found stays found for the transaction: an initiative renamed
    or merged away by this call went to a granted name (`check_args`), and a write keeps a granted
    initiative's id."""

    __slots__ = ("_memo", "principal")

    def __init__(self, principal: Principal):
        self.principal = principal
        #: (the transaction asked, the ids found, the names not found), replaced whole: a thread of
        #: the request that asks in another transaction never mixes its answer into this one's.
        self._memo: tuple[weakref.ref[Session], frozenset[int], frozenset[str]] | None = None

    def granted_ids(self, session: Session, granted: frozenset[str]) -> set[int]:
        memo = self._memo
        if memo is None or memo[0]() is not session:
            memo = (weakref.ref(session), frozenset(), granted)
        asked, ids, missing = memo
        if missing:
            found = session.initiative_ids_named(sorted(missing))
            memo = (asked, ids.union(*found.values()), missing.difference(found))
        self._memo = memo
        return set(memo[1])


_current: ContextVar[_Call | None] = ContextVar("kaeru_principal", default=None)


def current() -> Principal | None:
    """The principal of the running request; None: the local admin (stdio, the CLI)."""
    call = _current.get()
    return call.principal if call is not None else None


@contextmanager
def acting(principal: Principal | None) -> Iterator[None]:
    """Run the block as `principal` (None: the local admin)."""
    token = _current.set(_Call(principal) if principal is not None else None)
    try:
        yield
    finally:
        _current.reset(token)


def _limited() -> frozenset[str] | None:
    principal = current()
    return principal.initiatives if principal is not None else None


def actor(default: str) -> str:
    """Who writes the audit record: the principal's name, else `default` (`KAERU_ACTOR`)."""
    principal = current()
    return principal.name if principal is not None else default


# --- checks --------------------------------------------------------------------------------------
def check_write(operation: str) -> None:
    """Raises:
    Forbidden: the principal's token is read-only."""
    principal = current()
    if principal is not None and principal.read_only:
        raise Forbidden(f"this token is read-only: {operation} is refused")


def check_whole_vault(operation: str) -> None:
    """Archives span initiatives (memberships, edges, audit): only a token for every initiative that
    may write uses them (decision 15.K4).

    Raises:
        Forbidden: the principal is limited to some initiatives, or read-only.
    """
    principal = current()
    if principal is not None and (principal.initiatives is not None or principal.read_only):
        raise Forbidden(f"{operation} needs a token for every initiative that may write")


def check_name(name: Any, field: str) -> None:
    """Refuse an initiative outside the grants — whether or not it exists, so nothing is learned.

    Raises:
        Forbidden: the principal has no grant for `name`.
    """
    granted = _limited()
    if granted is None or not isinstance(name, str):
        return
    if canonical(name) not in granted:
        raise Forbidden(f"this token has no grant for initiative {name.strip()!r}", field=field)


def check_args(args: dict[str, Any]) -> None:
    """Every initiative a call's arguments name (`initiative`, `initiatives`, `to`) within the grants.

    Raises:
        Forbidden: one is outside them.
    """
    if _limited() is None:
        return
    check_name(args.get("initiative"), "initiative")
    raw = args.get("initiatives")
    if isinstance(raw, list):
        for i, name in enumerate(raw):
            check_name(name, f"initiatives[{i}]")
    if args.get("action") in ("rename", "merge"):
        check_name(args.get("to"), "to")


def visible_names(names: Iterable[str]) -> list[str]:
    """`names` without the initiatives outside the grants (for listings and did-you-mean)."""
    granted = _limited()
    return [n for n in names if granted is None or canonical(n) in granted]


def granted_ids(session: Session) -> set[int] | None:
    """The ids of the granted initiatives that exist; None: every initiative is granted. Looked up
    by the granted names alone, once per transaction of the request (`_Call`)."""
    call = _current.get()
    if call is None or call.principal.initiatives is None:
        return None
    return call.granted_ids(session, call.principal.initiatives)


def node_visible(node: Node, ids: set[int] | None) -> bool:
    """True when `node` belongs to a granted initiative (`ids` from `granted_ids`)."""
    return ids is None or not ids.isdisjoint(node.initiatives)


def visible_ids(session: Session, ids: Iterable[str]) -> set[str]:
    """The node ids among `ids` that belong to a granted initiative (all of them for the admin)."""
    wanted = list(dict.fromkeys(ids))
    granted = granted_ids(session)
    if granted is None:
        return set(wanted)
    return {i for i, node in session.nodes_by_ids(wanted).items() if node_visible(node, granted)}


def hidden_among(session: Session, ids: Iterable[str]) -> tuple[frozenset[str], dict[str, Node]] | None:
    """The node ids among `ids` outside the grants, and the nodes found for all of them, in one
    look-up; None for the admin (no look-up, `ids` not even read)."""
    granted = granted_ids(session)
    if granted is None:
        return None
    wanted = list(dict.fromkeys(ids))
    found = session.nodes_by_ids(wanted) if wanted else {}
    return frozenset(i for i in wanted if i not in found or not node_visible(found[i], granted)), found


def hidden_ids(session: Session, ids: Iterable[str]) -> set[str]:
    """The node ids among `ids` outside the grants (none for the admin, with no lookup).

    A write reaches some nodes through edges and slots rather than through `resolve_node`: the
    doubts a review close retracts, the evidence a verdict overturns, a slot's previous holder. A
    limited token's write leaves these nodes as they are and its answer neither names nor counts
    them, as a read would not show them (decision 15.K2)."""
    among = hidden_among(session, ids)
    return set(among[0]) if among is not None else set()


#: Why a resumed page shows fewer hits than its cursor listed, told to a token limited to some
#: initiatives: a node retracted since and one moved out of its grants are said alike, so it learns
#: neither where a node went nor that it went anywhere (decision 15.K2).
NO_LONGER_VISIBLE = "no longer visible"


def gone_reason() -> str:
    """The omission reason of a listed hit gone from a resumed page (`search`, `recall`): for a
    caller who sees every initiative only retraction removes one, so it is `retracted`; for a
    limited one it may also have moved out of the grants, which is not to be told apart."""
    return "retracted" if _limited() is None else NO_LONGER_VISIBLE


def granted_edges(session: Session, inbound: dict[str, list[Edge]]) -> dict[str, list[Edge]]:
    """`inbound` (a node id → the edges into it) without the edges from nodes outside the grants,
    and without the nodes left with none: a doubt raised in another initiative is neither counted
    nor offered to close (decision 372). As it is for the admin."""
    hidden = hidden_ids(session, [e.src for edges in inbound.values() for e in edges])
    if not hidden:
        return inbound
    kept = {node: [e for e in edges if e.src not in hidden] for node, edges in inbound.items()}
    return {node: edges for node, edges in kept.items() if edges}


_NODE_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def mentioned_ids(value: Any) -> set[str]:
    """Every node id written anywhere in `value` (strings, lists, dicts — keys included)."""
    found: set[str] = set()
    if isinstance(value, str):
        found.update(_NODE_ID.findall(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            found |= mentioned_ids(key) | mentioned_ids(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            found |= mentioned_ids(item)
    return found


def scrub(value: Any, visible: set[str]) -> Any:
    """`value` without the node ids outside `visible`: such strings leave lists, such keys leave
    dicts, and such values become None."""
    if isinstance(value, str):
        return value if set(_NODE_ID.findall(value)) <= visible else None
    if isinstance(value, dict):
        return {k: scrub(v, visible) for k, v in value.items() if mentioned_ids(k) <= visible}
    if isinstance(value, list):
        return [scrub(v, visible) for v in value if not isinstance(v, str) or mentioned_ids(v) <= visible]
    return value


# --- tokens --------------------------------------------------------------------------------------
def digest(token: str) -> str:
    """The stored form of a token: sha256, hex (decision 15.K1)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def grant_list(initiatives: Sequence[str] | None) -> tuple[str, ...] | None:
    if initiatives is None:
        return None
    names: list[str] = []
    for raw in initiatives:
        name = canonical(raw)
        if not name or len(raw.strip()) > 128:
            raise InvalidArgument("an initiative of a grant must be 1–128 characters", field="initiatives")
        names.append(name)
    if not names:
        raise InvalidArgument("give at least one initiative, or none for all of them", field="initiatives")
    return tuple(dict.fromkeys(names))


def add_token(
    rt: Runtime,
    name: str,
    initiatives: Sequence[str] | None,
    read_only: bool,
    by: str,
    expires_at: datetime | None = None,
) -> tuple[str, TokenRecord]:
    """Make a token `name` with these grants, accepted until `expires_at` (None: for good); returns
    the token (shown once) and its stored record.

    Raises:
        InvalidArgument: a malformed name or grant, a name already in use, or an expiry not after now.
    """
    if not _TOKEN_NAME.match(name):
        raise InvalidArgument(
            "a token name is 1–64 ASCII letters (a–z, A–Z), digits or . _ @ + -, starting with a letter or digit",
            field="name",
        )
    grants = grant_list(initiatives)
    token = TOKEN_PREFIX + base64.urlsafe_b64encode(rt.entropy(TOKEN_BYTES)).decode().rstrip("=")
    with rt.store.write() as session:
        # Stamped after the vault's newest write, as every write is (decision 483): a token record
        # stamped by a clock put back was the newest audit row, and the next write lost its floor.
        stamp = rt.write_time(session.newest_stamp())
        now = fmt(stamp)
        record = TokenRecord(name, digest(token), grants, read_only, now, expires_at=_expiry(expires_at, rt.reading()))
        if not session.add_token(record):
            raise InvalidArgument(f"a token named {name!r} exists; revoke it first", field="name")
        session.append_audit(_audit("token_add", by, now, record))
    return token, record


def _expiry(expires_at: datetime | None, now: datetime) -> str | None:
    """The stored form of an expiry; one not after `now` would make a token refused from the start.
    `now` is the clock tokens are checked by (`check`), not the write's stamp: that follows the
    vault's newest stamp and may run ahead of it, refusing an expiry the server would honour."""
    if expires_at is None:
        return None
    if expires_at <= now:
        raise InvalidArgument(f"the expiry {fmt(expires_at)} is not after now ({fmt(now)})", field="expires")
    return fmt(expires_at)


def renew_token(rt: Runtime, name: str, expires_at: datetime | None, by: str) -> TokenRecord:
    """Set when the token `name` stops being accepted (None: never), keeping its secret and grants:
    its holder goes on with the token they have, an expired one included.

    Raises:
        NotFound: no token has that name.
        InvalidArgument: an expiry not after now.
    """
    with rt.store.write() as session:
        stamp = rt.write_time(session.newest_stamp())
        now = fmt(stamp)
        # Locked (PostgreSQL: `FOR UPDATE`) as `token_grants.grant_token` reads it: on READ COMMITTED a
        # renewal racing another change of this token recorded a "before" that change had replaced.
        before = session.token_by_name(name, for_update=True)
        renewed = session.set_token_expiry(name, _expiry(expires_at, rt.reading()))
        if before is None or renewed is None:
            raise NotFound(f"no token named {name!r}", field="name")
        change = {"field": "expires_at", "before": before.expires_at, "after": renewed.expires_at}
        changes: list[dict[str, Any]] = [{"field": "token", "before": name, "after": name}, change]
        session.append_audit(AuditRecord(now, "token_renew", by, None, None, [], changes))
    return renewed


def expired(record: TokenRecord, now: datetime) -> bool:
    """Whether `record`'s expiry has come by `now`: from that moment it is refused."""
    return record.expires_at is not None and parse_ts(record.expires_at) <= now


def list_tokens(rt: Runtime) -> list[TokenRecord]:
    with rt.store.read() as session:
        return session.list_tokens()


def revoke_token(rt: Runtime, name: str, by: str) -> TokenRecord:
    """Delete the token `name`: from now on it is refused.

    Raises:
        NotFound: no token has that name.
    """
    with rt.store.write() as session:
        now = fmt(rt.write_time(session.newest_stamp()))
        removed = session.delete_token(name)
        if removed is None:
            raise NotFound(f"no token named {name!r}", field="name")
        session.append_audit(_audit("token_revoke", by, now, removed))
    return removed


def _audit(operation: str, by: str, now: str, record: TokenRecord) -> AuditRecord:
    grant = {
        "initiatives": list(record.initiatives) if record.initiatives is not None else None,
        "expires_at": record.expires_at,
    }
    changes: list[dict[str, Any]] = [
        {
            "field": "token",
            "before": None if operation == "token_add" else record.name,
            "after": record.name if operation == "token_add" else None,
        },
        {"field": "grant", "before": None, "after": {**grant, "read_only": record.read_only}},
    ]
    return AuditRecord(now, operation, by, None, None, [], changes)


@dataclass(frozen=True, slots=True)
class Expired:
    """A vault token past its expiry: refused as a revoked one is, but its holder — who alone can
    present it — is told which token it is and when it expired."""

    name: str
    at: str


def check(store: Store, token: str, now: datetime) -> TokenRecord | Expired | None:
    """The vault's token `token`; `Expired` when its expiry has come by `now`; None when the vault
    holds no such token. Looked up by its digest and compared in constant time; its `last_used` is
    written at most once per `TOUCH_EVERY` (an expired one's never: it was refused, not used), and
    not at all while the vault cannot be written (a read-only file, a full disk): a bookkeeping
    write never refuses a token that reads (decision 172)."""
    wanted = digest(token)
    with store.read() as session:
        found = session.token_by_digest(wanted)
    if found is None or not hmac.compare_digest(found.digest, wanted):
        return None
    if found.expires_at is not None and expired(found, now):
        return Expired(found.name, found.expires_at)
    if found.last_used is None or now - parse_ts(found.last_used) >= TOUCH_EVERY:
        try:
            with store.write() as session:
                session.touch_token(found.name, fmt(now))
        except Unavailable:
            pass  # the next request that can write records it
    return found


def verify(store: Store, token: str, now: datetime) -> TokenRecord | None:
    """The vault's token `token` while it is accepted at `now`, or None (`check` says why not)."""
    found = check(store, token, now)
    return found if isinstance(found, TokenRecord) else None


def principal_of(record: TokenRecord) -> Principal:
    # Compared in NFC, however a grant was spelled when the token was made (decision 184).
    grants = frozenset(canonical(n) for n in record.initiatives) if record.initiatives is not None else None
    return Principal(record.name, grants, record.read_only)
