"""A mistake repeated across `set_board`'s columns is said once, naming every column that made it:
refused at the first wrong column, an agent needed as many calls as there were wrong columns, and a
label redacted in each column gave one warning per column, all saying the same. Both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec

#: Correctly shaped fake GitHub tokens (rule github_pat), one per column label.
SECRETS = ["ghp_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345678" + str(i) for i in range(3)]
#: A secret that is also a valid column key (rule openai_key).
KEY_SECRET = "sk-" + "q7w8e9r0t1y2u3i4o5p6"

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


def _runner(store: Store, vault: VaultSpec, policy: str) -> Run:
    run: Run = build_server(Service(store, vault.settings(secret_policy=policy))).registry.run
    assert run("task", {"initiative": "deploy", "text": "oil the pump"})["state"] == "applied"
    return run


def _board(run: Run, columns: list[dict[str, str]]) -> dict[str, Any]:
    return run("initiative", {"initiative": "deploy", "action": "set_board", "columns": columns})


def _one_refusal(answer: dict[str, Any], code: str) -> dict[str, Any]:
    assert answer["state"] == "rejected", answer
    [issue] = answer["issues"]
    assert issue["code"] == code, issue
    return dict(issue)


def test_secrets_in_several_labels_are_refused_in_one_issue_naming_each(store: Store, vault: VaultSpec) -> None:
    run = _runner(store, vault, "reject")
    columns = [
        {"key": "open", "label": f"open {SECRETS[0]}"},
        {"key": "doing", "label": "Doing"},
        {"key": "done", "label": f"done {SECRETS[0]}"},
    ]
    issue = _one_refusal(_board(run, columns), "secret_detected")
    assert issue["field"] == "columns[0].label"
    assert issue["message"].startswith("columns[0].label, columns[2].label: looks like it contains a secret"), issue


def test_different_secrets_in_several_labels_are_one_mistake(store: Store, vault: VaultSpec) -> None:
    """Two different secrets (their rules and previews differ) were refused a column per call."""
    run = _runner(store, vault, "reject")
    columns = [
        {"key": "open", "label": f"open {SECRETS[1]}"},
        {"key": "doing", "label": "Doing"},
        {"key": "done", "label": f"done {KEY_SECRET}"},
    ]
    issue = _one_refusal(_board(run, columns), "secret_detected")
    assert issue["message"].startswith("columns[0].label, columns[2].label: "), issue


def test_secrets_redacted_in_several_labels_are_said_once(store: Store, vault: VaultSpec) -> None:
    run = _runner(store, vault, "redact")
    columns = [{"key": k, "label": f"{k} {SECRETS[i]}"} for i, k in enumerate(("open", "doing", "done"))]
    applied = _board(run, columns)
    assert applied["state"] == "applied", applied
    [issue] = [i for i in applied["issues"] if i["code"] == "secret_detected"]
    assert issue["message"].endswith("redacted in columns[0].label, columns[1].label, columns[2].label"), issue


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_secret_keys_in_several_columns_are_refused_in_one_issue(store: Store, vault: VaultSpec, policy: str) -> None:
    run = _runner(store, vault, policy)
    columns = [{"key": KEY_SECRET}, {"key": "doing"}, {"key": KEY_SECRET + "x"}]
    issue = _one_refusal(_board(run, columns), "secret_detected")
    assert issue["message"].startswith("columns[0].key, columns[2].key: "), issue


def test_repeated_keys_name_where_each_is_repeated(store: Store, vault: VaultSpec) -> None:
    """ "column keys must be unique" named none of them."""
    run = _runner(store, vault, "reject")
    columns = [{"key": "open"}, {"key": "done"}, {"key": "open", "label": "Again"}, {"key": "done", "label": "Fin"}]
    issue = _one_refusal(_board(run, columns), "invalid_argument")
    assert issue["field"] == "columns"
    assert issue["message"] == (
        "column keys must be unique: 'open' at columns[0].key, columns[2].key; 'done' at columns[1].key, columns[3].key"
    )


def test_one_wrong_column_is_said_as_before(store: Store, vault: VaultSpec) -> None:
    run = _runner(store, vault, "reject")
    columns = [{"key": "open"}, {"key": "done", "label": f"done {SECRETS[0]}"}]
    issue = _one_refusal(_board(run, columns), "secret_detected")
    assert issue["field"] == "columns[1].label" and issue["message"].startswith("columns[1].label looks like it")
