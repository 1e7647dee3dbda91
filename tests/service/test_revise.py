"""`revise` (patch in place, same id) and `replace` (new immutable source bytes as a new revision)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.domain.timefmt import fmt
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.service.outcomes import MutationOutcome, NodeView
from tests.service.support import Clock, primary

P = "revisions"


def note(service: Service, **args: Any) -> str:
    outcome, _ = service.note(parse("note", {"initiative": P, **args}))
    return primary(outcome)


def read(service: Service, node: Any, **extra: Any) -> NodeView:
    return service.read(parse("read", {"initiative": P, "node": node, **extra})).hits[0]


def revise(service: Service, node: str, patch: dict[str, Any], **extra: Any) -> MutationOutcome:
    outcome, _ = service.revise(parse("revise", {"initiative": P, "node": node, "patch": patch, **extra}))
    return outcome


def rejects(call: Callable[[], object]) -> KaeruError:
    with pytest.raises(KaeruError) as err:
        call()
    return err.value


def test_patch_keeps_id_changes_revision_and_reports_changes(service: Service) -> None:
    """A patch rewrites the same node: same id, new revision, `changes` list before/after per field."""
    node = note(service, text="first body", name="plan")
    before = read(service, node)
    outcome = revise(service, node, {"body": "second body", "description": "why it changed"})
    assert outcome.state == "applied"
    assert primary(outcome) == node
    after = read(service, node)
    assert after.node.id == node
    assert after.node.revision != before.node.revision
    assert outcome.primary is not None and outcome.primary.revision == after.node.revision
    changes = {c.field: (c.before, c.after) for c in outcome.changes}
    assert changes == {"body": ("first body", "second body"), "description": (None, "why it changed")}
    assert after.node.body == "second body"
    assert after.node.description == "why it changed"
    assert after.node.name == "plan"


def test_created_at_stays_and_recorded_at_moves(timed: Service, clock: Clock) -> None:
    """A revision keeps the node's creation time and records its own time."""
    node = note(timed, text="v1")
    created = read(timed, node).node
    clock.tick()
    revise(timed, node, {"body": "v2"})
    revised = read(timed, node).node
    assert revised.created_at == created.created_at
    assert revised.recorded_at > created.recorded_at


def test_invalid_reminder_is_refused(service: Service) -> None:
    """A reminder needs a valid date and window_days ≥ 1; the field is named."""
    node = note(service, text="x")
    err = rejects(lambda: revise(service, node, {"reminder": {"after": "2026-06-01", "window_days": 0}}))
    assert err.code == "invalid_argument"
    assert err.field is not None and err.field.startswith("patch.reminder")
    err = rejects(lambda: revise(service, node, {"reminder": {"after": "June 1st", "window_days": 2}}))
    assert err.code == "invalid_argument"
    assert "reminder" not in read(service, node).node.properties


def test_search_follows_revisions(service: Service) -> None:
    """After a revise, the old words no longer find the node and the new ones do."""
    node = note(service, text="kubernetes upgrade", name="infra-note")
    revise(service, node, {"body": "terraform migration", "name": "platform-note"})
    assert service.search(parse("search", {"initiatives": [P], "text": "kubernetes"})).total == 0
    assert service.search(parse("search", {"initiatives": [P], "text": "infra"})).total == 0
    assert [h.node.id for h in service.search(parse("search", {"initiatives": [P], "text": "terraform"})).hits] == [
        node
    ]
    assert [h.node.id for h in service.search(parse("search", {"initiatives": [P], "text": "platform"})).hits] == [node]


def test_omitted_fields_are_unchanged(service: Service) -> None:
    """Fields not in the patch keep their values (including tags, layer, tier)."""
    node = note(service, text="body", name="plan", tags=["keep-me"], kind="idea", options={"layer": "hot"})
    revise(service, node, {"description": "desc"})
    view = read(service, node)
    assert view.node.body == "body"
    assert view.node.name == "plan"
    assert "keep-me" in view.node.tags
    assert view.node.layer.value == "hot"
    assert view.node.tier.value == "archival"


def test_rename_is_resolvable_by_new_name_only(service: Service) -> None:
    """After a rename the new name resolves and the old one does not."""
    node = note(service, text="body", name="old-name")
    revise(service, node, {"name": "new-name"})
    assert read(service, "new-name").node.id == node
    assert rejects(lambda: read(service, "old-name")).code == "not_found"


