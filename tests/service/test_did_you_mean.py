"""Did-you-mean counts a transposition as one edit everywhere a name can be mistyped (issue 13, defect 8)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from tests.service.support import primary


def rejects(call: Callable[[], object]) -> KaeruError:
    with pytest.raises(KaeruError) as err:
        call()
    return err.value


def seed(service: Service) -> None:
    service.note(parse("note", {"initiative": "alpha", "text": "the deploy runs nightly", "name": "deploy-schedule"}))
    service.note(parse("note", {"initiative": "website", "text": "unrelated"}))


@pytest.mark.parametrize("typo", ["alpah", "lapha", "ALPAH"])
def test_new_initiative_warning_suggests_the_transposed_name(service: Service, typo: str) -> None:
    """A write to `alpah` still creates it (writes never block), but the warning names `alpha`."""
    seed(service)
    outcome, _ = service.note(parse("note", {"initiative": typo, "text": "oops"}))
    warnings = [i for i in outcome.issues if i.code == "new_initiative"]
    assert len(warnings) == 1
    assert "Did you mean 'alpha'?" in warnings[0].message
    assert "website" not in warnings[0].message


def test_new_initiative_unrelated_short_name_suggests_nothing(service: Service) -> None:
    """A short new name that is neither a transposition nor a typo of an existing one gets no suggestion."""
    seed(service)
    outcome, _ = service.note(parse("note", {"initiative": "omega", "text": "new"}))
    [warning] = [i for i in outcome.issues if i.code == "new_initiative"]
    assert "Did you mean" not in warning.message


def test_unknown_initiative_on_a_non_creating_write_suggests_the_transposed_name(service: Service) -> None:
    """A write that never creates an initiative refuses `alpah` and names `alpha`."""
    seed(service)
    task = primary(service.task(parse("task", {"initiative": "alpha", "text": "ship it"}))[0])
    err = rejects(
        lambda: service.task_update(
            parse("task_update", {"initiative": "alpah", "task": {"id": task}, "status": "done"})
        )
    )
    assert err.code == "unknown_initiative"
    assert "'alpha'" in str(err)


def test_search_scope_typo_suggests_the_transposed_name(service: Service) -> None:
    """`search initiatives=["alpah"]` warns `unknown_initiative` with the did-you-mean."""
    seed(service)
    result = service.search(parse("search", {"initiatives": ["alpah"], "text": "deploy"}))
    [issue] = [i for i in result.issues if i.code == "unknown_initiative"]
    assert "did you mean 'alpha'?" in issue.message


def test_context_typo_suggests_the_transposed_name(service: Service) -> None:
    """`context` on `alpah` refuses and names `alpha`."""
    seed(service)
    err = rejects(lambda: service.context(parse("context", {"initiative": "alpah"})))
    assert err.code == "unknown_initiative"
    assert "'alpha'" in str(err)


@pytest.mark.parametrize(
    "typo", ["deploy-schedlue", "dpeloy-schedule", "edploy-schedule", "delpoy-schedule", "Deploy-Schedlue"]
)
def test_node_name_miss_suggests_a_transposition(service: Service, typo: str) -> None:
    """A NodeRef name with two letters swapped (also among its first three, or the 3rd and 4th, which
    moves the store's three-letter pre-filter) gets the did-you-mean."""
    seed(service)
    err = rejects(lambda: service.read(parse("read", {"initiative": "alpha", "node": typo})))
    assert err.code == "not_found"
    assert "did you mean 'deploy-schedule'?" in str(err)


def test_node_name_miss_unrelated_suggests_nothing(service: Service) -> None:
    """A name that is not close to any node name gets a plain not_found."""
    seed(service)
    err = rejects(lambda: service.read(parse("read", {"initiative": "alpha", "node": "budget-review"})))
    assert err.code == "not_found"
    assert "did you mean" not in str(err)


def test_noderef_initiative_typo_suggests_the_transposed_name(service: Service) -> None:
    """`{initiative: "alpah", name}` is not_found and names `alpha`."""
    seed(service)
    err = rejects(
        lambda: service.read(parse("read", {"initiative": "website", "node": {"initiative": "alpah", "name": "x"}}))
    )
    assert err.code == "not_found"
    assert "did you mean 'alpha'?" in str(err)
