"""Retrieval plans for `recall`: which channels run, with what weights and why — decided from what
the agent is doing (intent, role, risk), deterministically, before any data is touched."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum


class Intent(StrEnum):
    RESUME_WORK = "resume_work"
    EXPLAIN_DECISION = "explain_decision"
    DEBUG_FAILURE = "debug_failure"
    APPLY_PREFERENCE = "apply_preference"
    REVIEW_CHANGE = "review_change"
    EXPLORE_HISTORY = "explore_history"


class Role(StrEnum):
    CODER = "coder"
    REVIEWER = "reviewer"
    PLANNER = "planner"
    RESEARCHER = "researcher"


class Risk(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


#: Every channel recall knows, in fusion order.
CHANNELS = (
    "lexical",
    "scope_idf",
    "proximity",
    "name",
    "temporal",
    "date",
    "graph",
    "feedback",
    "semantic",
    "rules",
    "slots",
    "tasks",
    "claims",
    "decisions",
    "failures",
    "recency",
    "layer",
    "priors",
    "currentness",
    "updates",
)
#: Channels that only widen recall around strong hits; `risk: high` never falls back to them.
WEAK = frozenset({"temporal", "graph", "feedback", "semantic"})
#: The semantic channel's weight (the lexical channel's is 1.0). Measured against 0.35, 0.75 and 1.0 with
#: other rescalings on LoCoMo and beam-dev (decision 17.F1): more weight helps beam-dev's MRR and
#: costs LoCoMo's, less costs beam-dev; 0.5 is the one no other setting beats on both.
SEMANTIC_WEIGHT = 0.5
#: How much a question's phrase about open work, decisions or rules leans its words' hits toward
#: tasks, decisions or rules when it names a subject too (decision 319).
LEANING = 1.3
#: The weight of the list a question asks for alone ("what did we decide?", "what rules apply?"):
#: the decisions or the rules are its answer (decision 319).
LISTED = 0.9
#: The temporal channel's weight (decision 90): more than the lexical channel's, now that a long
#: neighbour gets only a part of its share (`service/recall/channels.py`, `TEMPORAL_WORDS`).
TEMPORAL_WEIGHT = 1.1


@dataclass(frozen=True)
class ChannelPlan:
    name: str
    weight: float
    reason: str


@dataclass(frozen=True)
class Plan:
    intent: str | None
    role: str
    risk: str
    has_query: bool
    channels: tuple[ChannelPlan, ...]
    #: Multiplicative priors by node type / tag (intent and role), applied after fusion.
    type_priors: dict[str, float] = field(default_factory=dict)
    tag_priors: dict[str, float] = field(default_factory=dict)
    #: Factor for superseded/refuted hits (1.0 keeps them level; 0 removes them).
    noncurrent_factor: float = 0.35
    token_budget: int = 4000
    multi_hop: bool = False
    #: Calendar windows (`since`, `until`, inclusive, canonical UTC) of the dates the query names.
    time_windows: tuple[tuple[str, str], ...] = ()
    plan_hash: str = ""

    def weight(self, channel: str) -> float:
        for c in self.channels:
            if c.name == channel:
                return c.weight
        return 0.0

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["channels"] = [asdict(c) for c in self.channels]
        return data


_INTENT_PRIORS: dict[Intent, tuple[dict[str, float], dict[str, float], str]] = {
    Intent.RESUME_WORK: ({"task": 1.6, "checklist": 1.3, "roadmap": 1.3, "episode": 1.1}, {}, "what was in flight"),
    Intent.EXPLAIN_DECISION: (
        {"hypothesis": 1.3, "outcome": 1.4, "reference": 1.2, "experiment": 1.2, "summary": 1.2},
        {"kind:decision": 1.8, "kind:rule": 1.2},
        "decisions, verdicts and their provenance",
    ),
    Intent.DEBUG_FAILURE: (
        {"outcome": 1.4, "experiment": 1.4, "hypothesis": 1.3, "episode": 1.1},
        {"status:refuted": 1.6, "kind:observation": 1.1},
        "outcomes, refuted claims and what was observed",
    ),
    Intent.APPLY_PREFERENCE: (
        {"concept": 1.4, "entity": 1.1},
        {"kind:rule": 2.2, "kind:decision": 1.3},
        "rules and preferences first",
    ),
    Intent.REVIEW_CHANGE: (
        {"episode": 1.1, "hypothesis": 1.1},
        {"kind:decision": 1.5, "kind:rule": 1.5},
        "decisions and rules a change must respect",
    ),
    Intent.EXPLORE_HISTORY: ({}, {}, "every version, in time order"),
}

_ROLE_PRIORS: dict[Role, dict[str, float]] = {
    Role.CODER: {},
    Role.REVIEWER: {"concept": 1.1},
    Role.PLANNER: {"task": 1.2, "roadmap": 1.3, "idea": 1.2},
    Role.RESEARCHER: {"reference": 1.2, "hypothesis": 1.2, "experiment": 1.2},
}


def normalise_intent(raw: str | None) -> Intent | None:
    """`resume-work` and `resume_work` are the same intent (both spellings are accepted)."""
    if raw is None:
        return None
    return Intent(raw.strip().replace("-", "_"))


def compile_plan(
    *,
    intent: Intent | None,
    role: Role = Role.CODER,
    risk: Risk = Risk.MEDIUM,
    has_query: bool,
    include_superseded: bool = False,
    multi_hop: bool = False,
    token_budget: int = 4000,
    semantic_available: bool = False,
    time_windows: tuple[tuple[str, str], ...] = (),
    narrow_scope: bool = True,
    open_work: str = "",
    decisions: str = "",
    rules: str = "",
    about_words: bool = False,
    failures: tuple[float, str] | None = None,
    disabled: frozenset[str] = frozenset(),
) -> Plan:
    """The plan for one recall. Pure: the same inputs give the same plan and the same hash.
    `open_work`: the query's phrase asking about open work (`open_work.open_work_phrase`), which
    adds the slots and open tasks a query-less or resume_work recall has (decision 293), and the
    open claims; `decisions`: its phrase asking what was decided (`open_work.decisions_phrase`),
    which adds the decisions, as `explain_decision` does (decision 319); `rules`: its phrase asking
    which rules are in force (`open_work.rules_phrase`), which adds the rules the same way — a
    rule's kind is a tag kept out of the word index (decision 34), so no word finds it — except
    under `explore_history` (every version, not what holds). `about_words`: the query has words of
    its own beside the phrase ("why did we choose PostgreSQL?", "what rules apply to deployments?"):
    the memories of its words answer it, and the phrase only leans the order toward tasks,
    decisions or rules, instead of adding every one of them. `failures`: the weight and reason of the
    channel of what went wrong, when the query asks about failures or the intent is `debug_failure`
    (`service/recall/failures.channel`, decision 471)."""
    chosen: list[ChannelPlan] = []

    def use(name: str, weight: float, reason: str) -> None:
        if name in disabled or weight <= 0:
            return
        if risk == Risk.HIGH and name in WEAK:
            return
        chosen.append(ChannelPlan(name, round(weight, 4), reason))

    history = intent == Intent.EXPLORE_HISTORY
    resume = intent == Intent.RESUME_WORK
    if has_query:
        use(
            "lexical",
            1.0,
            "query words, stemmed, in name, description, body and tags/topics (BM25, name weighted highest)",
        )
        if narrow_scope:
            use("scope_idf", 1.0, "word weights from how rare each word is in the searched initiatives")
        use("proximity", 0.3, "several query words, and query words side by side")
        use("name", 0.8, "a node named exactly like the query")
        use("temporal", TEMPORAL_WEIGHT, "what was recorded just before and after strong hits")
        if time_windows:
            use(
                "date",
                0.5,
                "memory recorded on the dates the query names ("
                + ", ".join(f"{a[:10]}..{b[:10]}" for a, b in time_windows)
                + ")",
            )
        use("graph", 0.35, "nodes linked to strong hits, by edge weight")
        if multi_hop:
            use("feedback", 0.6, "multi_hop: a second pass with the words that characterise the first hits")
        if semantic_available:
            use("semantic", SEMANTIC_WEIGHT, "meaning, not words (vector similarity)")
    rules = "" if history else rules
    listing_rules = bool(rules) and not about_words
    if listing_rules:
        # The channel offers every rule of the scope; recall's filters keep those in force.
        use("rules", LISTED, f"the rules in force, newest first (the query asks which rules are in force: {rules!r})")
    elif intent in (Intent.APPLY_PREFERENCE, Intent.REVIEW_CHANGE):
        use("rules", 0.6, "the initiative's active rules, whatever their words")
    listing_work = bool(open_work) and not about_words
    if resume or not has_query or listing_work:
        asked = f" (the query asks about open work: {open_work!r})" if listing_work and not resume else ""
        use("slots", 1.0, "who holds each role (handoff, entrypoint, …)" + asked)
        use("tasks", 0.9, "open tasks, overdue first" + asked)
    if listing_work and not resume:
        use("claims", 0.6, f"open claims (the query asks about open work: {open_work!r})")
    listing_decisions = bool(decisions) and not about_words
    if listing_decisions or intent == Intent.EXPLAIN_DECISION:
        # Asked alone ("what did we decide?"), they are the answer; with the intent only, they
        # join the words' hits (a decision about what the words name ranks above the others).
        said = (
            f" (the query asks what was decided: {decisions!r})" if listing_decisions else " (intent explain_decision)"
        )
        use("decisions", LISTED if listing_decisions or not has_query else 0.5, "decisions, newest first" + said)
    if failures is not None:
        use("failures", *failures)
    if has_query and not (include_superseded or history):
        use("updates", 1.0, "of two memories on the same subject that differ, the newer first (not for history)")
    use("recency", 0.6 if (resume or not has_query) else 0.12, "newer memory first among equals")
    use("layer", 0.5 if resume else 0.15, "core and hot layers first")
    type_priors: dict[str, float] = {}
    tag_priors: dict[str, float] = {}
    if intent is not None:
        t, g, reason = _INTENT_PRIORS[intent]
        type_priors.update(t)
        tag_priors.update(g)
        use("priors", 1.0, f"intent {intent.value}: {reason}")
    # A phrase beside words of a subject leans the words' hits, lists nothing (decision 319); the
    # rules lean under `resume_work` too, but not under `risk: high` (nothing added to a strict
    # answer's words).
    leaning = []
    if about_words and open_work and not resume:
        type_priors["task"] = round(type_priors.get("task", 1.0) * LEANING, 4)
        leaning.append(f"open work: {open_work!r}")
    if about_words and decisions and not resume:
        tag_priors["kind:decision"] = round(tag_priors.get("kind:decision", 1.0) * LEANING, 4)
        leaning.append(f"decisions: {decisions!r}")
    if about_words and rules and risk != Risk.HIGH:
        tag_priors["kind:rule"] = round(tag_priors.get("kind:rule", 1.0) * LEANING, 4)
        leaning.append(f"the rules in force: {rules!r}")
    if leaning and not any(c.name == "priors" for c in chosen):
        use("priors", 1.0, "the query asks about " + "; ".join(leaning) + ", and about its words")
    for node_type, factor in _ROLE_PRIORS[role].items():
        type_priors[node_type] = round(type_priors.get(node_type, 1.0) * factor, 4)
    keep_history = include_superseded or history
    noncurrent = 0.0 if risk == Risk.HIGH else (1.0 if keep_history else 0.35)
    if "currentness" not in disabled:
        chosen.append(
            ChannelPlan(
                "currentness",
                noncurrent,
                "only current, non-refuted memory (risk high)"
                if risk == Risk.HIGH
                else ("superseded and refuted kept level" if keep_history else "superseded and refuted demoted"),
            )
        )
    else:
        noncurrent = 1.0
    plan = Plan(
        intent=intent.value if intent else None,
        role=role.value,
        risk=risk.value,
        has_query=has_query,
        channels=tuple(chosen),
        type_priors=dict(sorted(type_priors.items())) if "priors" not in disabled else {},
        tag_priors=dict(sorted(tag_priors.items())) if "priors" not in disabled else {},
        noncurrent_factor=noncurrent,
        token_budget=token_budget,
        multi_hop=multi_hop,
        time_windows=tuple(time_windows) if "date" in {c.name for c in chosen} else (),
    )
    digest = hashlib.sha256(json.dumps(plan.to_json(), sort_keys=True).encode()).hexdigest()[:16]
    return Plan(**{**plan.__dict__, "plan_hash": digest})
