"""A token limited to some initiatives is not told the ids of the nodes outside them that replaced
a node it reads (decision 15.K2): the messages saying a rule is not in force because it was
superseded, and the refusal of a name several nodes hold, which says each one's currentness, leave
those successors out as the node's own view does (the node still reads superseded). Both backends.
"""

from __future__ import annotations

import json

from kaeru.service import grants
from tests.working.conftest import Call
from tests.working.limited import LIMITED, PUB, SECRET, applied_id


def _replacing(call: Call, old: str, initiative: str, name: str, text: str) -> str:
    """A rule of `initiative` that supersedes the rule `old`."""
    rule = {"kind": "rule", "name": name, "text": text, "link_to": {"id": old}, "edge_type": "supersedes"}
    return applied_id(call("note", initiative=initiative, **rule))


def test_a_rule_superseded_from_outside_the_grants_does_not_name_its_successor(call: Call) -> None:
    rule = applied_id(call("note", initiative=PUB, kind="rule", name="indent", text="Indent with tabs"))
    secret = _replacing(call, rule, SECRET, "secret-indent", "Indent with four spaces")
    # Another rule superseded both from inside the grants and from outside them.
    tabs = applied_id(call("note", initiative=PUB, kind="rule", name="tab-width", text="Tabs are 8 wide"))
    public = _replacing(call, tabs, PUB, "tab-width-4", "Tabs are 4 wide")
    hidden = _replacing(call, tabs, SECRET, "tab-width-2", "Tabs are 2 wide")
    with grants.acting(LIMITED):
        read = call("read", initiative=PUB, node={"id": rule})
        search = call("search", initiatives=[PUB], text="indent tabs")
        timeline = call("timeline", initiatives=[PUB])
        both = call("read", initiative=PUB, node={"id": tabs})
    for answer in (read, search, timeline, both):
        assert answer["state"] == "ok", answer
        assert secret not in json.dumps(answer) and hidden not in json.dumps(answer)
    # Still said to be superseded, and not to be followed.
    assert read["data"]["hits"][0]["currentness"] == "superseded"
    [issue] = [i for i in read["issues"] if i["code"] == "not_in_force"]
    assert issue["message"].startswith(f"rule {rule} is not in force (superseded): 'indent' was superseded. ")
    assert any(i["code"] == "not_in_force" and rule in i["message"] for i in search["issues"])
    assert any(i["code"] == "not_in_force" and rule in i["message"] for i in timeline["issues"])
    [issue] = [i for i in both["issues"] if i["code"] == "not_in_force"]
    assert f"was superseded by {public}." in issue["message"] and f"`read` {public}, which" in issue["message"]

    # The admin is told every successor.
    read = call("read", initiative=PUB, node={"id": rule})
    [issue] = [i for i in read["issues"] if i["code"] == "not_in_force"]
    assert f"was superseded by {secret}" in issue["message"]


def test_an_ambiguous_name_does_not_name_a_successor_outside_the_grants(call: Call) -> None:
    first = applied_id(call("note", initiative=PUB, name="port", text="The API listens on port 80"))
    second = applied_id(call("note", initiative=PUB, name="port", text="The admin UI listens on port 81"))
    secret = applied_id(
        call(
            "note", initiative=SECRET, text="The API listens on port 82", link_to={"id": first}, edge_type="supersedes"
        )
    )
    with grants.acting(LIMITED):
        read = call("read", initiative=PUB, node="port")
        state = call("current_state", initiative=PUB, node="port")
    assert read["state"] == "rejected", read
    assert state["data"]["status"] == "ambiguous", state
    assert secret not in json.dumps(read) + json.dumps(state)
    for answer in (read, state):
        [issue] = answer["issues"]
        assert issue["code"] == "ambiguous_ref"
        assert f"{first} (episode, 'port', superseded, " in issue["message"]
        assert f"{second} is the only current one." in issue["message"]

    # The admin is told the successor.
    read = call("read", initiative=PUB, node="port")
    assert f"{first} (episode, 'port', superseded by {secret}, " in read["issues"][0]["message"]
