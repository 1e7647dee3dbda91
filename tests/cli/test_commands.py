"""Every `kaeru` command end to end, on both backends: human output, `--json` output (the API
envelope checked against the tool's output schema, or the command's documented object), exit codes,
and bad arguments answered with a message, never a traceback."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

import pytest

from kaeru.cli.call import describe_tool
from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.tools import register_tools
from tests.backends import VaultSpec, new_vault, postgres_admin_url
from tests.cli.support import Run, error_object, kaeru, valid_envelope, write_notes, write_tasks
from tests.wire.support import initialize_request

pytestmark = pytest.mark.timeout(300)


def _noted(vault: VaultSpec, text: str, initiative: str = "cli", **flags: str) -> str:
    """A note the test's commands then work on, written in process (`kaeru note` itself is the
    subject of the tests that run it)."""
    [node_id] = write_notes(vault, initiative, {"text": text, **flags})
    return node_id


def test_note_human_json_replay_and_rejection(vault: VaultSpec) -> None:
    human = kaeru(vault, "note", "-i", "cli", "the heron waits by the pond")
    assert human.code == 0 and human.stdout.startswith("applied: ")
    node_id = human.stdout.split()[1]

    first = kaeru(vault, "note", "-i", "cli", "a replayed note", "--request-id", "r-1", as_json=True)
    again = kaeru(vault, "note", "-i", "cli", "a replayed note", "--request-id", "r-1", as_json=True)
    assert valid_envelope(again, "note", "mutation", "applied")["replayed"] is True
    assert again.json()["data"]["primary"]["id"] == first.json()["data"]["primary"]["id"]

    bad = kaeru(vault, "note", "-i", "cli", "x", "--kind", "nonsense", as_json=True)
    assert bad.code == 2
    envelope = valid_envelope(bad, "note", "mutation", "rejected")
    assert envelope["issues"][0]["code"] == "invalid_argument" and envelope["issues"][0]["field"] == "kind"
    bad_human = kaeru(vault, "note", "-i", "cli", "x", "--kind", "nonsense")
    assert bad_human.code == 2 and "invalid_argument [kind]" in bad_human.stderr

    found = kaeru(vault, "search", "heron", "-i", "cli", as_json=True)
    assert [h["id"] for h in valid_envelope(found, "search", "read", "ok")["data"]["hits"]] == [node_id]


def test_note_from_stdin_with_tags_and_time(vault: VaultSpec) -> None:
    """`kaeru note -` stores what is piped in (not a dash); --tag and --occurred-at reach the node."""
    text = "build log:\nstep 1 compiled\nstep 2 linked the kestrel module\n"
    run = kaeru(
        vault,
        "note",
        "-i",
        "cli",
        "-",
        "--tag",
        "ci",
        "--tag",
        "build",
        "--occurred-at",
        "2026-03-01",
        stdin=text.encode(),
        as_json=True,
    )
    node_id = valid_envelope(run, "note", "mutation", "applied")["data"]["primary"]["id"]
    shown = valid_envelope(kaeru(vault, "read", node_id, "-i", "cli", as_json=True), "read", "read", "ok")
    node = shown["data"]["hits"][0]
    assert node["body"] == text
    assert {"ci", "build"} <= set(node["tags"])
    assert "2026-03-01" in json.dumps(node), node
    found = valid_envelope(kaeru(vault, "search", "kestrel", "-i", "cli", as_json=True), "search", "read", "ok")
    assert [h["id"] for h in found["data"]["hits"]] == [node_id]


def test_words_need_no_quotes(vault: VaultSpec) -> None:
    """A terminal user types `kaeru note -i cli the kestrel nests …` as they would a sentence: the
    words are the note, joined by a space, as if quoted; `search` and `recall` take several words
    the same way (a query quoted whole answers the same)."""
    run = kaeru(vault, "note", "-i", "cli", "the", "kestrel", "nests  high", "above the quarry", as_json=True)
    node_id = valid_envelope(run, "note", "mutation", "applied")["data"]["primary"]["id"]
    shown = valid_envelope(kaeru(vault, "read", node_id, "-i", "cli", as_json=True), "read", "read", "ok")
    assert shown["data"]["hits"][0]["body"] == "the kestrel nests  high above the quarry"
    _noted(vault, "the quarry floods every spring")

    both = kaeru(vault, "search", "kestrel", "quarry", "-i", "cli", "--all-words", as_json=True)
    quoted = kaeru(vault, "search", "kestrel quarry", "-i", "cli", "--all-words", as_json=True)
    assert [h["id"] for h in valid_envelope(both, "search", "read", "ok")["data"]["hits"]] == [node_id]
    assert both.json()["data"] == quoted.json()["data"]

    asked = kaeru(vault, "recall", "where", "does", "the", "kestrel", "nest", "-i", "cli", as_json=True)
    whole = kaeru(vault, "recall", "where does the kestrel nest", "-i", "cli", as_json=True)
    hits = valid_envelope(asked, "recall", "read", "ok")["data"]["hits"]
    assert hits and hits[0]["id"] == node_id
    assert [h["id"] for h in hits] == [h["id"] for h in whole.json()["data"]["hits"]]

    nothing = kaeru(vault, "note", "-i", "cli")
    assert nothing.code == 2 and "Missing argument 'TEXT...'" in nothing.stderr


def test_read_prints_a_long_body_whole(vault: VaultSpec) -> None:
    """`kaeru read` shows a node in full: a body longer than one answer is read page by page;
    with --json the first page names the next --offset, which returns the rest."""
    body = " ".join(f"w{i:05d}" for i in range(30000))  # 179,999 characters: three answers
    node_id = _noted(vault, "placeholder", name="long")
    long_id = _noted(vault, body, name="longer")  # `kaeru note -` is test_note_from_stdin_with_tags_and_time's
    assert long_id != node_id
    human = kaeru(vault, "read", "longer", "-i", "cli")
    assert human.code == 0 and body in human.stdout and "rev " in human.stdout
    first = valid_envelope(kaeru(vault, "read", "longer", "-i", "cli", as_json=True), "read", "read", "ok")
    offset = first["continuation"]["next_arguments"]["body_offset"]
    assert first["data"]["hits"][0]["body"] == body[:offset]
    rest = kaeru(vault, "read", "longer", "-i", "cli", "--offset", str(offset), as_json=True)
    page = valid_envelope(rest, "read", "read", "ok")["data"]["hits"][0]["body"]
    assert page and body[offset:].startswith(page)


def test_search_read_recall_context(vault: VaultSpec) -> None:
    heron = _noted(vault, "the heron waits by the pond at dawn", name="heron")
    _noted(vault, "decided to use herons as the mascot", kind="decision", name="mascot")

    search = kaeru(vault, "search", "heron", "-i", "cli")
    assert search.code == 0 and heron in search.stdout and "heron" in search.stdout
    envelope = valid_envelope(kaeru(vault, "search", "pond", "-i", "cli", as_json=True), "search", "read", "ok")
    assert envelope["data"]["total"] == 1 and envelope["data"]["hits"][0]["id"] == heron
    paged = valid_envelope(kaeru(vault, "search", "the", "-i", "cli", "--limit", "1", as_json=True), "search", "read")
    assert paged["continuation"] is not None
    cursor = paged["continuation"]["cursor"]
    rest = kaeru(vault, "search", "the", "-i", "cli", "--limit", "1", "--cursor", cursor, as_json=True)
    assert valid_envelope(rest, "search", "read", "ok")["data"]["hits"]
    human_page = kaeru(vault, "search", "the", "-i", "cli", "--limit", "1")
    assert "(more: repeat this command with --cursor " in human_page.stderr
    bad_limit = kaeru(vault, "search", "heron", "-i", "cli", "--limit", "0", as_json=True)
    assert bad_limit.code == 2 and valid_envelope(bad_limit, "search", "read", "rejected")["issues"][0]["field"]

    read = kaeru(vault, "read", heron, "-i", "cli")
    assert read.code == 0 and "the heron waits by the pond at dawn" in read.stdout
    envelope = valid_envelope(kaeru(vault, "read", "heron", "-i", "cli", as_json=True), "read", "read", "ok")
    assert envelope["data"]["hits"][0]["id"] == heron
    missing = kaeru(vault, "read", "no-such-node", "-i", "cli", as_json=True)
    assert missing.code == 2 and valid_envelope(missing, "read", "read", "rejected")["issues"][0]["code"] == "not_found"
    missing_human = kaeru(vault, "read", "no-such-node", "-i", "cli")
    assert missing_human.code == 2 and "not_found" in missing_human.stderr

    recall = kaeru(vault, "recall", "why herons", "-i", "cli", "--intent", "explain_decision")
    assert recall.code == 0 and "mascot" in recall.stdout and "(plan " not in recall.stderr
    explained = kaeru(vault, "recall", "why herons", "-i", "cli", "--explain")
    assert "(plan " in explained.stderr, "how it searched, when asked why"
    # Nothing found is said on stderr (it was silence), and stdout stays empty for a script.
    nothing = kaeru(vault, "search", "zebrafinch", "-i", "cli")
    assert nothing.code == 0 and nothing.stdout == "" and "(no hits)" in nothing.stderr
    # A global option after the command is told where it goes (each command's help shows "--json: {…}").
    late = kaeru(vault, "doctor", "--json")
    assert late.code == 2 and "--json is a global option: give it before the command" in late.stderr
    envelope = valid_envelope(
        kaeru(vault, "recall", "why herons", "-i", "cli", "--explain", as_json=True), "recall", "read", "ok"
    )
    assert any(h["name"] == "mascot" for h in envelope["data"]["hits"])
    bad_risk = kaeru(vault, "recall", "x", "-i", "cli", "--risk", "extreme")
    assert bad_risk.code == 2 and "'extreme' is not one of" in bad_risk.stderr

    context = kaeru(vault, "context", "-i", "cli")
    assert context.code == 0 and "== " in context.stdout and "mascot" in context.stdout
    envelope = valid_envelope(kaeru(vault, "context", "-i", "cli", as_json=True), "context", "read", "ok")
    named = kaeru(vault, "context", "cli", as_json=True)  # the initiative as the command's argument
    assert valid_envelope(named, "context", "read", "ok")["data"] == envelope["data"]
    assert kaeru(vault, "context", "cli", "-i", "cli").stdout == context.stdout
    for wrong, said in ((("cli", "-i", "other"), "two initiatives"), ((), "Missing initiative")):
        refused = kaeru(vault, "context", *wrong)
        assert refused.code == 2 and said in refused.stderr
    assert any(item["name"] == "mascot" for s in envelope["data"]["sections"] for item in s["items"])
    small = kaeru(vault, "context", "-i", "cli", "--budget", "1", as_json=True)
    assert small.code == 2 and valid_envelope(small, "context", "read", "rejected")["issues"][0]["code"]
    # A person reading the re-entry sees what the model's text says of a task: its due day, and
    # that it is overdue (it was a name and a body like any other).
    write_tasks(
        vault,
        "cli",
        {"text": "pay the invoice", "due": "2020-01-01"},
        {"text": "renew the domain", "due": "2099-01-01"},
    )
    tasks = kaeru(vault, "context", "-i", "cli").stdout
    assert "[open · due 2020-01-01 · OVERDUE]: pay the invoice" in tasks, tasks
    assert "[open · due 2099-01-01]: renew the domain" in tasks


def test_recall_filters_from_the_terminal(vault: VaultSpec) -> None:
    """recall's filters (issue 17) reach the tool from the command line, and a bad one is refused."""
    jot = _noted(vault, "the harbour crane lifts containers at night")
    decision = _noted(vault, "decided the harbour crane runs only at night", kind="decision")

    def found(*flags: str) -> set[str]:
        run = kaeru(vault, "recall", "harbour crane", "-i", "cli", *flags, as_json=True)
        return {h["id"] for h in valid_envelope(run, "recall", "read", "ok")["data"]["hits"]}

    assert {jot, decision} <= found()
    # Both notes are episodes (a decision is a kind, not a type).
    assert {jot, decision} <= found("--type", "episode")
    assert found("--type", "task") == set()
    assert found("--layer", "cold", "--include-stale") == set()
    assert {jot, decision} <= found("--branch", "feat/x", "--include-suppressed")
    assert found("--tag", "no-such-tag") == set()
    bad = kaeru(vault, "recall", "harbour", "-i", "cli", "--layer", "lukewarm", as_json=True)
    assert bad.code == 2 and valid_envelope(bad, "recall", "read", "rejected")["issues"][0]["field"].startswith(
        "layers"
    )


