"""A Markdown export imported again (`kaeru import-from kaeru-md`) keeps which rules apply and what a
saved chain is (probe finding F1, session 54): its pages carry the properties that say so, and the
import reads them back, checked as the write path checks them. Before, a page said none of them: an
expired rule came back in force, a rule scoped to a task came back for every task, a released rule
came back active, a task lost its due day and a chain named no steps. A page edited by hand with a
value the write path refuses imports without it, and the report names it (`property_skipped`); a
rule whose scope or state cannot be read comes back released, not in force for every task.
Both backends."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from kaeru.api.requests import parse
from kaeru.export import archive
from kaeru.export.importers import apply, notes
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.cli.support import kaeru
from tests.importers.md_pages import Run, ok, other_vault, rule, rules


def _export(service: Service, vault: VaultSpec, root: Path, initiative: str) -> Path:
    args = {"action": "export", "path": "md", "format": "markdown", "initiatives": [initiative]}
    archive.export(service.store, replace(vault.settings(), export_root=root), parse("archive", args))
    return root / "md"


def test_the_rules_in_force_are_the_same_after_a_markdown_round_trip(
    service: Service, vault: VaultSpec, backend: str, tmp_path: Path
) -> None:
    run = build_server(service).registry.run
    ok(run, "task", initiative="t", name="ship", text="ship the parser", due="2099-06-01")
    ok(run, "task", initiative="t", name="spike", text="try the other parser")
    ok(run, "task_update", initiative="t", task="spike", status="done")
    ok(run, "note", initiative="t", kind="rule", name="always", text="sign every commit")
    rule(run, "t", "freeze", "old freeze", through="2020-01-01")
    rule(run, "t", "until", "no deploys", through="2099-12-31")
    rule(run, "t", "streaming", "parser must stay streaming", task="ship")
    rule(run, "t", "spiked", "keep the spike small", task="spike")
    ok(run, "note", initiative="t", kind="rule", name="released", text="no rust")
    ok(run, "revise", initiative="t", node="released", patch={"constraint_state": "released"})
    ok(run, "note", initiative="t", kind="reference", name="spec", text="the spec", url="https://example.org/spec")
    assert rules(run, "t") == ["always", "until"]
    assert rules(run, "t", "ship") == ["always", "streaming", "until"]

    folder = _export(service, vault, tmp_path / "exports", "t")
    with other_vault(backend, tmp_path) as other:
        report = apply(other, "t2", notes.read_kaeru(folder)).to_json()
        assert [i["code"] for i in report["issues"] if i["code"] != "new_initiative"] == [], report
        again = build_server(other).registry.run
        assert rules(again, "t2") == rules(run, "t") == ["always", "until"]
        assert rules(again, "t2", "ship") == rules(run, "t", "ship") == ["always", "streaming", "until"]
        # Working on the finished task, its rule is given, as in the source.
        assert rules(again, "t2", "spike") == rules(run, "t", "spike") == ["always", "spiked", "until"]
        # The rule is scoped to the imported task, not the source's id.
        ship = again("read", {"initiative": "t2", "node": "ship"})["data"]["hits"][0]
        streaming = again("read", {"initiative": "t2", "node": "streaming"})["data"]["hits"][0]
        assert streaming["properties"]["applicability"] == {"task": ship["id"]}
        assert ship["properties"]["due"] == "2099-06-01"
        spec = again("read", {"initiative": "t2", "node": "spec"})["data"]["hits"][0]
        assert spec["properties"]["url"] == "https://example.org/spec"
        # Imported again, unchanged: the digest is of what the pages say, not the ids they became.
        assert apply(other, "t2", notes.read_kaeru(folder)).changes == 0

        # The task forgotten in kaeru, and the rule's page changed since: the rule revised stays
        # scoped to the forgotten task (not in force, as in a vault where the task was forgotten),
        # not made every task's.
        ok(again, "forget", initiative="t2", node="ship", reason="not shipping")
        [page] = folder.glob("*/concept/streaming*.md")
        page.write_text(page.read_text().replace("parser must stay streaming", "parser must stay streaming, always"))
        report = apply(other, "t2", notes.read_kaeru(folder)).to_json()
        assert report["revised"] == 1 and not [i for i in report["issues"] if i["code"] == "property_skipped"], report
        streaming = again("read", {"initiative": "t2", "node": "streaming"})["data"]["hits"][0]
        assert streaming["body"].endswith("always") and streaming["properties"]["applicability"] == {"task": ship["id"]}
        assert rules(again, "t2") == ["always", "until"]


def test_a_saved_chain_is_still_a_chain_after_a_markdown_round_trip(
    service: Service, vault: VaultSpec, backend: str, tmp_path: Path
) -> None:
    run = build_server(service).registry.run
    for name in ("intake", "parse", "store"):
        ok(run, "note", initiative="c", name=name, text=f"the {name} step")
    ok(run, "link", initiative="c", action="add", **{"from": "intake", "to": "parse"}, edge_type="causal", weight=0.9)
    ok(run, "link", initiative="c", action="add", **{"from": "parse", "to": "store"}, edge_type="causal", weight=0.8)
    chain = ok(run, "link", initiative="c", action="chain", **{"from": "intake", "to": "store"}, name="pipeline")

    def steps(call: Run, initiative: str, node: str) -> list[str]:
        answer = call("trail", {"initiative": initiative, "node": node, "kind": "chain"})
        assert answer["state"] != "rejected", answer
        return [e["node"]["name"] for e in answer["data"]["entries"]]

    assert steps(run, "c", chain) == ["intake", "parse", "store"]
    folder = _export(service, vault, tmp_path / "exports", "c")
    with other_vault(backend, tmp_path) as other:
        report = apply(other, "c2", notes.read_kaeru(folder)).to_json()
        assert [i for i in report["issues"] if i["code"] != "new_initiative"] == [], report
        again = build_server(other).registry.run
        assert steps(again, "c2", "pipeline") == ["intake", "parse", "store"]
        saved = again("read", {"initiative": "c2", "node": "pipeline"})["data"]["hits"][0]["properties"]["chain"]
        ids = {
            n: again("read", {"initiative": "c2", "node": n})["data"]["hits"][0]["id"]
            for n in ("intake", "parse", "store")
        }
        assert saved["members"] == [ids["intake"], ids["parse"], ids["store"]]
        assert [e[:3] for e in saved["edges"]] == [
            [ids["intake"], ids["parse"], "causal"],
            [ids["parse"], ids["store"], "causal"],
        ]
        # Still the strongest path: `reflect` does not call it stale.
        reflected = again("reflect", {"initiative": "c2"})
        assert not [i for i in reflected["data"]["items"] if i["kind"] == "stale_chain"], reflected


def _page(folder: Path, rel: str, node_id: str, node_type: str, tags: list[str], properties: str | None) -> None:
    front = [f'id: "{node_id}"', f'type: "{node_type}"', 'tier: "operational"', 'layer: "warm"', f"tags: {tags!r}"]
    if properties is not None:
        front.append(f"properties: {properties}")
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    name = Path(rel).stem
    path.write_text("\n".join(["---", *front, "---", "", f"# {name}", "", f"the {name} page", ""]).replace("'", '"'))


def test_a_property_edited_by_hand_that_the_write_path_refuses_is_left_out_and_said(
    vault: VaultSpec, tmp_path: Path
) -> None:
    folder = tmp_path / "md"
    rule, task, concept = ["kind:rule"], ["kind:task"], ["kind:observation"]
    _page(
        folder,
        "operational/task/ship.md",
        "id-ship",
        "task",
        task,
        '{"due": "soon", "url": "https://example.org/ship"}',
    )
    _page(
        folder,
        "operational/concept/someday.md",
        "id-someday",
        "concept",
        rule,
        '{"applicability": {"through": "someday"}}',
    )
    _page(
        folder,
        "operational/concept/nobody.md",
        "id-nobody",
        "concept",
        rule,
        '{"applicability": {"task": "someone", "through": "2099-01-01"}}',
    )
    _page(
        folder, "operational/concept/named.md", "id-named", "concept", rule, '{"applicability": {"task": "[[ship]]"}}'
    )
    _page(folder, "operational/concept/paused.md", "id-paused", "concept", rule, '{"constraint_state": "paused"}')
    _page(folder, "operational/concept/plain.md", "id-plain", "concept", concept, '{"constraint_state": "released"}')
    _page(folder, "operational/concept/broken.md", "id-broken", "concept", rule, '{"applicability": {"through"')
    _page(folder, "operational/concept/extra.md", "id-extra", "concept", concept, '{"hygiene": {"moves": 3}}')
    _page(
        folder,
        "operational/concept/remind.md",
        "id-remind",
        "concept",
        concept,
        '{"reminder": {"after": "2099-01-01", "window_days": 0}}',
    )
    _page(
        folder,
        "operational/chain/short.md",
        "id-short",
        "chain",
        ["kind:chain"],
        '{"chain": {"members": ["id-ship"], "edges": []}}',
    )

    done = kaeru(vault, "import-from", "kaeru-md", str(folder), "-i", "hand", as_json=True)
    assert done.code == 0, done.stderr
    report = done.json()
    assert report["created"] == 10, report

    def in_force(*task: str) -> list[str]:
        args = json.dumps({"initiative": "hand", **({"task": task[0]} if task else {})})
        shown = kaeru(vault, "call", "context", args, as_json=True)
        assert shown.code == 0, shown.stderr
        sections = shown.json()["data"]["sections"]
        return sorted(item["name"] for s in sections if s["name"] == "rules" for item in s["items"])

    assert in_force() == [] and in_force("ship") == ["named"]
    said = {
        (i["message"].split(": ", 1)[0], i["field"]): i["message"]
        for i in report["issues"]
        if i["code"] == "property_skipped"
    }
    concepts = "operational/concept"
    assert set(said) == {
        ("operational/task/ship.md", "properties.due"),
        (f"{concepts}/someday.md", "properties.applicability.through"),
        (f"{concepts}/nobody.md", "properties.applicability.task"),
        (f"{concepts}/paused.md", "properties.constraint_state"),
        (f"{concepts}/plain.md", "properties.constraint_state"),
        (f"{concepts}/broken.md", "properties"),
        (f"{concepts}/extra.md", "properties.hygiene"),
        (f"{concepts}/remind.md", "properties.reminder"),
        ("operational/chain/short.md", "properties.chain"),
    }, said
    due = said[("operational/task/ship.md", "properties.due")]
    assert "'soon'" in due and due.endswith("left out"), due
    scope = said[(f"{concepts}/nobody.md", "properties.applicability.task")]
    assert "'someone' is no page of the folder" in scope and "in force for no task" in scope, scope
    paused = said[(f"{concepts}/paused.md", "properties.constraint_state")]
    assert "active or released" in paused and "the rule is imported released" in paused, paused
    assert "the rule is imported released" in said[(f"{concepts}/someday.md", "properties.applicability.through")]
    assert "the rule is imported released" in said[(f"{concepts}/broken.md", "properties")]
    assert "only to rules" in said[(f"{concepts}/plain.md", "properties.constraint_state")]

    def props(name: str) -> dict[str, Any]:
        shown = kaeru(vault, "--json", "read", name, "-i", "hand")
        assert shown.code == 0, shown.stderr
        node: dict[str, Any] = shown.json()["data"]["hits"][0]
        return dict(node.get("properties") or {})

    assert "due" not in props("ship") and props("ship")["url"] == "https://example.org/ship"
    # A rule is never read wider than its page says: one whose scope or state cannot be read is
    # released, one scoped to a task no page of the folder is stays scoped to it (in force for none).
    assert "applicability" not in props("someday") and props("someday")["constraint_state"] == "released"
    assert props("nobody")["applicability"] == {"task": "someone", "through": "2099-01-01"}
    assert "constraint_state" not in props("nobody")
    named = props("named")["applicability"]["task"]
    assert named == kaeru(vault, "--json", "read", "ship", "-i", "hand").json()["data"]["hits"][0]["id"]
    assert props("paused")["constraint_state"] == props("broken")["constraint_state"] == "released"
    assert "constraint_state" not in props("plain")
    assert "chain" not in props("short") and "hygiene" not in props("extra")
