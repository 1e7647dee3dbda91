"""One way in (issue 15): an archive's records pass the write path's limits and secret policy before
any of them is stored, every refused line and field is named, and each import records its own
audit entry (decisions 15.N1–15.N4). Both backends; the archive tool and `kaeru import` agree."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.cli.support import kaeru

#: A correctly shaped fake GitHub token, which the guard finds (rule github_pat).
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@dataclass
class Fresh:
    """An empty vault of the test's backend, served with one secret policy."""

    spec: VaultSpec
    service: Service

    def run(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return build_server(self.service).registry.run(tool, args)

    def empty(self) -> bool:
        with self.service.store.read() as session:
            return session.all_initiatives() == []


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "exports"
    path.mkdir()
    return path


@pytest.fixture
def foreign(backend: str, tmp_path: Path, root: Path) -> list[str]:
    """The lines of an archive written elsewhere, under `allow`: a clean note, and one holding a secret."""
    spec = new_vault(backend, tmp_path)
    settings = spec.settings(secret_policy="allow", export_root=root)
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        assert run("note", {"initiative": "pond", "text": "the heron waits by the pond"})["state"] == "applied"
        leaked = run("note", {"initiative": "pond", "text": f"deploy token {SECRET} for the pond pump"})
        assert leaked["state"] == "applied"
        assert archive.export(store, settings, parse("archive", {"action": "export", "path": "foreign.amg"})).artifacts
    finally:
        store.close()
        drop_vault(spec)
    return (root / "foreign.amg").read_text().splitlines()


@pytest.fixture
def fresh(backend: str, tmp_path: Path, root: Path) -> Iterator[Callable[[str], Fresh]]:
    opened: list[tuple[VaultSpec, Service]] = []

    def make(policy: str) -> Fresh:
        spec = new_vault(backend, tmp_path)
        settings = spec.settings(secret_policy=policy, export_root=root)
        service = Service(open_store(settings), settings)
        opened.append((spec, service))
        return Fresh(spec, service)

    yield make
    for spec, service in opened:
        service.store.close()
        drop_vault(spec)


def _write(root: Path, name: str, lines: list[str]) -> Path:
    path = root / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _line_of(lines: list[str], needle: str) -> int:
    """The 1-based line number of the first node line holding `needle`."""
    return next(i + 1 for i, line in enumerate(lines) if '"kind":"node"' in line and needle in line)


def _edited(lines: list[str], at: int, change: Callable[[dict[str, Any]], None]) -> list[str]:
    record = json.loads(lines[at - 1])
    change(record)
    out = list(lines)
    out[at - 1] = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return out


def _bodies(f: Fresh) -> list[str]:
    found = f.run(
        "search", {"initiatives": ["pond"], "filters": {"current": "all"}, "limit": 50, "budget_chars": 64000}
    )
    return [str(hit.get("body") or hit.get("snippet") or "") for hit in found["data"]["hits"]]


def _audit_events(f: Fresh, initiative: str = "pond") -> list[dict[str, Any]]:
    found = f.run(
        "search",
        {"initiatives": [initiative], "filters": {"types": ["audit_event"]}, "limit": 50, "budget_chars": 64000},
    )
    return [hit for hit in found["data"]["hits"] if hit["name"] == "audit:import"]


def test_reject_refuses_the_whole_archive_naming_the_line_and_field(
    foreign: list[str], fresh: Callable[[str], Fresh], root: Path
) -> None:
    at = _line_of(foreign, SECRET)
    f = fresh("reject")
    refused = f.run("archive", {"action": "import", "path": "foreign.amg"})
    assert refused["state"] == "rejected"
    issue = refused["issues"][0]
    assert issue["code"] == "secret_detected" and f"line {at} body" in issue["message"]
    assert "nothing of it was written" in issue["message"]
    assert f.empty(), "the clean note of a refused archive is not imported either"


def test_redact_imports_the_record_redacted_and_says_so(
    foreign: list[str], fresh: Callable[[str], Fresh], root: Path
) -> None:
    at = _line_of(foreign, SECRET)
    f = fresh("redact")
    imported = f.run("archive", {"action": "import", "path": "foreign.amg"})
    assert imported["state"] == "applied"
    redactions = [i for i in imported["issues"] if i["code"] == "secret_detected"]
    assert redactions and all(i["message"].startswith(f"line {at}:") for i in redactions)
    assert {i["field"] for i in redactions} >= {"body"}
    bodies = _bodies(f)
    assert any("the heron waits" in b for b in bodies)
    assert any("for the pond pump" in b for b in bodies), "redaction keeps the text around the secret"
    assert not any(SECRET in b for b in bodies)
    found = f.run("search", {"initiatives": ["pond"], "text": SECRET, "budget_chars": 64000})["data"]["hits"]
    assert SECRET not in json.dumps(found), found


def test_allow_imports_the_record_as_it_is(foreign: list[str], fresh: Callable[[str], Fresh], root: Path) -> None:
    f = fresh("allow")
    assert f.run("archive", {"action": "import", "path": "foreign.amg"})["state"] == "applied"
    assert any(SECRET in b for b in _bodies(f))


def _too_long_name(r: dict[str, Any]) -> None:
    r["name"] = "n" * 201


def _nul_in_body(r: dict[str, Any]) -> None:
    r["body"] = "the heron\x00 waits"


def _long_tag(r: dict[str, Any]) -> None:
    r["tags"] = [*r["tags"], "t" * 129]


def _long_initiative(r: dict[str, Any]) -> None:
    r["initiatives"] = ["p" * 129]


@pytest.mark.parametrize(
    ("change", "field", "code"),
    [
        (_too_long_name, "name", "name is longer than 200 characters"),
        (_nul_in_body, "body", "contains a NUL character"),
        (_long_tag, "tags[", "printable characters"),
        (_long_initiative, "initiatives[0]", "longer than 128 characters"),
    ],
)
def test_a_line_breaking_the_write_limits_refuses_the_archive(
    foreign: list[str], fresh: Callable[[str], Fresh], root: Path, change: Any, field: str, code: str
) -> None:
    at = _line_of(foreign, "the heron waits")
    _write(root, "bad.amg", _edited(foreign, at, change))
    f = fresh("allow")  # limits hold under every policy
    refused = f.run("archive", {"action": "import", "path": "bad.amg"})
    assert refused["state"] == "rejected"
    issue = refused["issues"][0]
    assert issue["code"] == "invalid_argument" and f"line {at} {field}" in issue["message"] and code in issue["message"]
    assert f.empty()


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_a_secret_in_an_initiative_name_refuses_the_archive(
    foreign: list[str], fresh: Callable[[str], Fresh], root: Path, policy: str
) -> None:
    """The write path refuses a secret in an initiative's name under both policies (a name is never
    redacted); the import screen only checked a name's length, so an archive carried one in."""
    at = _line_of(foreign, "the heron waits")
    secret_named = f"deploy {SECRET}"

    def rename(r: dict[str, Any]) -> None:
        r["initiatives"] = [secret_named]

    _write(root, "named.amg", _edited(foreign, at, rename))
    f = fresh(policy)
    refused = f.run("archive", {"action": "import", "path": "named.amg"})
    assert refused["state"] == "rejected"
    issue = refused["issues"][0]
    assert issue["code"] == "secret_detected" and f"line {at} initiatives[0]" in issue["message"]
    # Not "set KAERU_SECRET_POLICY=redact" alone, which changes nothing for a name (review, session 40).
    assert "action rename" in issue["message"] and "KAERU_SECRET_POLICY=allow" in issue["message"]
    assert f.empty()


def test_a_lone_surrogate_and_a_secret_are_named_together(
    foreign: list[str], fresh: Callable[[str], Fresh], root: Path
) -> None:
    """Every refused line is named at once, not only the first; a limit makes it `invalid_argument`."""
    clean, leaked = _line_of(foreign, "the heron waits"), _line_of(foreign, SECRET)
    lines = list(foreign)
    lines[clean - 1] = lines[clean - 1].replace("the heron waits", "the heron \\ud800 waits", 1)
    _write(root, "both.amg", lines)
    f = fresh("reject")
    issue = f.run("archive", {"action": "import", "path": "both.amg"})["issues"][0]
    assert issue["code"] == "invalid_argument"
    assert f"line {clean} body" in issue["message"] and "U+D800" in issue["message"]
    assert f"line {leaked} body" in issue["message"] and "secret" in issue["message"]
    assert f.empty()


def test_an_import_records_its_audit_entry_and_a_replay_changes_nothing(
    foreign: list[str], fresh: Callable[[str], Fresh], root: Path
) -> None:
    f = fresh("redact")
    first = f.run("archive", {"action": "import", "path": "foreign.amg"})
    assert first["state"] == "applied"
    events = _audit_events(f)
    assert len(events) == 1
    payload = json.loads(events[0]["body"])
    changes = {c["field"]: c["after"] for c in payload["changes"]}
    digest = hashlib.sha256((root / "foreign.amg").read_bytes()).hexdigest()
    assert changes["archive.sha256"] == digest and changes["imported.node_revisions"] == 2
    assert changes["archive.redacted"] == 1 and payload["actor"] == f.service.rt.settings.actor
    before = archive.content_digest(f.service.store)
    again = f.run("archive", {"action": "import", "path": "foreign.amg"})
    assert again["state"] == "unchanged" and not [i for i in again["issues"] if i["code"] == "secret_detected"]
    assert archive.content_digest(f.service.store) == before
    assert len(_audit_events(f)) == 1, "a replay records no second import"


def test_an_import_audit_record_stays_out_of_the_export(
    foreign: list[str], fresh: Callable[[str], Fresh], root: Path
) -> None:
    """Export → import → export stays byte-identical: the import record is this vault's own."""
    f = fresh("allow")
    assert f.run("archive", {"action": "import", "path": "foreign.amg"})["state"] == "applied"
    assert _audit_events(f)
    assert f.run("archive", {"action": "export", "path": "again.amg"})["state"] == "applied"
    assert (root / "again.amg").read_bytes() == (root / "foreign.amg").read_bytes()


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_kaeru_import_answers_like_the_archive_tool(
    foreign: list[str], fresh: Callable[[str], Fresh], root: Path, policy: str
) -> None:
    by_tool = fresh(policy)
    tool = by_tool.run("archive", {"action": "import", "path": "foreign.amg"})
    by_cli = fresh(policy)
    run = kaeru(by_cli.spec, "import", str(root / "foreign.amg"), as_json=True, KAERU_SECRET_POLICY=policy)
    cli = run.json()
    assert (cli["state"], cli["issues"], cli["data"]["changes"]) == (
        tool["state"],
        tool["issues"],
        tool["data"]["changes"],
    )
    assert by_cli.empty() == by_tool.empty() == (policy == "reject")


def test_copy_reports_secrets_copies_them_verbatim_and_records_itself(
    backend: str, tmp_path: Path, fresh: Callable[[str], Fresh]
) -> None:
    """Copy moves the user's own vault: a secret-looking text is listed by line and field, not
    changed (the copy is verified against its source), and the target records one `copy` entry."""
    source = fresh("allow")
    source.run("note", {"initiative": "pond", "text": f"deploy token {SECRET} for the pond pump"})
    target = fresh("reject")
    done = archive.copy(source.service.store, target.service.store, actor="tester")
    assert [(f.field, f.code) for f in done.flagged] == [("body", "secret_detected")]
    assert done.flagged[0].line >= 2 and "copied as they are" in done.flagged[0].message
    assert done.digest == archive.content_digest(target.service.store)[1]
    assert any(SECRET in b for b in _bodies(target))
    found = target.run(
        "search", {"initiatives": ["pond"], "filters": {"types": ["audit_event"]}, "limit": 50, "budget_chars": 64000}
    )
    copies = [json.loads(h["body"]) for h in found["data"]["hits"] if h["name"] == "audit:copy"]
    assert len(copies) == 1 and copies[0]["actor"] == "tester"
    assert {c["field"]: c["after"] for c in copies[0]["changes"]}["copy.flagged_secrets"] == 1


def test_copy_of_a_record_breaking_the_limits_writes_nothing(tmp_path: Path, fresh: Callable[[str], Fresh]) -> None:
    """A record no tool could have written (stored straight into the vault) refuses the copy whole."""
    source = fresh("reject")
    node_id = source.run("note", {"initiative": "pond", "text": "the heron waits"})["data"]["primary"]["id"]
    with source.service.store.write() as session:
        node = session.get_node(node_id)
        assert node is not None
        session.put_node(
            replace(node, rev_no=2, revision="2-bad", name="n" * 201, recorded_at=node.recorded_at[:-2] + "9Z"),
            request_id=None,
            actor="hand",
        )
    target = fresh("reject")
    with pytest.raises(KaeruError) as refused:
        archive.copy(source.service.store, target.service.store)
    assert refused.value.code == "invalid_argument" and "name is longer than 200 characters" in refused.value.message
    assert " name: " in refused.value.message and target.empty()


#: A secret that fits a slot name's pattern (rule openai_key): lower-case letters, digits and `-`.
SLOT_SECRET = "sk-" + "q7w8e9r0t1y2u3i4o5p6"


def _handles_archive(backend: str, tmp_path: Path, root: Path, name: str, *, slot: bool) -> list[str]:
    """An archive written under `allow` (or before decision 362) whose note carries a secret as its
    request id and, with `slot`, a slot named by a secret."""
    spec = new_vault(backend, tmp_path)
    settings = spec.settings(secret_policy="allow", export_root=root)
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        noted = run("note", {"initiative": "pond", "text": "the heron waits", "request_id": SECRET})
        assert noted["state"] == "applied"
        if slot:
            held = run("slot", {"initiative": "pond", "slot": SLOT_SECRET, "node": noted["data"]["primary"]["id"]})
            assert held["state"] == "applied"
        assert archive.export(store, settings, parse("archive", {"action": "export", "path": name})).artifacts
    finally:
        store.close()
        drop_vault(spec)
    return (root / name).read_text().splitlines()


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_a_secret_slot_name_refuses_the_archive_under_both_policies(
    backend: str, tmp_path: Path, root: Path, fresh: Callable[[str], Fresh], policy: str
) -> None:
    """A slot's name is a handle, as on the write path (decision 362): refused, never redacted."""
    handles = _handles_archive(backend, tmp_path, root, "handles.amg", slot=True)
    slot_line = next(i + 1 for i, line in enumerate(handles) if '"kind":"slot"' in line)
    f = fresh(policy)
    refused = f.run("archive", {"action": "import", "path": "handles.amg"})
    assert refused["state"] == "rejected"
    message = refused["issues"][0]["message"]
    assert refused["issues"][0]["code"] == "secret_detected" and f"line {slot_line} slot" in message
    assert f.empty()


def test_a_secret_request_id_is_refused_under_reject_and_redacted_under_redact(
    backend: str, tmp_path: Path, root: Path, fresh: Callable[[str], Fresh]
) -> None:
    """In an archive a request id is the write's provenance, not a replay key: screened as text."""
    lines = _handles_archive(backend, tmp_path, root, "rid.amg", slot=False)
    noted = next(i + 1 for i, line in enumerate(lines) if '"kind":"node"' in line and SECRET in line)
    refused = fresh("reject").run("archive", {"action": "import", "path": "rid.amg"})
    assert refused["state"] == "rejected" and f"line {noted} request_id" in refused["issues"][0]["message"]
    f = fresh("redact")
    imported = f.run("archive", {"action": "import", "path": "rid.amg"})
    assert imported["state"] == "applied", imported["issues"]
    assert ("secret_detected", "request_id") in [(i["code"], i["field"]) for i in imported["issues"]]
    assert any("the heron waits" in body for body in _bodies(f))
    assert f.run("archive", {"action": "export", "path": "again.amg"})["state"] == "applied"
    assert SECRET not in (root / "again.amg").read_text()