def test_a_refusal_is_the_one_a_tool_call_gets(vault: VaultSpec) -> None:
    """The CLI validates through the tools' own path (decision 14.T2): same field, same message."""
    from kaeru.api.requests import parser_for

    refused = kaeru(vault, "context", "-i", "cli", "--budget", "100", as_json=True)
    issue = valid_envelope(refused, "context", "read", "rejected")["issues"][0]
    expected = parser_for("context").problem({"initiative": "cli", "budget_chars": 100})
    assert expected is not None
    assert (issue["code"], issue["field"], issue["message"]) == (expected.code, "budget_chars", expected.message)


def test_bad_usage_is_a_message_and_exit_2(tmp_path: Path) -> None:
    vault = {"KAERU_VAULT": str(tmp_path / "v")}
    no_initiative = kaeru(vault, "search", "x")
    assert no_initiative.code == 2 and "Missing option '-i'" in no_initiative.stderr
    unknown = kaeru(vault, "frobnicate")
    assert unknown.code == 2 and "No such command 'frobnicate'" in unknown.stderr
    not_int = kaeru(vault, "search", "x", "-i", "a", "--limit", "many")
    assert not_int.code == 2 and "'many' is not a valid integer" in not_int.stderr
    bad_setting = kaeru(vault, "search", "x", "-i", "a", KAERU_SECRET_POLICY="sometimes")
    assert bad_setting.code == 2 and "KAERU_SECRET_POLICY must be one of" in bad_setting.stderr
    assert not (tmp_path / "v").exists()  # nothing opened a vault for a refused command line
    version = kaeru(vault, "--version")
    assert version.code == 0 and "version" in version.stdout
    helped = kaeru(vault, "--help")
    assert helped.code == 0
    for command in ("serve", "context", "search", "recall", "read", "note", "export", "import", "copy"):
        assert command in helped.stdout
    for command in ("migrate", "reindex", "hygiene", "tools", "doctor"):
        assert command in helped.stdout


