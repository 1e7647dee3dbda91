"""What a call is told of a name no live initiative holds: renamed, merged, deleted, misspelt or
unknown, on both backends, word for word.

These answers were worked out from every initiative's record, its whole name history and every
ended initiative; they are now read for the name asked about (`test_new_names_read_narrow.py`). The
answers must not change with it: the latest of several renames of one name, a merge into an
initiative renamed since, a name deleted twice, a token that may see only some initiatives, and an
import's warnings whether the initiatives it makes come in one transaction or in many.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.export import vault_io
from kaeru.service import Service, grants
from tests.export.paired_vaults import Run, runs

DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def dated(message: str) -> str:
    """`message` with its dates as DAY (the vault stamps them now)."""
    return DAY.sub("DAY", message)


def refusal(call: Any) -> str:
    with pytest.raises(KaeruError) as refused:
        call()
    return dated(str(refused.value))


def created(service: Service, name: str) -> list[str]:
    outcome, _ = service.note(parse("note", {"initiative": name, "text": f"about {name}"}))
    return [dated(i.message) for i in outcome.issues if i.code == "new_initiative"]


def act(service: Service, name: str, action: str, to: str | None = None) -> None:
    args = {"initiative": name, "action": action} | ({"to": to} if to else {})
    service.initiative(parse("initiative", args))


def seed(service: Service) -> None:
    """Names renamed once and twice, one name held by two initiatives in turn, a merge into an
    initiative renamed since, a name deleted twice."""
    for name in ("webshop", "payments", "billing", "spike", "camera", "camera-audit", "camera-audit-quasar"):
        created(service, name)
    for name in ("alpha", "fresh", "a1"):
        created(service, name)
    act(service, "webshop", "rename", "storefront")
    act(service, "a1", "rename", "a2")
    act(service, "a2", "rename", "a3")
    act(service, "payments", "merge", "billing")
    act(service, "billing", "rename", "money")
    act(service, "spike", "delete")
    assert created(service, "spike") == [
        "created a new initiative 'spike' (an initiative named 'spike' was deleted on DAY: this is another)."
    ]
    act(service, "spike", "delete")
    act(service, "alpha", "rename", "alpha-2025")
    act(service, "fresh", "rename", "alpha")
    act(service, "alpha", "rename", "alpha-new")


#: What `context` answers of each name: where it went, else the names it may mean.
CONTEXT = {
    "webshop": ": 'webshop' was renamed to 'storefront' on DAY; use 'storefront'",
    "a1": ": 'a1' was renamed to 'a3' on DAY; use 'a3'",
    "a2": ": 'a2' was renamed to 'a3' on DAY; use 'a3'",
    "payments": ": 'payments' was merged into 'money' on DAY; use 'money'",
    "billing": ": 'billing' was renamed to 'money' on DAY; use 'money'",
    "spike": " (an initiative named 'spike' was deleted on DAY)",
    "alpha": ": 'alpha' was renamed to 'alpha-new' on DAY; use 'alpha-new'",
    "storefornt": "; did you mean 'storefront'?",
    "camera-audit-quaasr": "; did you mean 'camera-audit-quasar', 'camera-audit', 'camera'?",
    "nothing-like-it": "",
}


def test_every_way_a_name_went_is_said_word_for_word(service: Service) -> None:
    seed(service)
    for name, hint in CONTEXT.items():
        said = refusal(lambda: service.context(parse("context", {"initiative": name})))  # noqa: B023
        assert said == f"no initiative named {name!r}{hint}"
    names = list(CONTEXT)[:5]
    warned = service.search(parse("search", {"initiatives": names, "text": "about"})).issues
    assert [dated(i.message) for i in warned if i.code == "unknown_initiative"] == [
        f"no initiative named {n!r}{CONTEXT[n]}" for n in names
    ]

    moved = {"webshop": "storefront", "a1": "a3", "payments": "money", "billing": "money", "alpha": "alpha-new"}
    for name, now in moved.items():
        said = refusal(lambda: service.note(parse("note", {"initiative": name, "text": "x"})))  # noqa: B023
        went = CONTEXT[name].split("; use")[0].removeprefix(": ")
        assert said == (
            f"no initiative named {name!r}: {went}; write to {now!r} (to start a new initiative named "
            f"{name!r}, make it under another name and rename it)"
        )
    assert created(service, "spike") == [
        "created a new initiative 'spike' (an initiative named 'spike' was deleted on DAY: this is another)."
    ]
    assert created(service, "storefornt") == ["created a new initiative 'storefornt'. Did you mean 'storefront'?"]
    assert created(service, "nothing-like-it") == ["created a new initiative 'nothing-like-it'."]


def test_a_limited_token_is_told_only_of_the_initiatives_it_may_see(service: Service) -> None:
    """`alpha` went to `alpha-2025`, then to `alpha-new` by another initiative; `payments` into
    `money`: a token that may see `alpha-2025` but neither `alpha-new` nor `money` is told of the
    first and nothing of the second, as before."""
    seed(service)
    limited = grants.Principal("lim", frozenset({"alpha", "alpha-2025", "payments", "webshop", "storefront"}))
    with grants.acting(limited):
        said = {
            name: refusal(lambda: service.context(parse("context", {"initiative": name})))  # noqa: B023
            for name in ("alpha", "payments", "webshop")
        }
    assert said == {
        "alpha": "no initiative named 'alpha': 'alpha' was renamed to 'alpha-2025' on DAY; use 'alpha-2025'",
        # Merged into one outside its grants: told so, never where (session 55).
        "payments": "no initiative named 'payments': this initiative was renamed or merged into one your token "
        "has no grant for; ask the vault's owner to grant it (`kaeru token grant`)",
        "webshop": "no initiative named 'webshop': 'webshop' was renamed to 'storefront' on DAY; use 'storefront'",
    }


__all__ = ["runs"]  # the fixture, shared with tests/export/test_import_initiative_spelling.py


@pytest.mark.parametrize("chunk", [3, vault_io.CHUNK])
def test_an_import_says_where_each_name_went_in_one_transaction_or_many(
    runs: tuple[Run, Run], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The names the import's transaction read once serve every initiative it makes: those made
    since are the archive's own. What became of a name is read for each: `eta`, made earlier in the
    same import, holds the merged `zeta-old`."""
    monkeypatch.setattr(vault_io, "CHUNK", chunk)
    run, other = runs
    for name in ("alpha", "gamma", "payments", "billing", "spike"):
        run("note", {"initiative": name, "text": f"about {name}"})
    run("initiative", {"initiative": "alpha", "action": "rename", "to": "alpha2"})
    run("initiative", {"initiative": "payments", "action": "merge", "to": "billing"})
    run("initiative", {"initiative": "spike", "action": "delete"})
    for name in ("aa-1", "aa-2", "aa-3", "aa-4", "alpha", "gamam", "payments", "spike", "zeta", "eta", "zeta-old", "x"):
        other("note", {"initiative": name, "text": f"about {name}"})
    other("initiative", {"initiative": "zeta-old", "action": "merge", "to": "eta"})
    other("initiative", {"initiative": "x", "action": "rename", "to": "zeta-old"})
    assert other("archive", {"action": "export", "path": "o.amg"})["state"] == "applied"

    done = run("archive", {"action": "import", "path": "o.amg"})
    assert done["state"] == "applied"
    old = "an archive written before that names it still"
    merge = "If they are one project, merge {0!r} into {1!r} (`initiative`, action merge)."
    assert [dated(i["message"]) for i in done["issues"] if i["code"] == "new_initiative"] == [
        f"the import created a new initiative 'alpha' ('alpha' was renamed to 'alpha2' on DAY: {old}). "
        f"Did you mean 'alpha2'? {merge.format('alpha', 'alpha2')}",
        f"the import created a new initiative 'gamam'. Did you mean 'gamma'? {merge.format('gamam', 'gamma')}",
        f"the import created a new initiative 'payments' ('payments' was merged into 'billing' on DAY: {old}). "
        f"{merge.format('payments', 'billing')}",
        f"the import created a new initiative 'spike' (an initiative named 'spike' was deleted on DAY: {old}).",
        f"the import created a new initiative 'zeta-old' ('zeta-old' was merged into 'eta' on DAY: {old}). "
        f"{merge.format('zeta-old', 'eta')}",
    ]
