"""Tokens and grants in the service layer, on both backends: tokens stored hashed and audited,
verified in constant time, revoked for good; a limited or read-only principal refused where it
must be, and shown nothing of other initiatives where a call would otherwise name them."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

import pytest

from kaeru.errors import Forbidden, InvalidArgument, NotFound
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.base import Store


def _tokens_rows(store: Store) -> list[Any]:
    with store.read() as session:
        return session.list_tokens()


def test_a_token_is_stored_as_its_sha256_only_and_its_changes_are_audited(service: Service, store: Store) -> None:
    token, record = grants.add_token(service.rt, "alice", ["web", "infra"], True, "admin-person")
    assert token.startswith(grants.TOKEN_PREFIX) and len(token) >= len(grants.TOKEN_PREFIX) + 43  # 32 bytes
    [stored] = _tokens_rows(store)
    assert stored.digest == hashlib.sha256(token.encode()).hexdigest() == record.digest
    assert token not in json.dumps([stored.name, stored.digest, stored.initiatives])
    assert stored.initiatives == ("web", "infra") and stored.read_only and stored.last_used is None

    found = grants.verify(store, token, service.rt.now())
    assert found is not None and found.name == "alice"
    assert grants.verify(store, token[:-1] + ("A" if token[-1] != "A" else "B"), service.rt.now()) is None
    assert _tokens_rows(store)[0].last_used is not None  # the first use is recorded

    with pytest.raises(InvalidArgument):
        grants.add_token(service.rt, "alice", None, False, "admin-person")  # a name is taken once
    with pytest.raises(InvalidArgument):
        grants.add_token(service.rt, "not a name", None, False, "admin-person")

    grants.revoke_token(service.rt, "alice", "admin-person")
    assert grants.verify(store, token, service.rt.now()) is None
    with pytest.raises(NotFound):
        grants.revoke_token(service.rt, "alice", "admin-person")

    with store.read() as session:
        every = session.audit_by_seq(list(range(1, 200)))
    ops = [(r.operation, r.actor) for r in every.values()]
    assert ("token_add", "admin-person") in ops and ("token_revoke", "admin-person") in ops
    assert token not in json.dumps([r.changes for r in every.values()])


def test_last_used_is_written_at_most_once_an_hour(service: Service, store: Store) -> None:
    token, _ = grants.add_token(service.rt, "bob", None, False, "admin")
    now = service.rt.now()
    grants.verify(store, token, now)
    first = _tokens_rows(store)[0].last_used
    grants.verify(store, token, now + timedelta(minutes=30))
    assert _tokens_rows(store)[0].last_used == first
    grants.verify(store, token, now + timedelta(hours=2))
    assert _tokens_rows(store)[0].last_used != first


def test_a_limited_principal_is_refused_outside_its_grants_and_a_read_only_one_writes_nothing(
    service: Service,
) -> None:
    run = build_server(service).registry.run
    mine = run("note", {"initiative": "webshop", "text": "the cart total rounds half up"})["data"]["primary"]["id"]
    theirs = run("note", {"initiative": "payroll", "text": "salaries are paid on the 25th"})["data"]["primary"]["id"]
    with grants.acting(grants.Principal("carol", frozenset({"webshop", "webshob-x"}))):
        # Another initiative is forbidden whether it exists or not; nothing says which.
        for name in ("payroll", "nosuch"):
            answer = run("search", {"initiatives": [name], "text": "paid"})
            assert answer["state"] == "rejected" and answer["issues"][0]["code"] == "forbidden"
            assert answer["issues"][0]["message"] == f"this token has no grant for initiative {name!r}"
        listed = run("initiatives", {})["data"]["initiatives"]
        assert [i["name"] for i in listed] == ["webshop"]
        # A node of another initiative is the same miss as an id that does not exist.
        answer = run("read", {"initiative": "webshop", "node": {"id": theirs}})
        assert answer["issues"][0]["code"] == "not_found" and "payroll" not in json.dumps(answer)
        # No did-you-mean from initiatives outside the grants.
        answer = run("search", {"initiatives": ["webshob-x"], "text": "cart"})
        assert "payroll" not in json.dumps(answer)
        # Writes in the grants are made as the token's name.
        wrote = run("note", {"initiative": "webshop", "text": "carol was here"})
        assert wrote["state"] == "applied"
        history = run("trail", {"initiative": "webshop", "node": wrote["data"]["primary"]["id"], "kind": "history"})
        assert {e["actor"] for e in history["data"]["entries"]} == {"carol"}
        # Linking to a node outside the grants cannot reach it.
        linked = run(
            "link",
            {
                "initiative": "webshop",
                "action": "add",
                "from": mine,
                "to": theirs,
                "edge_type": "refers_to",
                "weight": 1,
            },
        )
        assert linked["issues"][0]["code"] == "not_found"
        moved = run("initiative", {"initiative": "webshop", "action": "merge", "to": "payroll"})
        assert moved["issues"][0]["code"] == "forbidden"
        assert (
            run("archive", {"action": "export", "format": "amg", "path": "x.amg"})["issues"][0]["code"] == "forbidden"
        )
    with grants.acting(grants.Principal("dave", None, read_only=True)):
        for tool, args in (
            ("note", {"initiative": "webshop", "text": "no"}),
            ("forget", {"initiative": "webshop", "node": mine, "reason": "no"}),
            ("initiative", {"initiative": "webshop", "action": "rename", "to": "shop"}),
        ):
            answer = run(tool, args)
            assert answer["state"] == "rejected" and answer["issues"][0]["code"] == "forbidden", (tool, answer)
        assert run("search", {"initiatives": ["payroll"], "text": "paid"})["data"]["total"] == 1


def test_without_a_principal_the_call_is_the_local_admin(service: Service) -> None:
    assert grants.current() is None
    assert grants.actor("agent") == "agent"
    grants.check_write("note")
    grants.check_args({"initiative": "anything"})
    with grants.acting(grants.Principal("x", frozenset({"a"}))), pytest.raises(Forbidden):
        grants.check_args({"initiatives": ["a", "b"]})
    assert grants.current() is None


def test_a_limited_principal_pages_and_counts_only_the_links_it_may_see(service: Service) -> None:
    """A node linked from other initiatives too: the neighbours' pages and total hold only the
    links within the token's grants (decision 87: filtered before paging)."""
    run = build_server(service).registry.run
    hub = run("note", {"initiative": "webshop", "text": "the checkout flow", "name": "hub"})["data"]["primary"]["id"]
    for i in range(3):
        run("note", {"initiative": "webshop", "text": f"cart step {i}", "link_to": hub})
        run("note", {"initiative": "payroll", "text": f"salary step {i}", "link_to": {"id": hub}})
    with grants.acting(grants.Principal("carol", frozenset({"webshop"}))):
        first = run("trail", {"initiative": "webshop", "node": "hub", "kind": "neighbours", "limit": 2})
        rest = run("trail", first["continuation"]["next_arguments"])
    shown = [e["node"]["body"] for page in (first, rest) for e in page["data"]["entries"]]
    # Neighbours page by key (source id): ids made within one millisecond do not sort by creation.
    assert sorted(shown) == ["cart step 0", "cart step 1", "cart step 2"]
    assert first["data"]["total"] == 3 and "payroll" not in json.dumps([first, rest])