def test_each_bad_setting_is_named_and_exit_2(tmp_path: Path) -> None:
    """A setting out of its range names the variable, exits 2, and opens no vault."""
    vault = {"KAERU_VAULT": str(tmp_path / "v")}
    bad = [
        ("KAERU_REPLAY_DAYS", "0", "KAERU_REPLAY_DAYS must be 1 to 365000"),
        # Past the calendar, and past PostgreSQL's 32-bit settings: every write failed, or every
        # connection, said 30 s later as a pool timeout (decision 214).
        ("KAERU_REPLAY_DAYS", "99999999999", "KAERU_REPLAY_DAYS must be 1 to 365000"),
        ("KAERU_PG_STATEMENT_TIMEOUT_MS", "-1", "KAERU_PG_STATEMENT_TIMEOUT_MS must be 0"),
        ("KAERU_PG_STATEMENT_TIMEOUT_MS", "3000000000", "KAERU_PG_STATEMENT_TIMEOUT_MS must be 0 (no timeout) to"),
        ("KAERU_DATABASE_URL", "mysql://db/kaeru", "KAERU_DATABASE_URL must be a postgresql:// URL"),
        ("KAERU_PORT", "http", "KAERU_PORT must be a whole number, not 'http'"),
        ("KAERU_BUSY_TIMEOUT_MS", "-5", "KAERU_BUSY_TIMEOUT_MS must be 0 or more"),
        ("KAERU_SEARCH_CACHE_MB", "-1", "KAERU_SEARCH_CACHE_MB must be 0 (no copies) to 1048576"),
    ]
    # A password with an unencoded `@` or `/`: its tail was read as the host and shown in errors,
    # the doctor's report and `setup`'s client files; it is refused, and nothing of it is shown.
    for url in (
        "postgresql://app:Sup3r@Secret99@localhost:5433/k1",
        "postgresql://app:p@ss/w:rd%x@localhost/k1",
        "postgresql://kaeru:Secret99/rd%x@localhost:5432/kaeru",  # no second `@`: the `/` ends the host
        "postgresql://kaeru:Secret99?rd%x@localhost/kaeru",
    ):
        bad.append(("KAERU_DATABASE_URL", url, "must be percent-encoded in the URL (%40, %2F, %3F, %3A, %25)"))
    for name, value, message in bad:
        run = kaeru(vault, "search", "x", "-i", "a", **{name: value})
        assert run.code == 2 and message in run.stderr, (name, run.stderr)
        assert "Secret99" not in run.stderr and "rd%x" not in run.stderr
    assert not (tmp_path / "v").exists()


