"""`note`: capture by epistemic status — node types, tiers, tags, names, initiatives and links."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.service.outcomes import MutationOutcome, NodeView

P = "kaeru-memory"


def new_id(outcome: MutationOutcome) -> str:
    assert outcome.state == "applied"
    assert outcome.primary is not None
    return outcome.primary.id


def note(service: Service, **args: Any) -> str:
    outcome, _ = service.note(parse("note", {"initiative": P, **args}))
    return new_id(outcome)


def read(service: Service, node: Any, initiative: str = P, **extra: Any) -> NodeView:
    result = service.read(parse("read", {"initiative": initiative, "node": node, **extra}))
    assert len(result.hits) == 1
    return result.hits[0]


@pytest.mark.parametrize(
    ("kind", "node_type", "tier"),
    [
        ("observation", "episode", "operational"),
        ("decision", "episode", "operational"),
        ("jot", "episode", "operational"),
        ("idea", "idea", "archival"),
        ("reference", "reference", "archival"),
        ("draft", "draft", "operational"),
        ("scratch", "scratch", "operational"),
        ("entity", "entity", "operational"),
        ("concept", "concept", "operational"),
        ("checklist", "checklist", "operational"),
        ("roadmap", "roadmap", "operational"),
        ("rule", "concept", "operational"),
    ],
)
def test_kind_decides_type_and_tier(service: Service, kind: str, node_type: str, tier: str) -> None:
    """Each kind becomes its node type; ideas and references are archival, the rest operational."""
    view = read(service, note(service, text=f"a {kind} about the deploy pipeline", kind=kind))
    assert view.node.node_type.value == node_type
    assert view.node.tier.value == tier
    assert view.node.body == f"a {kind} about the deploy pipeline"


@pytest.mark.parametrize("kind", ["observation", "decision", "jot", "idea", "draft"])
def test_kind_tag_records_the_epistemic_status(service: Service, kind: str) -> None:
    """Kinds that share a node type stay distinguishable by their `kind:` tag."""
    view = read(service, note(service, text="the build is green", kind=kind))
    assert f"kind:{kind}" in view.node.tags


def test_default_kind_is_observation(service: Service) -> None:
    """Without `kind` a note is an observation episode."""
    view = read(service, note(service, text="the build is green"))
    assert view.node.node_type.value == "episode"
    assert "kind:observation" in view.node.tags


def test_new_note_defaults(service: Service) -> None:
    """A new note is warm, local, current, in the call's initiative, with matching created/recorded times."""
    view = read(service, note(service, text="the build is green"))
    assert view.node.layer.value == "warm"
    assert view.node.visibility.value == "local"
    assert view.currentness.value == "current"
    assert view.successors == []
    assert view.initiatives == [P]
    assert view.node.created_at == view.node.recorded_at
    assert view.node.revision


def test_rule_is_an_active_concept(service: Service) -> None:
    """A rule is a concept tagged `kind:rule` with constraint_state active."""
    view = read(service, note(service, text="never push to main on Fridays", kind="rule"))
    assert view.node.node_type.value == "concept"
    assert "kind:rule" in view.node.tags
    assert view.node.properties["constraint_state"] == "active"


def test_rule_applicability_is_kept(service: Service) -> None:
    """A rule's applicability (task and/or through date) is stored, the task resolved to its id."""
    task_id = note(service, text="migrate the database", kind="checklist", name="db-migration")
    view = read(
        service,
        note(
            service,
            text="freeze writes during the migration",
            kind="rule",
            applicability={"task": "db-migration", "through": "2026-12-31"},
        ),
    )
    assert view.node.properties["applicability"] == {"task": task_id, "through": "2026-12-31"}


def test_applicability_is_only_for_rules(service: Service) -> None:
    """Applicability on a non-rule is refused, naming the field, and nothing is written."""
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "not a rule", "applicability": {"through": "2026-12-31"}}))
    assert err.value.code == "invalid_argument"
    assert err.value.field == "applicability"


def test_reference_with_source_keeps_the_source_verbatim(service: Service) -> None:
    """The body of a sourced reference is the immutable source; the text is its description; sha256 recorded."""
    source = "RFC 9562\n\n  UUIDv7 has a 48-bit timestamp.\n\ttabs and  double  spaces stay.\n"
    view = read(
        service,
        note(service, text="the UUID RFC", kind="reference", source=source, url="https://example.org/rfc9562"),
    )
    assert view.node.node_type.value == "reference"
    assert view.node.tier.value == "archival"
    assert view.node.body == source
    assert view.node.description == "the UUID RFC"
    assert view.node.properties["source"]["sha256"] == hashlib.sha256(source.encode()).hexdigest()
    assert view.node.properties["url"] == "https://example.org/rfc9562"


def test_source_is_only_for_references(service: Service) -> None:
    """A source on another kind is refused with the field named."""
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "x", "kind": "idea", "source": "verbatim"}))
    assert err.value.code == "invalid_argument"
    assert err.value.field == "source"