def test_equal_patch_is_unchanged_with_no_new_revision(service: Service) -> None:
    """A patch equal to the current values is `unchanged` and records no revision."""
    node = note(service, text="body", name="plan")
    before = read(service, node)
    outcome = revise(service, node, {"name": "plan", "body": "body"})
    assert outcome.state == "unchanged"
    assert outcome.changes == []
    assert read(service, node).node.revision == before.node.revision


def test_stale_expected_revision_conflicts(service: Service) -> None:
    """A stale expected_revision is a retryable revision_conflict naming the current revision; nothing changes."""
    node = note(service, text="v1")
    stale = read(service, node).node.revision
    revise(service, node, {"body": "v2"})
    current = read(service, node).node.revision
    err = rejects(lambda: revise(service, node, {"body": "v3"}, expected_revision=stale))
    assert err.code == "revision_conflict"
    assert err.retryable
    assert current in str(err)
    assert read(service, node).node.body == "v2"


def test_a_conflict_says_who_changed_what_since_the_revision_read(service: Service) -> None:
    """ "re-read it and retry" alone left an agent to find out whether its edit still held: the
    message names each later revision's writer and the fields it changed."""
    node = note(service, text="v1", reminder={"after": "2026-03-01", "window_days": 3})
    stale = read(service, node).node.revision
    service.revise(parse("revise", {"initiative": P, "node": node, "patch": {"body": "v2"}}), actor="bob")
    service.revise(parse("revise", {"initiative": P, "node": node, "patch": {"reminder": None}}), actor="carol")
    with service.store.read() as session:
        second, third = (e.node.revision for e in session.revision_log(node)[1:])
    err = rejects(lambda: revise(service, node, {"body": "v3"}, expected_revision=stale))
    assert f"since it, bob changed body ({second}); carol changed properties.reminder ({third})" in err.message
    unknown = rejects(lambda: revise(service, node, {"body": "v3"}, expected_revision="9-000000000000"))
    assert "no revision of this node has that name" in unknown.message


def test_matching_expected_revision_applies(service: Service) -> None:
    """Compare-and-set with the current revision applies."""
    node = note(service, text="v1")
    current = read(service, node).node.revision
    assert revise(service, node, {"body": "v2"}, expected_revision=current).state == "applied"
    assert read(service, node).node.body == "v2"


def test_reminder_set_and_cleared(service: Service) -> None:
    """A reminder can be set by patch and `null` clears it."""
    node = note(service, text="check the certificate")
    revise(service, node, {"reminder": {"after": "2026-06-01", "window_days": 3}})
    assert read(service, node).node.properties["reminder"] == {"after": "2026-06-01", "window_days": 3}
    outcome = revise(service, node, {"reminder": None})
    assert outcome.state == "applied"
    assert "reminder" not in read(service, node).node.properties


def test_applicability_set_and_cleared_on_a_rule(service: Service) -> None:
    """A rule's applicability can be patched and `null` clears it."""
    rule = note(service, text="no deploys", kind="rule")
    revise(service, rule, {"applicability": {"through": "2026-12-31"}})
    assert read(service, rule).node.properties["applicability"] == {"through": "2026-12-31"}
    revise(service, rule, {"applicability": None})
    assert "applicability" not in read(service, rule).node.properties


def test_constraint_state_release_on_a_rule(service: Service) -> None:
    """A rule can be released and re-activated by patch."""
    rule = note(service, text="no deploys", kind="rule")
    outcome = revise(service, rule, {"constraint_state": "released"})
    assert [(c.field, c.before, c.after) for c in outcome.changes] == [("constraint_state", "active", "released")]
    assert read(service, rule).node.properties["constraint_state"] == "released"


@pytest.mark.parametrize("field", ["constraint_state", "applicability"])
def test_rule_fields_are_refused_on_non_rules(service: Service, field: str) -> None:
    """constraint_state and applicability only apply to rules; the node is untouched."""
    node = note(service, text="an ordinary observation")
    revision = read(service, node).node.revision
    value: Any = "released" if field == "constraint_state" else {"through": "2026-12-31"}
    err = rejects(lambda: revise(service, node, {field: value}))
    assert err.code == "invalid_argument"
    assert err.field == f"patch.{field}"
    assert read(service, node).node.revision == revision


def test_unknown_patch_field_is_refused(service: Service) -> None:
    """Only the documented fields can be patched (tier/type/id are identity, not patchable)."""
    node = note(service, text="x")
    err = rejects(lambda: revise(service, node, {"tier": "archival"}))
    assert err.code == "invalid_argument"


