"""Recall's graph channel follows a hit's strongest links first, and only `GRAPH_FANOUT` of them
(decision 88): a hub that many notes link to made every one of them a candidate (10,000 links: 384
ms a recall, most of it reading the candidates' text)."""

from __future__ import annotations

from kaeru.service import Service
from kaeru.service.recall.channels import GRAPH_FANOUT
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.working.conftest import make_call


def test_a_hub_lends_its_score_to_its_strongest_links_only(vault: VaultSpec) -> None:
    store = open_store(vault.settings())
    try:
        call = make_call(Service(store, vault.settings()))
        hub = call("note", initiative="g", text="the zanzibar protocol decision", name="hub")["data"]["primary"]["id"]
        strong = call("note", initiative="g", text="a rollout plan for staging", link_to=hub, weight=0.9)
        for i in range(GRAPH_FANOUT + 20):  # more weak links than the channel follows, all newer
            call("note", initiative="g", text=f"minor remark {i} about caching", link_to=hub, weight=0.2)
        answer = call("recall", initiatives=["g"], query="zanzibar", limit=50, explain=True)
        hits = [h["id"] for h in answer["data"]["hits"]]
        assert hits[:2] == [hub, strong["data"]["primary"]["id"]], "the strongest link first, though the oldest"
        followed = [i for i, scores in answer["data"]["explain"].items() if "graph" in scores]
        assert len(followed) == GRAPH_FANOUT and strong["data"]["primary"]["id"] in followed
    finally:
        store.close()
