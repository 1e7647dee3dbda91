"""What a person at a terminal reads of a hit, a node and a refusal, on both backends: a hit's kind,
status and successor; `read --neighbours`; the `KEY:=JSON` spelling a typed argument needs; `search
--tag`; `kaeru initiatives`; where a task is made; what a note, a replay and a cut body say."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru, valid_envelope, write_notes, write_tasks

pytestmark = pytest.mark.timeout(300)


def _line(stdout: str, node_id: str) -> str:
    [line] = [line for line in stdout.splitlines() if line.startswith(node_id)]
    return line


def test_hits_name_kind_status_and_successor(vault: VaultSpec) -> None:
    [decision, old] = write_notes(
        vault,
        "shop",
        {"text": "we chose heron payments for the shop", "kind": "decision"},
        {"text": "the heron shop runs on postgres 15", "name": "db-version"},
    )
    [task] = write_tasks(vault, "shop", {"text": "ship the heron checkout", "name": "checkout"})
    done = kaeru(vault, "call", "task_update", "-a", "initiative=shop", "-a", "task=checkout", "-a", "status=done")
    assert done.code == 0, done.stdout
    claim = kaeru(vault, "call", "claim", "-a", "initiative=shop", "-a", "text=heron checkout doubles sales",
                  "-a", "initial_status=supported", as_json=True)  # fmt: skip
    hypothesis = valid_envelope(claim, "claim", "mutation", "applied")["data"]["primary"]["id"]
    evolved = kaeru(vault, "call", "evolve", "-a", "initiative=shop", "-a", "mode=supersede", "-a", "source=db-version",
                    "-a", "new_body=the heron shop runs on postgres 16", as_json=True)  # fmt: skip
    successor = valid_envelope(evolved, "evolve", "mutation", "applied")["data"]["primary"]["id"]

    found = kaeru(vault, "search", "-i", "shop", "heron", "--limit", "20")
    assert found.code == 0, found.stderr
    assert _line(found.stdout, decision).split()[1] == "decision"  # the kind, not `episode`
    assert _line(found.stdout, task).endswith("[done]")
    assert _line(found.stdout, hypothesis).endswith("[supported]")
    recalled = kaeru(vault, "recall", "-i", "shop", "heron", "checkout", "--limit", "20")
    assert _line(recalled.stdout, task).endswith("[done]"), recalled.stdout

    shown = kaeru(vault, "read", old, "-i", "shop")
    assert shown.code == 0, shown.stderr
    assert shown.stdout.splitlines()[0].endswith(f"[superseded by {successor}]"), shown.stdout


def test_read_neighbours_shows_the_links_both_ways(vault: VaultSpec) -> None:
    [why, choice] = write_notes(
        vault, "shop", "card fees were too high", {"text": "we moved to heron", "kind": "decision"}
    )
    linked = kaeru(vault, "call", "link", "-a", "initiative=shop", "-a", f"from={why}", "-a", f"to={choice}",
                   "-a", "edge_type=causal", "-a", "weight:=0.9")  # fmt: skip
    assert linked.code == 0, linked.stdout
    outgoing = kaeru(vault, "read", why, "-i", "shop", "--neighbours")
    incoming = kaeru(vault, "read", choice, "-i", "shop", "--neighbours")
    assert f"      → causal 0.9 {choice}" in outgoing.stdout.splitlines(), outgoing.stdout
    assert f"      ← causal 0.9 {why}" in incoming.stdout.splitlines(), incoming.stdout
    assert "links:" not in kaeru(vault, "read", why, "-i", "shop").stdout
    envelope = valid_envelope(kaeru(vault, "read", why, "-i", "shop", "--neighbours", as_json=True), "read", "read")
    assert [e["to"] for e in envelope["data"]["edges"]] == [choice]


@pytest.mark.parametrize(
    ("args", "spelled"),
    [
        (("link", "initiative=shop", "from=a", "to=b", "edge_type=causal", "weight=0.9"), "-a weight:=0.9"),
        (("read", "initiative=shop", "node=a", "neighbours=true"), "-a neighbours:=true"),
        (("search", 'initiatives:=["shop"]', "text=heron", "limit=3"), "-a limit:=3"),
        (("search", "initiatives=webshop", "text=heron"), """-a initiatives:='["webshop"]'"""),
    ],
)
def test_a_typed_argument_given_as_text_names_the_json_spelling(
    tmp_path: Path, args: tuple[str, ...], spelled: str
) -> None:
    """Refused before a vault is opened: no backend involved."""
    tool, *pairs = args
    run = kaeru({"KAERU_VAULT": str(tmp_path)}, "call", tool, *(a for pair in pairs for a in ("-a", pair)))
    assert run.code == 2 and "is not of type" in run.stdout, run.stdout
    assert spelled in run.stderr, run.stderr
    assert not (tmp_path / "vault.sqlite3").exists()


def test_search_by_tag_and_a_kind_given_as_a_type(vault: VaultSpec) -> None:
    [decision, _] = write_notes(
        vault, "shop", {"text": "heron payments chosen", "kind": "decision"}, "heron payments observed"
    )
    tagged = kaeru(vault, "search", "-i", "shop", "heron", "--tag", "kind:decision")
    assert tagged.code == 0, tagged.stderr
    assert [line.split()[0] for line in tagged.stdout.splitlines() if not line.startswith(" ")] == [decision]
    as_type = kaeru(vault, "search", "-i", "shop", "heron", "--type", "decision")
    assert as_type.code == 2 and "--tag kind:decision" in as_type.stderr, as_type.stderr


def test_initiatives_are_listed_and_context_without_a_name_points_there(vault: VaultSpec) -> None:
    write_notes(vault, "webshop", "heron one", "heron two")
    write_notes(vault, "garden", "heron three")
    listed = kaeru(vault, "initiatives")
    assert listed.code == 0, listed.stderr
    assert sorted(line.split()[0] for line in listed.stdout.splitlines()) == ["garden", "webshop"]
    assert re.search(r"^webshop\s+2 memories  last ", listed.stdout, re.MULTILINE), listed.stdout
    document = valid_envelope(kaeru(vault, "initiatives", "--prefix", "web", as_json=True), "initiatives", "read", "ok")
    assert [i["name"] for i in document["data"]["initiatives"]] == ["webshop"]
    unnamed = kaeru(vault, "context")
    assert unnamed.code == 2 and "kaeru initiatives" in unnamed.stderr, unnamed.stderr


def test_note_says_where_a_task_is_made_its_name_and_a_replay(vault: VaultSpec) -> None:
    refused = kaeru(vault, "note", "-i", "shop", "--kind", "task", "ship it")
    assert refused.code == 2 and "kaeru call task -a initiative=" in refused.stderr, refused.stderr
    first = kaeru(vault, "note", "-i", "shop", "heron payments went live", "--request-id", "r-1")
    again = kaeru(vault, "note", "-i", "shop", "heron payments went live", "--request-id", "r-1")
    assert first.code == again.code == 0, again.stderr
    said = first.stdout.split()
    assert said[0] == "applied:" and "replayed" not in first.stdout
    named = kaeru(vault, "read", said[2], "-i", "shop")  # the name printed is one `read` takes
    assert named.code == 0 and named.stdout.startswith(said[1]), named.stderr
    assert again.stdout.startswith(f"applied: {said[1]} {said[2]} (replayed"), again.stdout


def test_a_cut_text_says_so_and_how_to_read_it_whole(vault: VaultSpec) -> None:
    long = "heron " + "the long body goes on. " * 200
    [node] = write_notes(vault, "shop", {"text": long, "kind": "rule"})
    found = kaeru(vault, "search", "-i", "shop", "heron")
    lines = found.stdout.splitlines()
    assert lines[-2].endswith("…") and f"kaeru read {node} -i shop prints it whole" in lines[-1], lines[-2:]
    context = kaeru(vault, "context", "shop")
    [item] = [line for line in context.stdout.splitlines() if line.startswith("  ")]
    assert item.endswith("…") and "kaeru read NAME -i shop" in context.stderr, (item, context.stderr)


def test_a_next_page_is_a_runnable_command(vault: VaultSpec) -> None:
    first_ids = write_notes(vault, "shop", "heron one", "heron two")
    page = kaeru(vault, "call", "search", "-a", 'initiatives:=["shop"]', "-a", "text=heron", "-a", "limit:=1")
    assert page.code == 0, page.stderr
    [command] = re.findall(r"^\(next page: (kaeru call .*)\)$", page.stderr, re.MULTILINE)
    argv = shlex.split(command)
    assert argv[:3] == ["kaeru", "call", "search"]
    second = kaeru(vault, *argv[1:], as_json=True)
    hits = [h["id"] for h in valid_envelope(second, "search", "read", "ok")["data"]["hits"]]
    assert len(hits) == 1 and hits[0] in first_ids and hits[0] not in page.stdout
    assert json.loads(argv[3])["cursor"]


def test_a_vault_named_by_its_file_or_under_a_file(vault: VaultSpec) -> None:
    if vault.backend != "sqlite":
        pytest.skip("a vault's folder and file are SQLite's")
    write_notes(vault, "shop", "heron by its file")
    by_file = kaeru({}, "--vault", str(vault.vault_dir / "vault.sqlite3"), "search", "-i", "shop", "heron")
    assert by_file.code == 0 and "heron by its file" in by_file.stdout, by_file.stderr
    a_file = vault.vault_dir / "not-a-folder"
    a_file.write_text("x")
    under = kaeru({}, "--vault", str(a_file), "context", "shop")
    assert under.code != 0 and f"({a_file} is a file, not a vault's folder)" in under.stderr, under.stderr
