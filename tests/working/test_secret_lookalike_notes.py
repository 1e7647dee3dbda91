"""Through `note` under the default policy (reject): each look-alike of a secret is stored as written,
each near-twin holding one is refused naming `text` and stored nowhere. Both backends; the pairs are
those of tests/domain/test_secret_lookalikes.py."""

from __future__ import annotations

from tests.domain.test_secret_lookalikes import LOOKALIKES
from tests.working.conftest import Call

P = "ssh-setup"


def test_look_alikes_are_stored_verbatim_and_their_twins_are_refused(call: Call) -> None:
    stored: dict[str, str] = {}
    for guard, clean, twin, _secret in LOOKALIKES:
        kept = call("note", initiative=P, text=clean)
        assert kept["state"] == "applied", (guard, kept["issues"])
        stored[kept["data"]["primary"]["id"]] = clean
        refused = call("note", initiative=P, text=twin)
        assert refused["state"] == "rejected", guard
        assert [(i["code"], i["field"]) for i in refused["issues"]] == [("secret_detected", "text")], guard
    for node_id, clean in stored.items():
        [hit] = call("read", initiative=P, node={"id": node_id})["data"]["hits"]
        assert hit["body"] == clean
    listed = call("search", initiatives=[P], filters={"current": "all"}, limit=50)["data"]
    assert listed["total"] == len(LOOKALIKES)
