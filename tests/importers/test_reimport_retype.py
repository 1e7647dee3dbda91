"""A re-import whose source gives an item another node type (decision 487 left it open): the item
becomes a new node of that type superseding the old one, which stays in history; a person's link
to the old node reaches the new one through the supersession, a person's reminder and summary are
carried, and the next import of the same source changes nothing. A node someone already superseded
in kaeru keeps its type (`type_kept`). Both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kaeru.domain.model import EdgeType, NodeType
from kaeru.export.importers import apply, notes
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.importers.test_reimport import imported_node

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"


def _read(run: Any, node_id: str) -> dict[str, Any]:
    answer = run("read", {"initiative": "md", "node": {"id": node_id}})
    assert answer["state"] == "ok" or answer.get("data"), answer
    [hit] = answer["data"]["hits"]
    return hit  # type: ignore[no-any-return]


def test_a_note_whose_source_type_changed_is_a_new_node_of_that_type_superseding_the_old(
    service: Service, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    page = folder / "Beta.md"
    page.write_text("---\ntype: decision\ntags: [infra]\n---\n# Beta\n\nWe chose the queue.\n")
    (folder / "Other.md").write_text("# Other\n\nSee [[Beta]].\n")
    (folder / "Gamma.md").write_text("# Gamma\n\nA plan.\n")
    assert apply(service, "md", notes.read_markdown(folder)).created == 3
    old = imported_node(service, "md", "Beta")
    assert old.node_type == NodeType.EPISODE
    # A person, in kaeru: a reminder and a summary on Beta, and a link from Gamma to it.
    run = build_server(service).registry.run
    remind = {"after": "2030-01-01", "window_days": 7}
    patch = {"reminder": remind, "description": "the queue choice"}
    assert run("revise", {"initiative": "md", "node": "Beta", "patch": patch})["state"] == "applied"
    link = {"initiative": "md", "from": "Gamma", "to": "Beta", "edge_type": "causal", "weight": 0.9}
    assert run("link", link)["state"] == "applied"

    page.write_text("---\ntype: note\ntags: [ops]\n---\n# Beta\n\nThe queue, as a note.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    assert (report.created, report.revised, report.changes) == (0, 1, 1), report.to_json()
    codes = [i.code for i in report.issues]
    assert "type_kept" not in codes, report.issues
    [said] = [i for i in report.issues if i.code == "type_changed"]
    assert "'Beta' episode → concept" in said.message, said.message

    new = imported_node(service, "md", "Beta")
    assert new.id != old.id
    assert (new.node_type, new.body, new.description) == (NodeType.CONCEPT, "The queue, as a note.", "the queue choice")
    assert "kind:concept" in new.tags and "kind:decision" not in new.tags, new.tags
    assert "ops" in new.tags and "infra" not in new.tags, new.tags
    assert new.properties["reminder"] == remind and new.properties["note_type"] == "note"
    # The old node is history: superseded by the new one, its type and text as they were.
    before = _read(run, old.id)
    assert (before["currentness"], before["successors"]) == ("superseded", [new.id]), before
    assert (before["node_type"], before["body"]) == ("episode", "We chose the queue.")
    assert _read(run, new.id)["currentness"] == "current"
    # The person's link stays theirs, on the node they linked; it reaches the current note.
    with service.store.read() as session:
        gamma = imported_node(service, "md", "Gamma")
        held = {(e.src, e.dst, e.edge_type) for e in session.live_edges([old.id])}
        assert (gamma.id, old.id, EdgeType.CAUSAL) in held, held
        other = imported_node(service, "md", "Other")
        # The source's link is the source's: on the new node now, no longer on the old one.
        assert (other.id, old.id, EdgeType.REFERS_TO) not in held, held
        assert (other.id, new.id, EdgeType.REFERS_TO) in {
            (e.src, e.dst, e.edge_type) for e in session.live_edges([new.id])
        }
    state = run("current_state", {"initiative": "md", "node": {"id": old.id}})["data"]
    assert (state["status"], state["current"]["id"]) == ("current", new.id), state

    again = apply(service, "md", notes.read_markdown(folder))
    assert (again.changes, again.unchanged, again.edges_unchanged) == (0, 3, 1), again.to_json()
    assert not [i for i in again.issues if i.code in ("type_changed", "type_kept")], again.issues
    assert imported_node(service, "md", "Beta").id == new.id


def test_the_new_node_forgotten_stays_forgotten_and_the_old_one_is_not_found_again(
    service: Service, tmp_path: Path
) -> None:
    """The old node lets go of the item's mark: forgetting the new node leaves the item forgotten,
    not revised back into the old decision."""
    folder = tmp_path / "notes"
    folder.mkdir()
    page = folder / "Beta.md"
    page.write_text("---\ntype: decision\n---\n# Beta\n\nWe chose the queue.\n")
    apply(service, "md", notes.read_markdown(folder))
    old = imported_node(service, "md", "Beta")
    page.write_text("---\ntype: note\n---\n# Beta\n\nThe queue, as a note.\n")
    apply(service, "md", notes.read_markdown(folder))
    new = imported_node(service, "md", "Beta")
    assert new.id != old.id
    run = build_server(service).registry.run
    forget = {"initiative": "md", "node": {"id": new.id}, "reason": "not ours"}
    assert run("forget", forget)["state"] == "applied"

    page.write_text("---\ntype: note\n---\n# Beta\n\nThe queue, as a note, again.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    assert (report.forgotten, report.changes) == (1, 0), report.to_json()
    assert _read(run, old.id)["body"] == "We chose the queue."


def test_a_kaeru_page_whose_type_changed_keeps_its_links_on_the_new_node(service: Service, tmp_path: Path) -> None:
    """kaeru-md: the page `Chose PostgreSQL` (an episode with two outgoing links) exported again as a
    concept: a concept superseding the episode, holding both links; imported again, 0 changes."""
    folder = tmp_path / "kaeru-md"
    folder.mkdir()
    for page in (DATA / "kaeru-md").rglob("*.md"):
        (folder / page.name).write_text(page.read_text())
    first = apply(service, "heron", notes.read_kaeru(folder))
    assert first.created > 1 and first.edges_added >= 2, first.to_json()
    episode = folder / "chose-postgresql.md"
    episode.write_text(episode.read_text().replace("type: episode", "type: concept"))
    key = "01JBX7Q2M3N4P5R6S7T8V9W0XA"
    with service.store.read() as session:
        [old] = [n for n in session.nodes_by_ids([imported_node(service, "heron", key).id]).values()]
        links_before = {(e.edge_type, e.dst) for e in session.live_edges([old.id]) if e.src == old.id}
    assert len(links_before) == 2, links_before

    report = apply(service, "heron", notes.read_kaeru(folder))
    assert (report.revised, report.edges_added, report.edges_removed) == (1, 0, 0), report.to_json()
    new = imported_node(service, "heron", key)
    assert (new.node_type, new.id != old.id) == (NodeType.CONCEPT, True)
    with service.store.read() as session:
        out = {(e.edge_type, e.dst) for e in session.live_edges([new.id]) if e.src == new.id}
        assert out == {*links_before, (EdgeType.SUPERSEDES, old.id)}, out
        assert {(e.edge_type, e.dst) for e in session.live_edges([old.id]) if e.src == old.id} == set()
    assert apply(service, "heron", notes.read_kaeru(folder)).changes == 0


def test_a_node_superseded_in_kaeru_keeps_its_type_and_says_so(service: Service, tmp_path: Path) -> None:
    """Someone superseded the imported decision in kaeru (a note of theirs linked `supersedes` it): the
    import does not override a successor a person made, so the node keeps its type (`type_kept`)."""
    folder, page, old, run = _beta_imported(service, tmp_path)
    assert run("note", {"initiative": "md", "name": "Beta v2", "text": "We chose the log."})["state"] == "applied"
    link = {"initiative": "md", "from": "Beta v2", "to": "Beta", "edge_type": "supersedes", "weight": 1.0}
    linked = run("link", link)
    assert linked["state"] == "applied", linked["issues"]

    page.write_text("---\ntype: note\n---\n# Beta\n\nThe queue, as a note.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    assert "type_kept" in [i.code for i in report.issues] and report.revised == 1
    beta = imported_node(service, "md", "Beta")
    assert (beta.id, beta.node_type, beta.body) == (old.id, NodeType.EPISODE, "The queue, as a note.")


def test_a_type_a_person_gave_in_kaeru_is_kept_when_the_source_changes_only_its_text(
    service: Service, tmp_path: Path
) -> None:
    """A person superseded the imported decision with a concept (`evolve` `new_type`, which copies the
    import's mark): the source's next change, its text only, revises that concept — no new episode
    supersedes the person's concept — and `type_kept` names the person's type, not the source."""
    folder, page, old, run = _beta_imported(service, tmp_path)
    evolve = {"initiative": "md", "mode": "supersede", "source": {"id": old.id}}
    evolved = run("evolve", {**evolve, "new_body": "A rule now.", "new_type": "concept"})
    assert evolved["state"] == "applied", evolved
    [concept_id] = _read(run, old.id)["successors"]
    assert _read(run, concept_id)["node_type"] == "concept"

    page.write_text("---\ntype: decision\n---\n# Beta\n\nWe chose the queue, v2.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    assert (report.created, report.revised) == (0, 1), report.to_json()
    assert "type_changed" not in [i.code for i in report.issues], report.issues
    [kept] = [i for i in report.issues if i.code == "type_kept"]
    assert "a person made it a concept" in kept.message, kept.message
    beta = _read(run, concept_id)
    assert (beta["currentness"], beta["node_type"], beta["body"]) == ("current", "concept", "We chose the queue, v2.")
    assert _read(run, old.id)["body"] == "We chose the queue."
    assert apply(service, "md", notes.read_markdown(folder)).changes == 0


def test_an_item_forgotten_after_a_retype_is_not_found_again_in_an_older_version(
    service: Service, tmp_path: Path
) -> None:
    """A person superseded the imported decision (`evolve` copies the mark, so both versions hold
    it); the source then made it a note (a new concept supersedes the person's version) and the
    person forgot that concept: the source's next change leaves the item forgotten, the first
    version unrevised."""
    folder = tmp_path / "notes"
    folder.mkdir()
    page = folder / "Beta.md"
    page.write_text("---\ntype: decision\n---\n# Beta\n\nWe chose the queue.\n")
    apply(service, "md", notes.read_markdown(folder))
    first = imported_node(service, "md", "Beta")
    run = build_server(service).registry.run
    evolve = {"initiative": "md", "mode": "supersede", "source": {"id": first.id}, "new_body": "The queue, fixed."}
    assert run("evolve", evolve)["state"] == "applied"
    page.write_text("---\ntype: note\n---\n# Beta\n\nThe queue, as a note.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    assert "type_changed" in [i.code for i in report.issues], report.issues
    [person] = _read(run, first.id)["successors"]
    [new_id] = _read(run, person)["successors"]
    assert _read(run, new_id)["node_type"] == "concept"
    assert run("forget", {"initiative": "md", "node": {"id": new_id}, "reason": "not ours"})["state"] == "applied"

    page.write_text("---\ntype: note\n---\n# Beta\n\nThe queue, as a note, again.\n")
    report = apply(service, "md", notes.read_markdown(folder))
    assert (report.forgotten, report.changes) == (1, 0), report.to_json()
    assert _read(run, first.id)["body"] == "We chose the queue."


def test_a_page_made_a_finished_task_is_a_task_with_done_at(service: Service, tmp_path: Path) -> None:
    """A kaeru page exported again as a task with `status: done`: the new task is in the board's
    closing column with `done_at`, as a re-import moving a task to done gives it."""
    folder = tmp_path / "kaeru-md"
    folder.mkdir()
    key = "01JBX7Q2M3N4P5R6S7T8V9W0ZZ"
    page = folder / "fix-it.md"
    page.write_text(f"---\nid: {key}\ntype: concept\n---\n# Fix it\n\nThe thing.\n")
    apply(service, "heron", notes.read_kaeru(folder))
    page.write_text(f"---\nid: {key}\ntype: task\nstatus: done\n---\n# Fix it\n\nThe thing, a task now.\n")
    report = apply(service, "heron", notes.read_kaeru(folder))
    assert "type_changed" in [i.code for i in report.issues], report.issues
    task = imported_node(service, "heron", key)
    assert (task.node_type, task.status) == (NodeType.TASK, "done"), (task.node_type, task.status)
    assert isinstance(task.properties.get("done_at"), str), task.properties


def _beta_imported(service: Service, tmp_path: Path) -> tuple[Path, Path, Any, Any]:
    """A folder whose page `Beta.md` is a decision, imported into `md`: the folder, the page, its
    node and the tools' `run`."""
    folder = tmp_path / "notes"
    folder.mkdir()
    page = folder / "Beta.md"
    page.write_text("---\ntype: decision\n---\n# Beta\n\nWe chose the queue.\n")
    apply(service, "md", notes.read_markdown(folder))
    return folder, page, imported_node(service, "md", "Beta"), build_server(service).registry.run
