"""A token's expiry in the service layer, on both backends: stored as a UTC instant, accepted until
it comes and refused from then on (saying so, and not recorded as a use), moved by a renewal that
keeps the token itself, and audited. Without an expiry a token is accepted at any moment."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from kaeru.domain.timefmt import fmt, parse_ts
from kaeru.errors import InvalidArgument, NotFound
from kaeru.service import Service, grants
from kaeru.service.runtime import vault_now
from kaeru.storage.base import Store, TokenRecord
from tests.backends import VaultSpec


def _stored(store: Store, name: str) -> TokenRecord:
    with store.read() as session:
        return next(t for t in session.list_tokens() if t.name == name)


def _audit(store: Store, operation: str) -> list[Any]:
    with store.read() as session:
        every = session.audit_by_seq(list(range(1, 200)))
    return [r for r in every.values() if r.operation == operation]


def test_a_token_is_accepted_until_its_expiry_and_refused_from_then_on(service: Service, store: Store) -> None:
    now = service.rt.now()
    token, record = grants.add_token(service.rt, "dora", ["web"], False, "owner", now + timedelta(days=30))
    stored = _stored(store, "dora")
    assert stored.expires_at == record.expires_at == fmt(now + timedelta(days=30))
    ends = parse_ts(stored.expires_at)

    accepted = grants.verify(store, token, ends - timedelta(microseconds=1))
    assert accepted is not None and accepted.name == "dora"
    used = _stored(store, "dora").last_used
    assert used is not None

    assert grants.check(store, token, ends) == grants.Expired("dora", stored.expires_at)
    assert grants.verify(store, token, ends) is None
    # A day on, a use would be recorded (`TOUCH_EVERY`): a refused token is not used.
    assert grants.verify(store, token, ends + timedelta(days=1)) is None
    assert _stored(store, "dora").last_used == used
    # Someone without the token learns nothing of it.
    assert grants.check(store, token[:-1] + ("A" if token[-1] != "A" else "B"), ends) is None

    [added] = _audit(store, "token_add")
    assert added.changes[1]["after"]["expires_at"] == stored.expires_at


def test_a_token_without_an_expiry_never_expires(service: Service, store: Store) -> None:
    token, record = grants.add_token(service.rt, "eve", None, True, "owner")
    assert record.expires_at is None and _stored(store, "eve").expires_at is None
    assert grants.verify(store, token, datetime(9999, 12, 31, tzinfo=service.rt.now().tzinfo)) is not None


def test_an_expiry_that_has_passed_is_refused_and_nothing_is_stored(service: Service, store: Store) -> None:
    now = service.rt.now()
    with pytest.raises(InvalidArgument) as refused:
        grants.add_token(service.rt, "fay", None, False, "owner", now - timedelta(seconds=1))
    assert refused.value.field == "expires"
    with store.read() as session:
        assert session.list_tokens() == []


def test_renewing_moves_the_expiry_of_the_same_token_an_expired_one_too(
    service: Service, store: Store, vault: VaultSpec
) -> None:
    """The owner extends a person's access without handing out a new token; `None` lifts the expiry."""
    now = service.rt.now()
    # Made a month ago by a process whose clock read then, expired yesterday.
    then = Service(store, vault.settings(), clock=lambda: now - timedelta(days=30))
    token, made = grants.add_token(then.rt, "gus", ["web"], True, "owner", now - timedelta(days=1))
    assert grants.check(store, token, service.rt.now()) == grants.Expired("gus", made.expires_at or "")

    renewed = grants.renew_token(service.rt, "gus", now + timedelta(days=7), "owner")
    assert renewed.expires_at == fmt(now + timedelta(days=7)) == _stored(store, "gus").expires_at
    assert (renewed.digest, renewed.initiatives, renewed.read_only) == (made.digest, ("web",), True)
    accepted = grants.verify(store, token, service.rt.now())
    assert accepted is not None and accepted.name == "gus"
    assert grants.verify(store, token, now + timedelta(days=8)) is None

    lifted = grants.renew_token(service.rt, "gus", None, "owner")
    assert lifted.expires_at is None
    assert grants.verify(store, token, now + timedelta(days=8)) is not None

    with pytest.raises(InvalidArgument):
        grants.renew_token(service.rt, "gus", now - timedelta(hours=1), "owner")
    assert _stored(store, "gus").expires_at is None  # a refused renewal changed nothing
    with pytest.raises(NotFound):
        grants.renew_token(service.rt, "nobody", now + timedelta(days=1), "owner")

    renewals = _audit(store, "token_renew")
    assert [(r.actor, r.changes[1]) for r in renewals] == [
        ("owner", {"field": "expires_at", "before": made.expires_at, "after": renewed.expires_at}),
        ("owner", {"field": "expires_at", "before": renewed.expires_at, "after": None}),
    ]
    assert token not in json.dumps([r.changes for r in renewals])


def test_an_expiry_is_checked_against_the_clock_tokens_are_refused_by(
    service: Service, store: Store, vault: VaultSpec
) -> None:
    """A write made by a clock a day ahead leaves the vault's newest stamp in the future, and writes
    are stamped after it; the expiry was compared with that stamp, so a 12-hour token (which the
    server would accept for 12 hours) was refused as "not after now", and so was its renewal."""
    now = service.rt.now()
    ahead = Service(store, vault.settings(), clock=lambda: now + timedelta(days=1))
    grants.add_token(ahead.rt, "early", None, False, "owner")

    token, record = grants.add_token(service.rt, "ida", None, False, "owner", now + timedelta(hours=12))
    assert record.expires_at == fmt(now + timedelta(hours=12))
    assert grants.verify(store, token, vault_now(store)) is not None  # as the server checks it
    renewed = grants.renew_token(service.rt, "ida", now + timedelta(hours=13), "owner")
    assert renewed.expires_at == fmt(now + timedelta(hours=13))
