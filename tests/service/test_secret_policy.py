"""The secret guard on every write: reject (default), redact, or allow (KAERU_SECRET_POLICY)."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.service.support import primary

P = "secrets-lab"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" + "kLmN"
AWS = "AKIA" + "ABCDEFGHIJKLMNOP"


def with_policy(store: Store, vault: VaultSpec, policy: str) -> Service:
    return Service(store, vault.settings(secret_policy=policy))


def nothing_matches(service: Service, word: str) -> bool:
    return service.search(parse("search", {"initiatives": [P], "text": word, "filters": {"current": "all"}})).total == 0


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"text": f"deploy with {GITHUB} today"}, "text"),
        ({"text": "deploy today", "name": f"key {AWS}"}, "name"),
        ({"text": "deploy today", "tags": ["ok", f"{GITHUB}"]}, "tags[1]"),
        ({"text": "deploy today", "kind": "reference", "source": "config:\nDB_PASSWORD=hunter2hunter2\n"}, "source"),
        ({"text": "deploy today", "url": f"https://example.org/?k={GITHUB}"}, "url"),
    ],
    ids=["text", "name", "tags", "source", "url"],
)
def test_reject_names_the_field_and_writes_nothing(service: Service, args: dict[str, Any], field: str) -> None:
    """By default a secret rejects the write with secret_detected naming the field; nothing is stored."""
    service.note(parse("note", {"initiative": P, "text": "anchor"}))
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, **args}))
    assert err.value.code == "secret_detected"
    assert err.value.field == field
    assert not err.value.retryable
    assert nothing_matches(service, "deploy")


def test_rejection_message_does_not_echo_the_secret(service: Service) -> None:
    """The error explains the rule without repeating the secret."""
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": f"token {GITHUB}"}))
    assert GITHUB not in str(err.value)


def test_rejected_first_write_creates_no_initiative(service: Service) -> None:
    """A rejected write to a new initiative leaves no initiative behind."""
    with pytest.raises(KaeruError):
        service.note(parse("note", {"initiative": "fresh-scope", "text": f"token {GITHUB}"}))
    result = service.search(parse("search", {"initiatives": ["fresh-scope"], "text": "token"}))
    assert [i.code for i in result.issues] == ["unknown_initiative"]


def test_claim_evidence_method_is_guarded(service: Service) -> None:
    """Evidence text is guarded too; the claim is not written."""
    with pytest.raises(KaeruError) as err:
        service.claim(
            parse(
                "claim",
                {
                    "initiative": P,
                    "text": "lighthouse works",
                    "initial_status": "supported",
                    "evidence": {"method": AWS},
                },
            )
        )
    assert err.value.code == "secret_detected"
    assert err.value.field == "evidence.method"


def test_claim_text_is_guarded(service: Service) -> None:
    """A claim's text is guarded."""
    with pytest.raises(KaeruError) as err:
        service.claim(parse("claim", {"initiative": P, "text": f"the key {AWS} still works"}))
    assert err.value.code == "secret_detected"
    assert err.value.field == "text"


def test_revise_patch_is_guarded_and_node_unchanged(service: Service) -> None:
    """A patch carrying a secret is rejected naming the patch field; the node keeps its revision."""
    created, _ = service.note(parse("note", {"initiative": P, "text": "clean body"}))
    node = primary(created)
    revision = service.read(parse("read", {"initiative": P, "node": node})).hits[0].node.revision
    for field in ("body", "description", "name"):
        with pytest.raises(KaeruError) as err:
            service.revise(parse("revise", {"initiative": P, "node": node, "patch": {field: f"now {GITHUB}"}}))
        assert err.value.code == "secret_detected"
        assert err.value.field == f"patch.{field}"
    view = service.read(parse("read", {"initiative": P, "node": node})).hits[0]
    assert view.node.revision == revision
    assert view.node.body == "clean body"