def test_free_tags_are_kept_alongside_derived_families(service: Service) -> None:
    """Caller tags stay; `kind:`, `topic:` and `lang:` tags are derived."""
    view = read(service, note(service, text="Postgres replication lag spiked", tags=["infra", "oncall"]))
    tags = view.node.tags
    assert "infra" in tags and "oncall" in tags
    assert "lang:en" in tags
    assert "topic:postgres" in tags
    assert "topic:replication" in tags


def test_russian_text_is_tagged_ru(service: Service) -> None:
    """The `lang:` tag follows the text's script."""
    view = read(service, note(service, text="Репликация отстаёт на стенде"))
    assert "lang:ru" in view.node.tags


def test_layer_option(service: Service) -> None:
    """`options.layer` places the node in that layer."""
    view = read(service, note(service, text="pinned context", options={"layer": "hot"}))
    assert view.node.layer.value == "hot"


def test_occurred_at_sets_created_at(service: Service) -> None:
    """A note about the past is created at that time and recorded now."""
    view = read(service, note(service, text="outage happened", occurred_at="2025-06-01T10:00:00Z"))
    assert view.node.created_at.startswith("2025-06-01T10:00:00")
    assert view.node.recorded_at > view.node.created_at


def test_occurred_at_may_be_a_time_ago_as_the_tool_describes_it(service: Service) -> None:
    """`occurred_at="2d ago"` (the description's own example) was refused as no ISO format
    (decision 284); a value that is no moment names the forms that are."""
    ago = read(service, note(service, text="deploy rolled back", occurred_at="2d ago")).node
    plain = read(service, note(service, text="deploy rolled forward", occurred_at="2d")).node
    assert ago.created_at[:13] == plain.created_at[:13] < ago.recorded_at
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "x", "occurred_at": "yesterday"}))
    assert err.value.code == "invalid_argument" and err.value.field == "occurred_at"
    assert "'yesterday' is not a moment" in str(err.value) and "2 days ago" in str(err.value)


def test_blank_text_is_refused(service: Service) -> None:
    """Whitespace-only text is an invalid argument."""
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "   \n "}))
    assert err.value.code == "invalid_argument"
    assert err.value.field == "text"


def test_unknown_kind_is_refused(service: Service) -> None:
    """A kind outside the vocabulary is refused, naming `kind`."""
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "x", "kind": "memo"}))
    assert err.value.code == "invalid_argument"
    assert err.value.field == "kind"


def test_large_body_round_trips_exactly(service: Service) -> None:
    """A 1 MB body of mixed scripts is stored and paged back byte for byte."""
    body = ("Ünïcödé текст 東京 tabs\tand\nnewlines " * 30_000)[:1_000_000]
    node = note(service, text=body)
    args: dict[str, Any] = {"initiative": P, "node": node, "budget_chars": 64000}
    pieces: list[str] = []
    while True:
        result = service.read(parse("read", args))
        pieces.append(result.hits[0].body or "")
        if result.continuation is None:
            break
        args = result.continuation.next_arguments
    assert "".join(pieces) == body


def test_nul_in_text_is_refused(service: Service) -> None:
    """A NUL character is refused with invalid_argument on `text`, never stored half-way."""
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "before\x00after zanzibar"}))
    assert err.value.code == "invalid_argument"
    assert err.value.field == "text"


# --- names ------------------------------------------------------------------------------------


def test_auto_name_from_first_words_and_suffix(service: Service) -> None:
    """Without a name, the node is named after its first five words plus a 6-character suffix."""
    view = read(service, note(service, text="Deploy the API to staging today, please"))
    stem, suffix = view.node.name.rsplit("-", 1)
    assert stem == "deploy-the-api-to-staging"
    assert len(suffix) == 6


def test_auto_names_are_unique_for_equal_texts(service: Service) -> None:
    """Two notes with the same text get different names, so each can be read by name."""
    first = read(service, note(service, text="same words"))
    second = read(service, note(service, text="same words"))
    assert first.node.name != second.node.name
    assert read(service, first.node.name).node.id == first.node.id
    assert read(service, second.node.name).node.id == second.node.id


def test_auto_name_fallback_for_wordless_text(service: Service) -> None:
    """Text without words still gets a usable name."""
    view = read(service, note(service, text="!!! ??? ..."))
    assert view.node.name
    assert read(service, view.node.name).node.id == view.node.id


def test_given_name_is_used(service: Service) -> None:
    """An explicit name is kept as given."""
    view = read(service, note(service, text="x y z", name="Release plan"))
    assert view.node.name == "Release plan"


def test_auto_name_suffix_is_not_a_topic(service: Service) -> None:
    """Topics describe the content: the random suffix of an auto-name is not a topic."""
    for _ in range(8):  # a suffix of digits only would hide the bug, so try a few
        view = read(service, note(service, text="deploy pipeline notes"))
        suffix = view.node.name.rsplit("-", 1)[1]
        assert f"topic:{suffix}" not in view.node.tags


