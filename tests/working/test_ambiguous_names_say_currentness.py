"""A name several versions of one fact hold is refused as ambiguous (SPEC 2.3), and the refusal says
which candidate is current, listing the current one first.

A probe of a year (session 56): `read "api-port"`, held by the four versions of one supersedes
chain, listed the four by recorded time alone, and hygiene's layer move (which records a node
again) had put a superseded one above the current one; `current_state node="api-port"` answered
`ambiguous` with the candidates and no word on which was current. Both backends.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.working.conftest import Clock

P = "atlas"


def test_ambiguous_candidates_say_which_is_current(store: Store, vault: VaultSpec) -> None:
    clock = Clock(datetime(2027, 1, 4, 10, 0, tzinfo=UTC))
    registry = build_server(Service(store, vault.settings(timezone="UTC"), clock=clock)).registry

    def call(tool: str, **args: Any) -> dict[str, Any]:
        return registry.run(tool, args)

    def made(**args: Any) -> str:
        answer = call("note", initiative=P, name="api-port", **args)
        assert answer["state"] == "applied", answer
        return str(answer["data"]["primary"]["id"])

    first = made(text="The API listens on port 8080")
    second = made(text="The API listens on port 8081", link_to=first, edge_type="supersedes")
    third = made(text="The API listens on port 9000", link_to=second, edge_type="supersedes")
    # Recorded again after the current one (as hygiene's layer move records a node).
    moved = call("layer", initiative=P, nodes=[{"id": first}], layer="cold")
    assert moved["state"] == "applied", moved

    for tool, args in (
        ("read", {"node": "api-port"}),
        ("revise", {"node": "api-port", "patch": {"description": "port"}}),
        ("note", {"text": "The port is set in deploy.yaml", "link_to": "api-port"}),
    ):
        answer = call(tool, initiative=P, **args)
        assert answer["state"] == "rejected", answer
        [issue] = answer["issues"]
        assert issue["code"] == "ambiguous_ref"
        message = issue["message"]
        assert f"{third} (episode, 'api-port', current, " in message
        assert f"{first} (episode, 'api-port', superseded by {second}, " in message
        assert message.index(third) < message.index(first) < message.index(second + " (")
        assert f"{third} is the only current one." in message

    state = call("current_state", initiative=P, node="api-port")
    assert state["data"]["status"] == "ambiguous"
    assert state["data"]["candidates"][0] == third
    assert set(state["data"]["candidates"]) == {first, second, third}
    [issue] = state["issues"]
    assert issue["code"] == "ambiguous_ref" and f"{third} is the only current one." in issue["message"]