def test_a_place_that_cannot_hold_a_vault_is_named(tmp_path: Path) -> None:
    """KAERU_VAULT under a file or a file itself, a vault file that is a folder, a file that is not a database: each
    ends the command with a message naming the path and what to do — no traceback, nothing written."""
    (tmp_path / "plain").write_text("a file, not a folder")
    (tmp_path / "folder" / "vault.sqlite3").mkdir(parents=True)
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "vault.sqlite3").write_text("notes I kept by hand\n" * 200)
    cases = {
        tmp_path
        / "plain"
        / "v": f"cannot make the vault folder {tmp_path / 'plain' / 'v'}: {tmp_path / 'plain'} is a file",
        tmp_path / "plain": f"cannot make the vault folder {tmp_path / 'plain'}: {tmp_path / 'plain'} is a file",
        tmp_path / "folder": "it is a folder",
        tmp_path / "text": "is not a kaeru vault",
    }
    for place, said in cases.items():
        run = kaeru({"KAERU_VAULT": str(place)}, "note", "-i", "cli", "hello")
        assert run.code == 1 and said in run.stderr and str(place) in run.stderr, run.stderr
    assert (tmp_path / "text" / "vault.sqlite3").read_text() == "notes I kept by hand\n" * 200
    doctor = kaeru({"KAERU_VAULT": str(tmp_path / "folder")}, "doctor")
    assert doctor.code == 1 and "is a folder, not a vault file" in doctor.stdout, doctor.stdout


def test_a_postgresql_url_without_its_driver_says_what_to_install(tmp_path: Path) -> None:
    """An install without the `[postgres]` extra, pointed at PostgreSQL: every command — `serve`
    included, before `initialize` — ends with the command that installs the driver, never a
    traceback of `import psycopg` (decision 165)."""
    missing = tmp_path / "no-driver" / "psycopg"
    missing.mkdir(parents=True)
    (missing / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'psycopg'\", name='psycopg')\n")
    env = {
        "KAERU_DATABASE_URL": "postgresql://kaeru@127.0.0.1:9/kaeru",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(missing.parent), os.environ.get("PYTHONPATH")])),
    }
    said = "pip install 'kaeru-memory[postgres]'"
    for args, stdin in (
        (("note", "-i", "cli", "hello"), None),
        (("search", "-i", "cli", "hello"), None),
        (("doctor",), None),
        (("serve",), (json.dumps(initialize_request()) + "\n").encode()),
    ):
        run = kaeru(env, *args, stdin=stdin)
        assert run.code == 1 and said in run.stderr + run.stdout, (args, run.stderr, run.stdout)
        if args == ("serve",):
            assert run.stdout == "", run.stdout  # no vault, so no answer: the client sees the exit


