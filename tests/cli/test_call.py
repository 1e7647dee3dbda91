"""`kaeru call TOOL` and `kaeru tools TOOL`: every tool reachable from a terminal, answered as an
agent is answered (same validation, replay, compare-and-set and envelope), on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru, valid_envelope, write_notes

pytestmark = pytest.mark.timeout(300)


def test_a_task_from_creation_to_done_without_an_agent(vault: VaultSpec) -> None:
    made = kaeru(
        vault,
        "call",
        "task",
        "-a",
        "initiative=web",
        "-a",
        "text=write the release notes",
        "-a",
        "name=release-notes",
        "-a",
        'tags:=["docs"]',
        "-a",
        "due=2099-01-31",
        as_json=True,
    )
    assert made.code == 0, made.stderr
    task = valid_envelope(made, "task", "mutation", "applied")["data"]["primary"]
    stored = kaeru(vault, "--json", "call", "read", "-a", "initiative=web", "-a", "node=release-notes")
    hit = valid_envelope(stored, "read", "read", "ok")["data"]["hits"][0]
    assert hit["id"] == task["id"] and "docs" in hit["tags"] and hit["properties"]["due"] == "2099-01-31"

    shown = kaeru(vault, "call", "context", "-a", "initiative=web")
    assert shown.code == 0 and "release-notes" in shown.stdout and task["id"] in shown.stdout

    done = kaeru(vault, "call", "task_update", '{"initiative": "web", "task": "release-notes", "status": "done"}')
    assert done.code == 0, done.stderr
    assert done.stdout.startswith("task_update applied") and "status: open → done" in done.stdout
    after = kaeru(vault, "call", "context", '{"initiative": "web", "sections": ["tasks"]}', as_json=True)
    sections = valid_envelope(after, "context", "read", "ok")["data"]["sections"]
    assert all(item["id"] != task["id"] for s in sections for item in s["items"])


def test_compare_and_set_and_replay_hold_from_the_terminal(vault: VaultSpec) -> None:
    first = kaeru(vault, "call", "note", "-a", "initiative=ops", "-a", "text=we run PostgreSQL 15", as_json=True)
    node = valid_envelope(first, "note", "mutation", "applied")["data"]["primary"]
    revise = ["call", "revise", "-a", "initiative=ops", "-a", f"node={node['id']}"]

    edited = kaeru(
        vault, *revise, "-a", "patch.body=we run PostgreSQL 16", "-a", f"expected_revision={node['revision']}"
    )
    assert edited.code == 0 and "body: we run PostgreSQL 15 → we run PostgreSQL 16" in edited.stdout
    stale = kaeru(
        vault,
        *revise,
        "-a",
        "patch.body=we run PostgreSQL 17",
        "-a",
        f"expected_revision={node['revision']}",
        as_json=True,
    )
    assert stale.code == 2
    conflict = valid_envelope(stale, "revise", "mutation", "rejected")
    assert conflict["issues"][0]["code"] == "revision_conflict"
    body = kaeru(vault, "--json", "call", "read", "-a", "initiative=ops", "-a", f"node={node['id']}")
    assert body.json()["data"]["hits"][0]["body"] == "we run PostgreSQL 16", "the stale write changed nothing"

    args = json.dumps({"initiative": "ops", "text": "the deploy key rotates monthly", "request_id": "r-7"})
    once = kaeru(vault, "call", "note", "-", stdin=args.encode(), as_json=True)
    twice = kaeru(vault, "call", "note", "-", stdin=args.encode(), as_json=True)
    assert valid_envelope(twice, "note", "mutation", "applied")["replayed"] is True
    assert twice.json()["data"]["primary"]["id"] == once.json()["data"]["primary"]["id"]
    found = kaeru(vault, "--json", "call", "search", "-a", 'initiatives:=["ops"]', "-a", "text=deploy key")
    assert found.json()["data"]["total"] == 1, "written once"


def test_pairs_override_the_json_object_and_reach_inside_objects(vault: VaultSpec) -> None:
    """`-a` applies after the JSON object; `key:=` is JSON, `key=` always text (so `limit=2` is
    the text "2", which the schema refuses by name)."""
    write_notes(vault, "p", "alpha one", "alpha two", "alpha three")  # in process: the searches are the subject
    base = json.dumps({"initiatives": ["p"], "text": "alpha", "limit": 10})
    two = kaeru(vault, "call", "search", base, "-a", "limit:=2", as_json=True)
    assert len(valid_envelope(two, "search", "read", "ok")["data"]["hits"]) == 2
    text = kaeru(vault, "call", "search", base, "-a", "limit=2", as_json=True)
    refused = valid_envelope(text, "search", "read", "rejected")
    assert text.code == 2 and refused["issues"][0]["code"] == "invalid_argument"
    assert refused["issues"][0]["field"] == "limit"
    human = kaeru(vault, "call", "search", base, "-a", "limit=2")
    assert human.code == 2 and "invalid_argument [limit]" in human.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["call", "tsk"], "no tool named 'tsk'; did you mean task"),
        (["call", "search", "{not json"], "not JSON"),
        (["call", "search", "[1, 2]"], "must be a JSON object, not list"),
        (["call", "search", "-a", "limit"], "expected key=text or key:=json"),
        (["call", "search", "-a", "limit:=ten"], "is not JSON"),
        (["call", "search", "-a", "a=1", "-a", "a.b=2"], "'a' is already set to a value"),
        (["call", "note", "-a", "tags=a", "-a", "tags=b"], "'tags' is given twice ('tags=a', then 'tags=b')"),
        (["tools", "serch"], "no tool named 'serch'; did you mean search"),
    ],
)
def test_bad_usage_is_a_message_and_exit_2_with_nothing_on_stdout(
    vault: VaultSpec, argv: list[str], message: str
) -> None:
    run = kaeru(vault, *argv, as_json=True)
    assert run.code == 2 and run.stdout == ""
    assert message in run.stderr


def test_tools_name_shows_what_call_takes(vault: VaultSpec) -> None:
    shown = kaeru(vault, "tools", "task_update")
    assert shown.code == 0
    assert "task (NodeRef, required)" in shown.stdout and "NodeRef: a node's id or exact name" in shown.stdout
    assert "status (string, optional)" in shown.stdout
    assert "needs at least one of: status | due" in shown.stdout
    context = kaeru(vault, "tools", "context").stdout
    assert "budget_chars (integer 512..64000, optional, default 8000)" in context
    assert "sections (list of: rules, slots, core," in context
    listing = kaeru(vault, "tools", as_json=True).json()
    one = kaeru(vault, "tools", "revise", as_json=True)
    assert one.code == 0 and one.json() == next(t for t in listing if t["name"] == "revise")


def test_a_call_from_the_terminal_needs_no_mcp_sdk(vault: VaultSpec) -> None:
    """`kaeru call` runs a tool's validation and handler as the server registers them, without the
    MCP SDK or a server around them: a terminal call pays the CLI's start-up, not the SDK's
    (decision 200). Its answer is the tool's envelope, a refusal included."""
    noted = kaeru(vault, "call", "note", "-a", "initiative=sdk", "-a", "text=no SDK here", as_json=True)
    assert valid_envelope(noted, "note", "mutation", "applied")["data"]["primary"]["id"]
    listed = kaeru(vault, "call", "initiatives", as_json=True, PYTHONPROFILEIMPORTTIME="1")
    assert "sdk" in [i["name"] for i in valid_envelope(listed, "initiatives", "read", "ok")["data"]["initiatives"]]
    assert "kaeru.cli" in listed.stderr  # the import times are there to read
    sdk = [
        line for line in listed.stderr.splitlines() if line.split("|")[-1].strip().split(".")[0] in ("mcp", "mcp_types")
    ]
    assert not sdk, sdk
    refused = kaeru(vault, "call", "note", "-a", "initiative=sdk", as_json=True)
    assert refused.code == 2 and valid_envelope(refused, "note", "mutation", "rejected")["issues"][0]["field"] == "text"