# --- initiatives ------------------------------------------------------------------------------


def test_first_write_creates_the_initiative_with_a_warning(service: Service) -> None:
    """The first write to a name creates it and warns; later writes do not warn."""
    first, _ = service.note(parse("note", {"initiative": P, "text": "one"}))
    assert first.state == "applied"
    assert [i.code for i in first.issues] == ["new_initiative"]
    second, _ = service.note(parse("note", {"initiative": P, "text": "two"}))
    assert second.issues == []


def test_initiative_name_is_trimmed(service: Service) -> None:
    """Surrounding spaces do not create a second initiative."""
    service.note(parse("note", {"initiative": P, "text": "one"}))
    again, _ = service.note(parse("note", {"initiative": f"  {P} ", "text": "two"}))
    assert again.issues == []


@pytest.mark.parametrize("spelling", ["Kaeru-Memory", "kaeru-memroy", "kaeru"])
def test_misspelt_initiative_warns_with_did_you_mean(service: Service, spelling: str) -> None:
    """A write to a near-miss of an existing initiative warns and suggests the existing name."""
    service.note(parse("note", {"initiative": P, "text": "one"}))
    outcome, _ = service.note(parse("note", {"initiative": spelling, "text": "two"}))
    assert outcome.state == "applied"
    warnings = [i for i in outcome.issues if i.code == "new_initiative"]
    assert len(warnings) == 1
    assert warnings[0].field == "initiative"
    assert P in warnings[0].message
    assert not warnings[0].retryable


def test_unrelated_new_initiative_suggests_nothing(service: Service) -> None:
    """A genuinely new project is not compared to an unrelated one."""
    service.note(parse("note", {"initiative": P, "text": "one"}))
    outcome, _ = service.note(parse("note", {"initiative": "garden-planner", "text": "two"}))
    assert [i.code for i in outcome.issues] == ["new_initiative"]
    assert P not in outcome.issues[0].message


@pytest.mark.parametrize("bad", ["", "   ", "x" * 129, "tab\there"])
def test_invalid_initiative_is_refused(service: Service, bad: str) -> None:
    """Blank, over-long or control-character initiative names are refused."""
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": bad, "text": "x"}))
    assert err.value.code == "invalid_argument"
    assert err.value.field == "initiative"


# --- links ------------------------------------------------------------------------------------


def test_link_to_creates_an_edge_visible_from_both_ends(service: Service) -> None:
    """`link_to` writes new → target in the same call; `read neighbours` shows it on both nodes."""
    target = note(service, text="the incident report", name="incident-42")
    source = note(service, text="root cause: expired cert", link_to="incident-42", edge_type="causal", weight=0.9)
    for end in (source, target):
        view = service.read(parse("read", {"initiative": P, "node": end, "neighbours": True}))
        assert view.edges is not None
        edges = [(e.src, e.dst, e.edge_type.value, e.weight) for e in view.edges]
        assert (source, target, "causal", 0.9) in edges


def test_link_to_defaults_to_refers_to(service: Service) -> None:
    """Without an edge type the link is `refers_to`."""
    target = note(service, text="target")
    source = note(service, text="source", link_to={"id": target})
    edges = service.read(parse("read", {"initiative": P, "node": source, "neighbours": True})).edges or []
    assert [(e.src, e.dst, e.edge_type.value) for e in edges] == [(source, target, "refers_to")]


def test_link_to_another_initiative_by_initiative_and_name(service: Service) -> None:
    """`{initiative, name}` links across scopes."""
    outcome, _ = service.note(
        parse("note", {"initiative": "shared-knowledge", "text": "style guide", "name": "style-guide"})
    )
    target = new_id(outcome)
    source = note(
        service, text="follow the style guide", link_to={"initiative": "shared-knowledge", "name": "style-guide"}
    )
    edges = service.read(parse("read", {"initiative": P, "node": source, "neighbours": True})).edges or []
    assert (source, target) in [(e.src, e.dst) for e in edges]


def test_link_to_missing_node_writes_nothing(service: Service) -> None:
    """A link to a node that does not exist rejects the whole note: no node is left behind."""
    note(service, text="existing")
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "orphan candidate zanzibar", "link_to": "no-such-node"}))
    assert err.value.code == "not_found"
    assert err.value.field == "link_to"
    assert service.search(parse("search", {"initiatives": [P], "text": "zanzibar"})).total == 0


def test_link_weight_out_of_range_writes_nothing(service: Service) -> None:
    """A weight outside 0..1 is refused and the note is not created."""
    target = note(service, text="target")
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "heavy zanzibar", "link_to": target, "weight": 1.5}))
    assert err.value.code == "invalid_argument"
    assert service.search(parse("search", {"initiatives": [P], "text": "zanzibar"})).total == 0