def test_export_and_import_round_trip(vault: VaultSpec, tmp_path: Path) -> None:
    heron = _noted(vault, "the heron waits by the pond")
    archive = tmp_path / "out" / "vault.amg"
    archive.parent.mkdir()
    human = kaeru(vault, "export", str(archive))
    assert human.code == 0 and f"wrote {archive}" in human.stdout and "1 nodes" in human.stdout
    assert human.stderr == "", "no spinner (nor its empty line) where stderr is no terminal"
    again = tmp_path / "out" / "again.amg"
    envelope = valid_envelope(kaeru(vault, "export", str(again), as_json=True), "archive", "mutation", "applied")
    assert envelope["data"]["artifacts"][0]["path"] == str(again) and again.read_bytes() == archive.read_bytes()
    markdown = kaeru(vault, "export", str(tmp_path / "out" / "md"), "--format", "markdown", as_json=True)
    assert valid_envelope(markdown, "archive", "mutation", "applied")["data"]["artifacts"][0]["format"] == "markdown"
    bad_format = kaeru(vault, "export", str(archive), "--format", "zip")
    assert bad_format.code == 2 and "'zip' is not one of" in bad_format.stderr

    fresh = new_vault("sqlite", tmp_path)
    imported = kaeru(fresh, "import", str(archive), as_json=True)
    envelope = valid_envelope(imported, "archive", "mutation", "applied")
    assert any(c["field"].endswith("node_revisions") and c["after"] == 1 for c in envelope["data"]["changes"])
    assert kaeru(fresh, "read", heron, "-i", "cli", as_json=True).json()["data"]["hits"][0]["id"] == heron
    twice = kaeru(fresh, "import", str(archive))
    assert twice.code == 0 and "skipped=" in twice.stdout

    absent = kaeru(fresh, "import", str(tmp_path / "absent.amg"), as_json=True)
    assert absent.code == 2 and valid_envelope(absent, "archive", "mutation", "rejected")["issues"]
    absent_human = kaeru(fresh, "import", str(tmp_path / "absent.amg"))
    assert absent_human.code == 2 and absent_human.stderr.strip()


def test_a_vault_goes_through_a_pipe_with_export_and_import_of_dash(vault: VaultSpec, tmp_path: Path) -> None:
    """`kaeru export - | kaeru import -` (decision 210): the archive is standard output and what is
    said about it goes to standard error; before, `-` was written as a file named `-`."""
    heron = _noted(vault, "the heron waits by the pond")
    streamed = kaeru(vault, "export", "-", as_json=True)
    archive = streamed.stdout.encode()
    said = valid_envelope(Run(streamed.code, streamed.stderr, ""), "archive", "mutation", "applied")
    artifact = said["data"]["artifacts"][0]
    assert streamed.code == 0 and artifact["path"] == "-" and artifact["nodes"] == 1
    assert artifact["bytes"] == len(archive) and artifact["sha256"] == hashlib.sha256(archive).hexdigest()
    assert json.loads(archive.split(b"\n", 1)[0])["format"] == "amg" and not (tmp_path / "-").exists()
    human = kaeru(vault, "export", "-")
    assert human.code == 0 and "wrote standard output (amg," in human.stderr and "wrote" not in human.stdout

    for fed in (archive, gzip.compress(archive)):
        fresh = new_vault("sqlite", tmp_path)
        imported = valid_envelope(kaeru(fresh, "import", "-", stdin=fed, as_json=True), "archive", "mutation")
        assert imported["state"] == "applied", imported
        assert kaeru(fresh, "read", heron, "-i", "cli", as_json=True).json()["data"]["hits"][0]["id"] == heron

    nothing = kaeru(vault, "import", "-", stdin=b"", as_json=True)
    assert nothing.code == 2 and valid_envelope(nothing, "archive", "mutation", "rejected")["issues"]
    folder = kaeru(vault, "export", "-", "--format", "markdown")
    assert folder.code == 2 and "a markdown export is a folder" in folder.stderr and folder.stdout == ""


def test_copy_between_vaults(vault: VaultSpec, tmp_path: Path) -> None:
    """Copy this backend's vault into a SQLite directory and back into an empty vault of it."""
    heron = _noted(vault, "the heron waits by the pond")
    source = vault.database_url or str(vault.vault_dir)
    target = tmp_path / "copy"
    copied = kaeru({}, "copy", "--from", source, "--to", str(target), as_json=True)
    assert copied.code == 0, copied.stderr
    document = copied.json()
    assert document["ok"] is True and document["copied"]["node_revisions"] >= 1 and len(document["digest"]) == 64
    assert document["flagged"] == []  # nothing secret-looking in this vault
    found = kaeru({"KAERU_VAULT": str(target)}, "read", heron, "-i", "cli", as_json=True)
    assert found.json()["data"]["hits"][0]["id"] == heron

    refused = kaeru({}, "copy", "--from", source, "--to", str(target), as_json=True)
    assert "not empty" in error_object(refused, "target_not_empty", 1)
    refused_human = kaeru({}, "copy", "--from", source, "--to", str(target))
    assert refused_human.code == 1 and "target_not_empty" in refused_human.stderr
    forced = kaeru({}, "copy", "--from", source, "--to", str(target), "--force")
    assert forced.code == 0 and "verified digest" in forced.stdout
    missing = kaeru({}, "copy", "--from", source)
    assert missing.code == 2 and "Missing option '--to'" in missing.stderr


