"""What a kaeru Markdown page's `properties:` line says is read back never wider than it says it, and
whatever the line holds the import goes on (review of the change that added the line, session 54).

A rule scoped to a task the export did not write (forgotten in the source, or of an initiative not
exported) came back in force for every task; a rule whose scope or state a hand edit made unreadable
came back in force too. Now the first keeps the source's task id (a task the importing vault does
not hold: in force for none, as a rule of a forgotten task) and the second comes back released. A
line nested past the JSON parser's depth, or a list where a chain's edge type goes, stopped the whole
import with a traceback. Items naming others were written in three fixed groups, so a chain whose
steps hold a chain read after it came back naming no steps (and "unchanged" ever after), and the
copy of a page id read first, not last, was kept. Both backends."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.domain.model import NodeType
from kaeru.errors import InvalidArgument
from kaeru.export import archive
from kaeru.export.importers import apply, notes, page_properties
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.importers.md_pages import ok, other_vault, rule, rules


def _skipped(report: dict[str, Any]) -> dict[str, str]:
    """The `property_skipped` messages by field, each naming its page first."""
    return {i["field"]: i["message"] for i in report["issues"] if i["code"] == "property_skipped"}


def test_a_rule_whose_task_was_not_exported_stays_out_of_force(
    service: Service, vault: VaultSpec, backend: str, tmp_path: Path
) -> None:
    run = build_server(service).registry.run
    ok(run, "task", initiative="t", name="ship", text="ship the parser")
    ok(run, "task", initiative="t", name="other", text="other work")
    elsewhere = ok(run, "task", initiative="o", name="elsewhere", text="work of another initiative")
    ok(run, "note", initiative="t", kind="rule", name="always", text="sign every commit")
    rule(run, "t", "streaming", "stay streaming", task="ship")
    rule(run, "t", "abroad", "ask o first", task={"id": elsewhere}, through="2099-12-31")
    ok(run, "forget", initiative="t", node="ship", reason="not shipping")
    assert rules(run, "t") == rules(run, "t", "other") == ["always"]

    args = {"action": "export", "path": "md", "format": "markdown", "initiatives": ["t"]}
    archive.export(service.store, replace(vault.settings(), export_root=tmp_path / "ex"), parse("archive", args))
    folder = tmp_path / "ex" / "md"
    with other_vault(backend, tmp_path) as other:
        report = apply(other, "t2", notes.read_kaeru(folder)).to_json()
        again = build_server(other).registry.run
        # As in the source: neither rule in force, for no task and for the task still open.
        assert rules(again, "t2") == rules(again, "t2", "other") == ["always"]
        said = sorted(i["message"] for i in report["issues"] if i["code"] == "property_skipped")
        assert [m.split(": ", 1)[0] for m in said] == [
            "operational/concept/abroad.md",
            "operational/concept/streaming.md",
        ]
        assert all("applicability.task" in m and "in force for no task" in m for m in said), said
        streaming = again("read", {"initiative": "t2", "node": "streaming"})
        assert "its task was forgotten" in json.dumps(streaming["issues"]), streaming
        abroad = again("read", {"initiative": "t2", "node": "abroad"})["data"]["hits"][0]["properties"]
        assert abroad["applicability"] == {"task": elsewhere, "through": "2099-12-31"}
        asked = {"initiatives": ["t2"], "query": "stay streaming", "task_intent": "apply_preference"}
        recalled = again("recall", asked)
        assert recalled["state"] == "ok" and "stay streaming" not in json.dumps(recalled["data"]), recalled
        # Imported again, nothing changes; scoped to a task of this vault, the rule applies to it.
        assert apply(other, "t2", notes.read_kaeru(folder)).changes == 0
        ok(again, "revise", initiative="t2", node="streaming", patch={"applicability": {"task": "other"}})
        assert rules(again, "t2", "other") == ["always", "streaming"] and rules(again, "t2") == ["always"]


def _page(folder: Path, rel: str, node_id: str, node_type: str, tags: list[str], properties: str | None) -> Path:
    front = [f"id: {json.dumps(node_id)}", f'type: "{node_type}"', 'tier: "operational"', 'layer: "warm"']
    front.append(f"tags: {json.dumps(tags)}")
    if properties is not None:
        front.append(f"properties: {properties}")
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(["---", *front, "---", "", f"# {Path(rel).stem}", "", f"the {rel} page", ""]))
    return path


def test_a_properties_line_no_write_takes_is_said_and_the_import_goes_on(service: Service, tmp_path: Path) -> None:
    folder = tmp_path / "md"
    concept, task = ["kind:observation"], ["kind:task"]
    _page(folder, "operational/concept/a.md", "id-a", "concept", concept, None)
    _page(folder, "operational/concept/b.md", "id-b", "concept", concept, None)
    deep = "[" * 100_000 + "]" * 100_000
    _page(folder, "operational/concept/deep.md", "id-deep", "concept", concept, f'{{"url": {deep}}}')
    listed = {"chain": {"members": ["id-a", "id-b"], "edges": [["id-a", "id-b", [], 0.5]]}}
    _page(folder, "operational/chain/listed.md", "id-listed", "chain", ["kind:chain"], json.dumps(listed))
    huge = {"chain": {"members": ["id-a", "id-b"], "edges": [["id-a", "id-b", "causal", 0.5]], "cost": 10**4000}}
    _page(folder, "operational/chain/huge.md", "id-huge", "chain", ["kind:chain"], json.dumps(huge))
    for name, branch in (("spaced", "main branch"), ("long", "b" * 201), ("listy", ["main"]), ("good", "feat/auth")):
        _page(folder, f"operational/task/{name}.md", f"id-{name}-task", "task", task, json.dumps({"branch": branch}))

    report = apply(service, "hand", notes.read_kaeru(folder)).to_json()
    assert report["created"] == 9, report
    by_page = {
        i["message"].split(": ", 1)[0]: i["message"] for i in report["issues"] if i["code"] == "property_skipped"
    }
    assert set(by_page) == {
        "operational/concept/deep.md",
        "operational/chain/listed.md",
        "operational/chain/huge.md",
        "operational/task/spaced.md",
        "operational/task/long.md",
        "operational/task/listy.md",
    }, by_page
    assert "not one line of JSON" in by_page["operational/concept/deep.md"]
    assert "edges[0] needs [from, to, edge type" in by_page["operational/chain/listed.md"]
    assert "chain.cost must be a number" in by_page["operational/chain/huge.md"]
    # The branch a write takes (`note`/`task` `branch`: 1–200 characters, no spaces), and no other.
    assert "should match pattern" in by_page["operational/task/spaced.md"]
    assert "at most 200 characters" in by_page["operational/task/long.md"]
    run = build_server(service).registry.run

    def properties(name: str) -> dict[str, Any]:
        return dict(run("read", {"initiative": "hand", "node": name})["data"]["hits"][0].get("properties") or {})

    assert properties("good")["branch"] == "feat/auth" and "branch" not in properties("spaced")
    assert "chain" not in properties("listed") and "chain" not in properties("huge")
    written = run("note", {"initiative": "hand", "name": "spaced note", "text": "x", "branch": "main branch"})
    assert written["state"] == "rejected" and "branch" in json.dumps(written["issues"]), written

    # Front matter tags nested as deep are one tag too long: refused, naming it, as any such tag.
    nested = tmp_path / "nested"
    _page(nested, "operational/concept/tags.md", "id-tags", "concept", [], None).write_text(
        f"---\nid: id-tags\ntype: concept\ntags: {deep}\n---\n\n# tags\n\nnested tags\n"
    )
    with pytest.raises(InvalidArgument, match=r"operational/concept/tags.md: tags\[0\]: tag 0 must be 1–128"):
        apply(service, "nested", notes.read_kaeru(nested))
    # Half a surrogate pair (a JSON escape) in a property, a tag or the id: no store holds it, so it is
    # refused as a tool call's is, naming it (it stopped the import with a traceback).
    halves = tmp_path / "halves"
    (halves / "operational/concept").mkdir(parents=True)
    (halves / "operational/concept/half.md").write_text(
        '---\nid: "id-\\ud800"\ntype: concept\ntags: ["\\udc00"]\nproperties: {"url": "\\ud800"}\n---\n\n# half\n'
    )
    with pytest.raises(InvalidArgument) as refused:
        apply(service, "halves", notes.read_kaeru(halves))
    for field in ("properties", "tags[0]", "key"):
        assert f"operational/concept/half.md: {field}: {field} holds a lone UTF-16 surrogate" in refused.value.message


def _value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value, biased towards the shapes the properties take."""
    pick = rng.randrange(12 if depth < 4 else 7)
    leaves: list[Any] = [
        None,
        rng.choice([True, False]),
        rng.randint(-3, 3),
        rng.choice([0.5, -1.0, 1e308, 10**30, 2**70]),
        rng.choice(["", " ", "id-a", "id-t", "[[a]]", "[[t|x]]", "2026-12-01", "9999-12-31", "causal", "x y"]),
        rng.choice(["active", "released", "2026-03-03T10:00:00.000000Z", "0000-01-01", "feat/x", "\u00e9"]),
        rng.choice([float("nan"), float("inf"), "a" * rng.randint(0, 300)]),
    ]
    if pick < 7:
        return leaves[pick]
    if pick < 9:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    keys = ["task", "through", "members", "edges", "cost", "after", "window_days", "seen", "x"]
    return {rng.choice(keys): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_any_json_on_the_properties_line_is_read_without_an_exception() -> None:
    rng = random.Random(54)
    folder = page_properties.Folder(
        {"id-a": NodeType.CONCEPT, "id-t": NodeType.TASK, "id-c": NodeType.CHAIN}, {"a": "id-a", "t": "id-t"}
    )
    names = ["applicability", "branch", "chain", "constraint_state", "due", "occurred_at", "reminder", "url", "x"]
    for _ in range(2000):
        line = {rng.choice(names): _value(rng) for _ in range(rng.randint(0, 4))}
        raw = json.dumps(line) if rng.random() < 0.9 else json.dumps(line)[: rng.randint(0, 40)]
        node_type = rng.choice([NodeType.CONCEPT, NodeType.TASK, NodeType.CHAIN])
        tags = rng.choice([["kind:rule"], []])
        found, refs, issues = page_properties.read({"properties": raw}, "p.md", node_type, tags, folder)
        assert set(found) <= set(names) and set(refs) <= {"id-a", "id-t", "id-c"}
        assert all(i.code == "property_skipped" for i in issues)
        if "kind:rule" in tags and node_type == NodeType.CONCEPT:
            # A rule is in force only where its page says: a scope kept, or released.
            scope = found.get("applicability", {})
            unread = [i for i in issues if i.field in ("properties", "properties.constraint_state")]
            assert found.get("constraint_state") == "released" or not unread, (raw, found, issues)
            assert (
                not isinstance(line.get("applicability"), dict)
                or "task" not in line["applicability"]
                or ("task" in scope or found.get("constraint_state") == "released")
            ), (raw, found)


def test_items_are_written_after_the_items_they_name_and_the_last_copy_of_a_page_is_kept(
    service: Service, tmp_path: Path
) -> None:
    folder = tmp_path / "md"
    concept = ["kind:observation"]
    for name in ("x", "y"):
        _page(folder, f"operational/concept/{name}.md", f"id-{name}", "concept", concept, None)
    # Read first (by path), a chain whose steps hold a chain read after it.
    outer = {"chain": {"members": ["id-inner", "id-x"], "edges": [["id-inner", "id-x", "causal", 0.5]]}}
    _page(folder, "operational/chain/a-outer.md", "id-outer", "chain", ["kind:chain"], json.dumps(outer))
    inner = {"chain": {"members": ["id-x", "id-y"], "edges": [["id-x", "id-y", "causal", 0.7]]}}
    _page(folder, "operational/chain/b-inner.md", "id-inner", "chain", ["kind:chain"], json.dumps(inner))
    # Two pages of one id: the first names a task, the one read last none; the last is kept.
    _page(folder, "operational/task/ship.md", "id-ship", "task", ["kind:task"], None)
    scoped = json.dumps({"applicability": {"task": "id-ship"}})
    _page(folder, "operational/concept/copy-1.md", "id-copy", "concept", ["kind:rule"], scoped)
    _page(folder, "operational/concept/copy-2.md", "id-copy", "concept", ["kind:rule"], None)

    report = apply(service, "order", notes.read_kaeru(folder)).to_json()
    assert _skipped(report) == {}, report
    [twice] = [i["message"] for i in report["issues"] if i["code"] == "duplicate_key"]
    assert twice.startswith("operational/concept/copy-2.md"), twice
    run = build_server(service).registry.run

    def node(name: str) -> dict[str, Any]:
        hit: dict[str, Any] = run("read", {"initiative": "order", "node": name})["data"]["hits"][0]
        return hit

    assert node("a-outer")["properties"]["chain"]["members"] == [node("b-inner")["id"], node("x")["id"]]
    assert node("b-inner")["properties"]["chain"]["members"] == [node("x")["id"], node("y")["id"]]
    copy = node("copy-2")
    assert copy["body"] == "the operational/concept/copy-2.md page" and "applicability" not in copy["properties"]
    assert apply(service, "order", notes.read_kaeru(folder)).changes == 0


def test_chains_naming_each_other_have_their_steps_once_imported_again(service: Service, tmp_path: Path) -> None:
    folder = tmp_path / "md"
    _page(folder, "operational/concept/x.md", "id-x", "concept", ["kind:observation"], None)
    for name, step in (("a", "id-b"), ("b", "id-a")):
        chain = {"chain": {"members": [step, "id-x"], "edges": [[step, "id-x", "causal", 0.5]]}}
        _page(folder, f"operational/chain/{name}.md", f"id-{name}", "chain", ["kind:chain"], json.dumps(chain))
    first = apply(service, "loop", notes.read_kaeru(folder)).to_json()
    # The one written first names one not yet made: said, and written without steps this time.
    assert [m.split(": ", 1)[0] for m in _skipped(first).values()] == ["operational/chain/b.md"], first
    second = apply(service, "loop", notes.read_kaeru(folder)).to_json()
    assert second["revised"] == 1 and _skipped(second) == {}, second
    run = build_server(service).registry.run
    ids = {n: run("read", {"initiative": "loop", "node": n})["data"]["hits"][0] for n in ("a", "b", "x")}
    assert ids["b"]["properties"]["chain"]["members"] == [ids["a"]["id"], ids["x"]["id"]]
    assert apply(service, "loop", notes.read_kaeru(folder)).changes == 0
