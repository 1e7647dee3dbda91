"""The narrow reads behind "what became of this name" and "did you mean", alike on both engines.

A new initiative's note and a misspelt name's refusal read, instead of every initiative's record
and the whole name history: the live names, the live initiatives that once held the name, the
initiatives holding a merge list, the ended initiatives of the name. Properties are JSON text on
both engines and the merge list is found by a text match first: only a top-level key of that exact
spelling counts.
"""

from __future__ import annotations

from kaeru.storage.base import Store

T = ["2026-01-01T00:00:00.000000Z", "2026-01-02T00:00:00.000000Z", "2026-01-03T00:00:00.000000Z"]


def test_the_name_reads_answer_for_the_name_asked_about_only(store: Store) -> None:
    with store.write() as session:
        ids = {name: session.create_initiative(name, T[0]).id for name in ("web", "b", "Z", "é", "gone", "a")}
        session.rename_initiative(ids["web"], "shop", T[1])
        session.rename_initiative(ids["web"], "store", T[2])  # web → shop → store
        session.rename_initiative(ids["b"], "web", T[2])  # `b` holds `web` now
        session.rename_initiative(ids["a"], "a2", T[1])
        session.rename_initiative(ids["a"], "a", T[2])  # a → a2 → a: `a` is its own again
        session.delete_initiative(ids["gone"], T[1])
        session.set_initiative_properties(ids["a"], {"merged_from": [{"name": "old", "at": T[1]}], "x": 1})
        session.set_initiative_properties(ids["Z"], {"MERGED_FROM": [1], "mergedXfrom": [2], "n": {"merged_from": 3}})
        session.set_initiative_properties(ids["é"], {"note": 'the "merged_from" key'})

    with store.read() as session:
        assert sorted(session.initiative_name_list()) == ["Z", "a", "store", "web", "é"]
        assert session.former_name_spans("web") == [("store", T[1])]  # not `b`, which holds it now
        assert session.former_name_spans("shop") == [("store", T[2])]
        assert session.former_name_spans("b") == [("web", T[2])]
        assert session.former_name_spans("a") == []
        assert session.former_name_spans("a2") == [("a", T[2])]
        assert session.former_name_spans("gone") == []  # an ended initiative's: `ended_named` says
        assert session.initiatives_with_property("merged_from") == [
            ("a", {"merged_from": [{"name": "old", "at": T[1]}], "x": 1})
        ]
        [ended] = session.ended_named("gone")
        assert (ended.id, ended.name, ended.ended_at) == (ids["gone"], "gone", T[1])
        assert session.ended_named("web") == []