def test_a_copy_into_postgres_leaves_it_analysed(vault: VaultSpec, tmp_path: Path) -> None:
    """A vault copied into PostgreSQL is searched with plans made from statistics at once, not after
    autovacuum's first pass (decision 70): the copy ends with ANALYZE."""
    if vault.backend != "postgres":
        pytest.skip("PostgreSQL's planner statistics")
    import psycopg

    source = new_vault("sqlite", tmp_path)
    _noted(source, "the heron waits by the pond")
    copied = kaeru({}, "copy", "--from", str(source.vault_dir), "--to", str(vault.database_url), "--force")
    assert copied.code == 0, copied.stderr
    with psycopg.connect(str(vault.database_url), autocommit=True) as conn:
        row = conn.execute("SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'nodes'").fetchone()
    assert row is not None and row[0] is not None


def test_migrate_reports_the_schema_and_refuses_a_newer_vault(vault: VaultSpec) -> None:
    human = kaeru(vault, "migrate")
    assert human.code == 0 and f"{vault.backend} vault " in human.stdout, human.stdout
    # A current vault: nothing applied by this run, and said so (it said "N migration(s) applied").
    again = kaeru(vault, "migrate")
    assert again.code == 0 and "already current" in again.stdout and "applied" not in again.stdout, again.stdout
    document = kaeru(vault, "migrate", as_json=True).json()
    assert document["ok"] is True and document["store"]["backend"] == vault.backend
    migrations = document["migrations"]
    assert migrations["applied"] == migrations["known"] == migrations["newest"] >= 3
    assert migrations["applied_now"] == 0

    from tests.cli.test_doctor import record_future_migration

    record_future_migration(vault)
    newer = kaeru(vault, "migrate", as_json=True)
    assert newer.code == 1 and newer.json()["ok"] is False and newer.json()["migrations"]["newest"] == 999
    newer_human = kaeru(vault, "migrate")
    assert newer_human.code == 1 and "upgrade kaeru" in newer_human.stderr


def test_a_vault_from_a_newer_kaeru_is_refused_by_every_command(vault: VaultSpec) -> None:
    """An older kaeru must not write into a schema it does not know (it would skip what the newer
    code maintains): opening the vault refuses, says to upgrade, and nothing is stored."""
    _noted(vault, "written before the upgrade")
    from tests.cli.test_doctor import _scalar, record_future_migration

    record_future_migration(vault)
    nodes_before = _scalar(vault, "SELECT count(*) FROM nodes")
    note = kaeru(vault, "note", "-i", "cli", "written by an older kaeru", as_json=True)
    assert "upgrade kaeru" in error_object(note, "unavailable", 1)
    search = kaeru(vault, "search", "written", "-i", "cli")
    assert search.code == 1 and "upgrade kaeru" in search.stderr and "Traceback" not in search.stderr
    assert _scalar(vault, "SELECT count(*) FROM nodes") == nodes_before


def test_reindex_semantic_off_and_text(vault: VaultSpec) -> None:
    _noted(vault, "the heron waits by the pond")
    off = kaeru(vault, "reindex", as_json=True)
    assert "KAERU_SEMANTIC=1" in error_object(off, "semantic_off", 1)
    off_human = kaeru(vault, "reindex")
    assert off_human.code == 1 and "semantic_off" in off_human.stderr
    text = kaeru(vault, "reindex", "--text", as_json=True)
    assert text.code == 0 and text.json() == {"ok": True, "text_rows": 1}
    text_human = kaeru(vault, "reindex", "--text")
    assert text_human.code == 0 and "1 node(s) indexed" in text_human.stdout


def test_hygiene(vault: VaultSpec) -> None:
    _noted(vault, "the heron waits by the pond")
    human = kaeru(vault, "hygiene", "-i", "cli")
    assert human.code == 0 and "node(s) moved" in human.stderr
    document = kaeru(vault, "hygiene", "-i", "cli", as_json=True).json()
    assert document["ok"] is True and document["initiative"] == "cli" and document["moved"] == len(document["moves"])
    unknown = kaeru(vault, "hygiene", "-i", "nowhere", as_json=True)
    assert unknown.code == 2 and unknown.json()["ok"] is False and unknown.json()["error"]["code"]
    unknown_human = kaeru(vault, "hygiene", "-i", "nowhere")
    assert unknown_human.code == 2 and unknown_human.stderr.startswith("error: ")