def test_an_export_root_given_with_a_tilde_is_the_home_folder(tmp_path: Path) -> None:
    """A client passes `env` without a shell: `KAERU_EXPORT_ROOT=~/exports` wrote into a folder
    named `~` under the server's working directory (found on a fresh machine, from the README)."""
    home = tmp_path / "home"
    (home / "exports").mkdir(parents=True)
    env = {"KAERU_VAULT": str(tmp_path / "vault"), "KAERU_EXPORT_ROOT": "~/exports", "HOME": str(home)}
    write_notes(env, "t", "a note to export")  # in process: the export is the subject
    # Run from the test's own folder: where a `~` folder would be made by the old reading.
    chdir = ("env", f"--chdir={tmp_path}")
    done = kaeru(env, "call", "archive", "-a", "action=export", "-a", "path=all.amg", prefix=chdir)
    assert done.code == 0, done.stderr
    assert (home / "exports" / "all.amg").exists() and not (tmp_path / "~").exists()


def test_call_context_at_a_vault_that_is_not_there_creates_none(tmp_path: Path) -> None:
    """`kaeru context` at a mistyped `--vault` says so and creates nothing; `kaeru call context`
    created a vault there and answered "no initiative named …" (decision 196's very case)."""
    done = kaeru({"KAERU_VAULT": str(tmp_path / "typo")}, "call", "context", "-a", "initiative=webshop")
    assert done.code != 0 and "there is no vault at" in done.stderr
    assert not (tmp_path / "typo").exists()
