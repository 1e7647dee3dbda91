"""Currentness by rule: superseded by a live successor, refuted by a live falsifier, retracted when forgotten."""

from __future__ import annotations

from kaeru.domain.currentness import decide
from kaeru.domain.model import Currentness, EdgeType, NodeType


def test_no_verdicts_is_current() -> None:
    """A node nobody points at with a verdict is current."""
    assert decide(NodeType.EPISODE, None, False, []) == (Currentness.CURRENT, [])


def test_supersedes_makes_superseded_with_successors() -> None:
    """A live `supersedes` makes the target superseded and lists its successor."""
    currentness, successors = decide(NodeType.EPISODE, None, False, [("new", EdgeType.SUPERSEDES)])
    assert currentness == Currentness.SUPERSEDED
    assert successors == ["new"]


def test_several_successors_are_listed_once() -> None:
    """Every superseding node is listed, each once."""
    verdicts = [("b", EdgeType.SUPERSEDES), ("a", EdgeType.SUPERSEDES), ("b", EdgeType.SUPERSEDES)]
    _, successors = decide(NodeType.CONCEPT, None, False, verdicts)
    assert sorted(successors) == ["a", "b"]


def test_falsifies_makes_refuted() -> None:
    """A live `falsifies` refutes any node."""
    assert decide(NodeType.HYPOTHESIS, "open", False, [("ev", EdgeType.FALSIFIES)])[0] == Currentness.REFUTED
    assert decide(NodeType.EPISODE, None, False, [("ev", EdgeType.FALSIFIES)])[0] == Currentness.REFUTED


def test_refuted_hypothesis_status_is_refuted() -> None:
    """A hypothesis whose status is `refuted` is refuted even without an evidence edge."""
    assert decide(NodeType.HYPOTHESIS, "refuted", False, [])[0] == Currentness.REFUTED


def test_other_statuses_do_not_refute() -> None:
    """Supported/open hypotheses are current; a task board column named `refuted` is not a verdict."""
    assert decide(NodeType.HYPOTHESIS, "supported", False, [])[0] == Currentness.CURRENT
    assert decide(NodeType.HYPOTHESIS, "open", False, [])[0] == Currentness.CURRENT
    assert decide(NodeType.TASK, "refuted", False, [])[0] == Currentness.CURRENT


def test_doubts_are_not_verdicts() -> None:
    """`contradicts` puts a node under review but does not change its currentness."""
    assert decide(NodeType.EPISODE, None, False, [("doubter", EdgeType.CONTRADICTS)])[0] == Currentness.CURRENT


def test_retracted_wins() -> None:
    """A forgotten node is retracted, whatever points at it."""
    verdicts = [("new", EdgeType.SUPERSEDES), ("ev", EdgeType.FALSIFIES)]
    assert decide(NodeType.HYPOTHESIS, "refuted", True, verdicts)[0] == Currentness.RETRACTED
    assert decide(NodeType.EPISODE, None, True, [])[0] == Currentness.RETRACTED