def test_tools_lists_every_tool(vault: VaultSpec) -> None:
    listing = kaeru(vault, "tools", as_json=True)
    assert listing.code == 0
    tools = listing.json()
    names = [t["name"] for t in tools]
    assert {"search", "note", "read", "recall", "context", "archive"} <= set(names)
    assert all("inputSchema" in t and "description" in t for t in tools)
    human = kaeru(vault, "tools")
    assert human.code == 0 and [line.split()[0] for line in human.stdout.splitlines()] == names


def test_tools_needs_no_vault(tmp_path: Path) -> None:
    """What the tools are is readable before any vault exists and while the database is down: the
    list and one tool's arguments, the same as a served vault's, and no vault is created."""
    missing = {"KAERU_VAULT": str(tmp_path / "never")}
    down = {"KAERU_DATABASE_URL": "postgresql://kaeru@127.0.0.1:9/nowhere?connect_timeout=2"}
    for where in (missing, down):
        listing = kaeru(where, "tools", as_json=True)
        assert listing.code == 0, listing.stderr
        assert {"search", "note", "read", "recall", "context", "archive"} <= {t["name"] for t in listing.json()}
        shown = kaeru(where, "tools", "context")
        assert shown.code == 0 and "budget_chars (integer 512..64000, optional, default 8000)" in shown.stdout
    assert not (tmp_path / "never").exists()
    catalogue = ToolRegistry.catalogue()
    register_tools(catalogue)
    built = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in catalogue.built_listing()]
    assert kaeru(missing, "tools", as_json=True).json() == built  # what the tools are built as
    unstructured = kaeru(missing, "tools", as_json=True, KAERU_STRUCTURED="off").json()
    assert not any("outputSchema" in t for t in unstructured)  # as the server lists them then
    # One tool's arguments are those its built tool validates by, read without the SDK (decision 199).
    for entry in built:
        if entry["name"] in ("search", "note", "context", "archive"):
            shown = kaeru(missing, "tools", entry["name"])
            assert shown.stdout.strip() == describe_tool(entry, catalogue.specs[entry["name"]].input_schema).strip()
    imported = kaeru(missing, "tools", "note", PYTHONPROFILEIMPORTTIME="1")
    assert "kaeru.cli" in imported.stderr  # the import times are there to read
    assert not [line for line in imported.stderr.splitlines() if line.split("|")[-1].strip() == "mcp"]


def test_a_read_on_a_vault_that_is_not_there_says_so_and_creates_none(tmp_path: Path) -> None:
    """A mistyped `--vault`: every command that only reads says there is no vault there (exit 2,
    `not_found`) instead of creating an empty one and answering "no initiative named …"; the
    first note creates it, and then the same reads answer."""
    where = {"KAERU_VAULT": str(tmp_path / "typo")}
    reads = (
        ("search", "heron", "-i", "birds"),
        ("recall", "heron", "-i", "birds"),
        ("context", "-i", "birds"),
        ("call", "initiatives"),
    )
    for argv in reads:
        refused = kaeru(where, *argv, as_json=True)
        assert "there is no vault at" in error_object(refused, "not_found", 2), argv
        human = kaeru(where, *argv)
        assert human.code == 2 and "a new vault is created by the first `kaeru note`" in human.stderr
    assert not (tmp_path / "typo").exists()
    assert kaeru(where, "note", "-i", "birds", "the heron waits").code == 0
    for argv in reads:
        assert kaeru(where, *argv, as_json=True).code == 0, argv


def test_commands_that_work_on_what_a_vault_holds_refuse_one_that_is_not_there(tmp_path: Path) -> None:
    """`export`, `hygiene`, `reindex`, `token list`/`revoke`, the viewer and `copy --from` act on what
    is stored: on a mistyped `--vault` (or source) they say there is none (exit 2, `not_found`) and
    leave none behind — an export of it was an empty archive of a vault just made, a copy of it a
    "verified" copy of nothing. A bad export argument is still told first; a note creates the vault,
    and then the export writes its archive."""
    where = {"KAERU_VAULT": str(tmp_path / "typo")}
    commands = (
        ("export", str(tmp_path / "out.amg")),
        ("hygiene", "-i", "birds"),
        ("reindex", "--text"),
        ("token", "list"),
        ("token", "revoke", "ci"),
        ("ui",),
        ("copy", "--from", str(tmp_path / "typo"), "--to", str(tmp_path / "moved")),
    )
    for argv in commands:
        refused = kaeru(where, *argv, as_json=True)
        assert "there is no vault at" in error_object(refused, "not_found", 2), argv
    assert not (tmp_path / "typo").exists() and not (tmp_path / "out.amg").exists()
    assert not (tmp_path / "moved").exists(), "the copy's target is not made either"
    bad = kaeru(where, "export", str(tmp_path / "out.amg"), "--format", "amg", "-i", "", as_json=True)
    assert bad.code == 2 and bad.json()["issues"][0]["field"].startswith("initiatives"), bad.stdout
    assert kaeru(where, "note", "-i", "birds", "the heron waits").code == 0
    written = kaeru(where, "export", str(tmp_path / "out.amg"), as_json=True)
    assert written.code == 0 and (tmp_path / "out.amg").stat().st_size > 0, written.stdout