def test_empty_patch_is_refused(service: Service) -> None:
    """A patch must name at least one field."""
    node = note(service, text="x")
    assert rejects(lambda: revise(service, node, {})).code == "invalid_argument"


def test_revise_missing_node_is_not_found(service: Service) -> None:
    """Revising a name that does not exist is not_found."""
    note(service, text="x")
    err = rejects(lambda: revise(service, "ghost", {"body": "y"}))
    assert err.code == "not_found"
    assert err.field == "node"


def test_tags_are_rederived_from_new_text(service: Service) -> None:
    """Changing the text re-derives topic tags; manual and kind tags stay."""
    node = note(service, text="kubernetes cluster upgrade", name="infra-note", tags=["ops"])
    revise(service, node, {"body": "terraform state migration"})
    tags = read(service, node).node.tags
    assert "ops" in tags and "kind:observation" in tags
    assert "topic:terraform" in tags
    assert "topic:kubernetes" not in tags


def test_sourced_reference_body_is_immutable(service: Service) -> None:
    """Patching a sourced reference's body is refused with immutable_source; the source is unchanged."""
    node = note(service, text="the paper", kind="reference", source="original bytes")
    err = rejects(lambda: revise(service, node, {"body": "edited bytes"}))
    assert err.code == "immutable_source"
    assert read(service, node).node.body == "original bytes"


def test_sourced_reference_description_is_patchable(service: Service) -> None:
    """The description of a sourced reference can still be revised."""
    node = note(service, text="the paper", kind="reference", source="original bytes")
    revise(service, node, {"description": "the 2024 paper"})
    view = read(service, node)
    assert view.node.description == "the 2024 paper"
    assert view.node.body == "original bytes"


def test_revise_a_claim_keeps_it_a_hypothesis(service: Service) -> None:
    """Revising keeps the node's type, tier and status."""
    outcome, _ = service.claim(parse("claim", {"initiative": P, "text": "x is slow", "initial_status": "supported"}))
    node = primary(outcome)
    revise(service, node, {"body": "x is slow under load"})
    view = read(service, node)
    assert view.node.node_type.value == "hypothesis"
    assert view.node.status == "supported"


# --- replace ---------------------------------------------------------------------------------


def test_replace_swaps_source_bytes_as_a_new_revision(timed: Service, clock: Clock) -> None:
    """`replace` records new source bytes and their sha256; the old bytes are still readable as of before."""
    node = note(timed, text="the spec", kind="reference", source="version one")
    before = read(timed, node)
    t_before = clock.tick()
    clock.tick()
    outcome, _ = timed.replace(parse("replace", {"initiative": P, "node": node, "source": "version two"}))
    assert outcome.state == "applied"
    now = read(timed, node)
    assert now.node.id == node
    assert now.node.body == "version two"
    assert now.node.properties["source"]["sha256"] == hashlib.sha256(b"version two").hexdigest()
    assert now.node.revision != before.node.revision
    assert now.node.description == "the spec"
    past = read(timed, node, at=fmt(t_before))
    assert past.node.body == "version one"
    assert past.node.properties["source"]["sha256"] == hashlib.sha256(b"version one").hexdigest()


def test_replace_with_same_bytes_is_unchanged(service: Service) -> None:
    """Replacing with identical bytes records nothing."""
    node = note(service, text="the spec", kind="reference", source="same")
    revision = read(service, node).node.revision
    outcome, _ = service.replace(parse("replace", {"initiative": P, "node": node, "source": "same"}))
    assert outcome.state == "unchanged"
    assert read(service, node).node.revision == revision


def test_replace_honours_expected_revision(service: Service) -> None:
    """`replace` is compare-and-set with expected_revision."""
    node = note(service, text="the spec", kind="reference", source="one")
    stale = read(service, node).node.revision
    service.replace(parse("replace", {"initiative": P, "node": node, "source": "two"}))
    err = rejects(
        lambda: service.replace(
            parse("replace", {"initiative": P, "node": node, "source": "three", "expected_revision": stale})
        )
    )
    assert err.code == "revision_conflict"
    assert err.retryable
    assert read(service, node).node.body == "two"


def test_replace_on_a_non_reference_is_refused(service: Service) -> None:
    """Only references carry a source."""
    node = note(service, text="an idea", kind="idea")
    err = rejects(lambda: service.replace(parse("replace", {"initiative": P, "node": node, "source": "bytes"})))
    assert err.code == "invalid_argument"
    assert read(service, node).node.body == "an idea"