def test_replace_source_is_guarded(service: Service) -> None:
    """New source bytes are guarded like the first ones."""
    created, _ = service.note(parse("note", {"initiative": P, "text": "doc", "kind": "reference", "source": "clean"}))
    with pytest.raises(KaeruError) as err:
        service.replace(parse("replace", {"initiative": P, "node": primary(created), "source": f"leaked {AWS}"}))
    assert err.value.code == "secret_detected"
    assert err.value.field == "source"


def test_clean_lookalikes_are_accepted(service: Service) -> None:
    """Placeholders and prose that merely mention secrets are stored as written."""
    text = "API_KEY=todo\nask-the-user-about-the-deployment-target\nthe token budget is 8000"
    created, _ = service.note(parse("note", {"initiative": P, "text": text}))
    assert service.read(parse("read", {"initiative": P, "node": primary(created)})).hits[0].node.body == text


def test_redact_stores_text_without_the_secret(store: Store, vault: VaultSpec) -> None:
    """With redact, the write applies, the secret is gone, the rest stays, and a warning says so."""
    service = with_policy(store, vault, "redact")
    outcome, _ = service.note(parse("note", {"initiative": P, "text": f"deploy with {GITHUB} today", "tags": [AWS]}))
    assert outcome.state == "applied"
    warnings = [i for i in outcome.issues if i.code == "secret_detected"]
    assert warnings
    view = service.read(parse("read", {"initiative": P, "node": primary(outcome)})).hits[0]
    body = view.node.body or ""
    assert GITHUB not in body
    assert body.startswith("deploy with ") and body.endswith(" today")
    assert all(AWS not in tag for tag in view.node.tags)
    assert nothing_matches(service, GITHUB)


def test_redact_applies_to_revise(store: Store, vault: VaultSpec) -> None:
    """Redaction also applies to patches."""
    service = with_policy(store, vault, "redact")
    created, _ = service.note(parse("note", {"initiative": P, "text": "clean"}))
    service.revise(parse("revise", {"initiative": P, "node": primary(created), "patch": {"body": f"now {AWS} leaked"}}))
    body = service.read(parse("read", {"initiative": P, "node": primary(created)})).hits[0].node.body or ""
    assert AWS not in body
    assert body.startswith("now ")


def test_allow_stores_verbatim(store: Store, vault: VaultSpec) -> None:
    """With allow, the text is stored exactly as given."""
    service = with_policy(store, vault, "allow")
    text = f"deploy with {GITHUB} today"
    outcome, _ = service.note(parse("note", {"initiative": P, "text": text}))
    assert service.read(parse("read", {"initiative": P, "node": primary(outcome)})).hits[0].node.body == text
    assert not [i for i in outcome.issues if i.code == "secret_detected"]


def test_code_about_credentials_is_stored_under_reject(service: Service) -> None:
    """Issue 15: a coding agent's note of code that names passwords but holds none is not refused."""
    text = (
        "password = db.Column(db.String(120))\n"
        "password = data.get('password')\n"
        "hashed_password = generate_password_hash(password, method='pbkdf2:sha256')\n"
        "client = WebClient(token='xoxb-your-slack-token')"
    )
    created, _ = service.note(parse("note", {"initiative": P, "text": text}))
    assert service.read(parse("read", {"initiative": P, "node": primary(created)})).hits[0].node.body == text


def test_redact_replaces_only_the_secret_span(store: Store, vault: VaultSpec) -> None:
    """With redact, only the secret is replaced: the key, quotes and the rest of the line stay."""
    service = with_policy(store, vault, "redact")
    text = 'conn = connect(user="app", password="Tr0ub4dor-3x", host="db")  # staging'
    outcome, _ = service.note(parse("note", {"initiative": P, "text": text}))
    body = service.read(parse("read", {"initiative": P, "node": primary(outcome)})).hits[0].node.body
    assert body == 'conn = connect(user="app", password="[REDACTED:env_secret]", host="db")  # staging'