def test_a_copy_from_a_postgres_database_that_holds_no_vault_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    """`copy --from` a PostgreSQL database without kaeru's tables: refused `not_found` naming the
    URL without its password, as a SQLite source that is not a vault is (decision 202). It ran the
    migrations in the source (22 tables) and reported a verified copy of nothing."""
    if postgres_admin_url() is None:
        pytest.skip("a PostgreSQL source: KAERU_TEST_DATABASE_URL is not set")
    import psycopg

    from tests.pg import blank_database, drop_database

    source = blank_database()
    try:
        with psycopg.connect(source, autocommit=True) as conn:
            conn.execute("CREATE TABLE my_app_data (x int)")
        refused = kaeru({}, "copy", "--from", source, "--to", str(tmp_path / "moved"), as_json=True)
        message = error_object(refused, "not_found", 2)
        assert "there is no vault at" in message and "no schema_migrations table" in message
        password = psycopg.conninfo.conninfo_to_dict(source).get("password")
        assert password and str(password) not in message and "***" in message
        with psycopg.connect(source, autocommit=True) as conn:
            tables = [row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        assert tables == ["my_app_data"], "nothing is created in the source"
        assert not (tmp_path / "moved").exists(), "the copy's target is not made either"
    finally:
        drop_database(source)


def test_serve_answers_initialize_over_stdio_and_exits_on_eof(vault: VaultSpec) -> None:
    lines = [initialize_request(1), {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    stdin = b"".join(json.dumps(m).encode() + b"\n" for m in lines)
    served = kaeru(vault, "serve", stdin=stdin)
    assert served.code == 0, served.stderr
    (answer,) = [json.loads(line) for line in served.stdout.splitlines() if line.strip()]
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"]
    exposed = kaeru(vault, "serve", "--http", "--host", "0.0.0.0")
    assert exposed.code == 2 and "KAERU_AUTH_TOKEN" in exposed.stderr


def test_search_word_options_and_read_as_of(vault: VaultSpec) -> None:
    """`--all-words` needs every word, `--prefix` matches word starts, `read --at` a time before the
    node answers `not_found`."""
    pond = _noted(vault, "the heron waits by the pond")
    sky = _noted(vault, "the heron flies over the sky")
    every = kaeru(vault, "search", "heron pond", "-i", "cli", "--all-words", as_json=True)
    assert [h["id"] for h in valid_envelope(every, "search", "read")["data"]["hits"]] == [pond]
    starts = kaeru(vault, "search", "her", "-i", "cli", "--prefix", as_json=True)
    assert {h["id"] for h in valid_envelope(starts, "search", "read")["data"]["hits"]} == {pond, sky}
    before = kaeru(vault, "read", pond, "-i", "cli", "--at", "2020-01-01", as_json=True)
    assert before.code == 2 and valid_envelope(before, "read", "read", "rejected")["issues"][0]["code"] == "not_found"


def test_export_of_one_initiative_and_an_unwritable_path(vault: VaultSpec, tmp_path: Path) -> None:
    """`export -i` writes only that initiative; a path that cannot be written is `invalid_argument`
    (exit 2), never a traceback."""
    _noted(vault, "the heron waits by the pond")
    _noted(vault, "a heron of another project", initiative="other")
    only = tmp_path / "other.amg"
    exported = kaeru(vault, "export", str(only), "-i", "other", as_json=True)
    assert exported.code == 0, exported.stderr
    [artifact] = valid_envelope(exported, "archive", "mutation", "applied")["data"]["artifacts"]
    assert (artifact["initiatives"], artifact["nodes"]) == (["other"], 1)
    (tmp_path / "a-file").write_text("")
    refused = kaeru(vault, "export", str(tmp_path / "a-file" / "x.amg"))
    assert refused.code == 2 and "invalid_argument [path]: cannot export to" in refused.stderr


def test_an_empty_vault_file_is_no_vault_to_a_command_that_reads(tmp_path: Path) -> None:
    """`: > vault.sqlite3` (by hand, or a copy cut short), then `kaeru search`: the read migrated
    the empty file into a vault (208 KB) and answered `unknown_initiative` (the terminal probe,
    session 48). A read refuses it as no vault, and leaves it as it was; `note` makes the vault."""
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "vault.sqlite3").write_bytes(b"")
    run = kaeru({"KAERU_VAULT": str(folder)}, "search", "hello", "-i", "web")
    assert run.code == 2 and "there is no vault at" in run.stderr and "(an empty file)" in run.stderr, run.stderr
    assert (folder / "vault.sqlite3").stat().st_size == 0
    assert kaeru({"KAERU_VAULT": str(folder)}, "note", "-i", "web", "hello").code == 0
    assert kaeru({"KAERU_VAULT": str(folder)}, "search", "hello", "-i", "web").code == 0
