"""What the semantic channel's half-done setup says where it is met: a write with KAERU_SEMANTIC=1 but
no extra warns `not_embedded`, as a broken extra's does (it was stored with no issue while `recall`
said `semantic_unavailable`); `serve` with the extra but not the setting names the setting when the
vault holds vectors its writes will now lack (decision 322's rule)."""

from __future__ import annotations

import pytest

from kaeru import semantic
from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.cli.support import kaeru, write_notes
from tests.recall.test_semantic import ConceptEmbedder
from tests.recall.test_semantic_failures import codes

UNSET = "the [semantic] extra is installed, but KAERU_SEMANTIC is not set"


def test_a_write_with_the_setting_but_no_extra_says_not_embedded(store: Store, vault: VaultSpec) -> None:
    service = Service(store, vault.settings(semantic=True))
    made, _ = service.note(parse("note", {"initiative": "s", "text": "the database is PostgreSQL"}))
    assert made.state == "applied" and made.primary is not None
    assert codes(made.issues) == ["not_embedded"]
    assert "extra is not installed" in made.issues[-1].message and "kaeru reindex" in made.issues[-1].message
    forgot, _ = service.forget(parse("forget", {"initiative": "s", "node": {"id": made.primary.id}, "reason": "test"}))
    assert codes(forgot.issues) == [], "a forgotten memory needs no vector"
    quiet, _ = Service(store, vault.settings()).note(parse("note", {"initiative": "s", "text": "no channel"}))
    assert codes(quiet.issues) == []


@pytest.mark.skipif(not semantic.available(), reason="the [semantic] extra is not installed here")
def test_serve_names_the_unset_channel_when_the_vault_holds_vectors(vault: VaultSpec, store: Store) -> None:
    write_notes(vault, "t", "a note written without the channel")
    plain = kaeru(vault, "serve", stdin=b"")
    assert plain.code == 0 and UNSET not in plain.stderr, "no vectors: the extra may just be installed"
    Service(store, vault.settings(), embedder=ConceptEmbedder()).note(
        parse("note", {"initiative": "t", "text": "we rented an automobile in Porto"})
    )
    served = kaeru(vault, "serve", stdin=b"")
    assert served.code == 0 and served.stderr.count(UNSET) == 1, served.stderr
    assert "kaeru reindex" in served.stderr
    on = kaeru(vault, "serve", stdin=b"", KAERU_SEMANTIC="1")
    assert UNSET not in on.stderr


def test_recall_counts_the_memories_without_a_vector(store: Store, vault: VaultSpec) -> None:
    """A vault written without the channel, then served with it: a question only a vector would
    answer found nothing and said nothing, while `kaeru doctor` counted them. The count is taken on
    the server's warm-up (`Service.warm`) and said by each recall of their initiatives until
    `kaeru reindex` adds their vectors."""
    plain = Service(store, vault.settings())
    plain.note(parse("note", {"initiative": "s", "text": "we rented an automobile in Porto"}))
    plain.note(parse("note", {"initiative": "s", "text": "a long vacation by the sea"}))
    served = Service(store, vault.settings(), embedder=ConceptEmbedder())
    served.note(parse("note", {"initiative": "other", "text": "the database is PostgreSQL"}))
    served.warm()
    asked = parse("recall", {"initiatives": ["s"], "query": "which car"})
    found = served.recall(asked)
    assert codes(found.issues) == ["not_embedded"]
    assert found.issues[-1].message.startswith("2 memories in these initiatives have no vector")
    assert "kaeru reindex" in found.issues[-1].message
    elsewhere = served.recall(parse("recall", {"initiatives": ["other"], "query": "which car"}))
    assert codes(elsewhere.issues) == [], "the other initiative's memories all have their vectors"
    assert served.reindex() == 2
    served.warm()
    mended = served.recall(asked)
    assert codes(mended.issues) == [] and mended.hits
