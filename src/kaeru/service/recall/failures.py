"""Recall's `failures` channel: what went wrong in the searched initiatives (decision 471).

A question about failures ("what went wrong?", "what broke?", "which hypotheses were refuted?",
`domain.failure_words`) is worded with words no failure's memory holds, and `debug_failure`'s
priors only reweighted what another channel had found: both answered with nothing, or with noise
that shared a word such as "time". The channel lists, newest first, the scope's claims that were
refuted (status `refuted`, or a live `falsifies` verdict) and the memories that refuted them, the
memories tagged with a failure's words (a `topic:` tag a note derives from its prominent words —
`topic:bug`, `topic:breaks` — or one its writer gave), then the outcomes and experiments
`debug_failure`'s priors name. Asked alone, they are the answer; beside words of a subject ("what
broke the PDF export?") or under `debug_failure`, they join the words' hits (a failure of what the
words name ranks above the others), and are the answer when no word is found.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass

from kaeru.domain.failure_words import FAILURE_WORDS, failure_phrase
from kaeru.domain.model import EdgeType, Node, NodeType
from kaeru.domain.open_work import asked_alone
from kaeru.domain.plans import Intent
from kaeru.domain.text import query_tokens, stem
from kaeru.storage.base import SearchQuery, Session

#: The channel's weight when the failures are the answer (asked alone, or `debug_failure` without a
#: query, where they come before the work in flight a query-less plan also lists), and beside words.
LISTED = 0.9
UNASKED = 1.5
BESIDE = 0.5
#: At most this many memories of each kind are read, and listed in all.
WINDOW = 50
#: The tagged memories are the newest `WINDOW` of this many matches (their ids only): a project's
#: many memories tagged `incident` were ranked by their tags' words, not their age.
TAGGED = 2000
_LISTS = "refuted claims, what refuted them, memories tagged as failures, outcomes, newest first"


#: A phrase that asks about claims ("which hypotheses were refuted?"): only they, and what refuted them.
_CLAIMS = re.compile(r"hypoth|claim|theor|assumption|annahm|aanname|ipotes|hipotes")


@dataclass(frozen=True)
class Asked:
    """What a query asks about failures: its `phrase` (`failure_words.failure_phrase`), whether it
    is asked `alone` (no word of a subject beside it), whether only `claims` are asked for, and
    the words the lexical channel does not rank by (`form`: a phrase asked alone is the question's
    form, not its subject: "last time" and "went" found every memory that says "time")."""

    phrase: str = ""
    alone: bool = False
    claims: bool = False
    form: frozenset[str] = frozenset()


def asked(query: str) -> Asked:
    phrase = failure_phrase(query) if query else ""
    if not phrase:
        return Asked()
    alone = asked_alone(query, phrase)
    form = frozenset(query_tokens(phrase)) if alone else frozenset()
    return Asked(phrase, alone, bool(_CLAIMS.search(phrase)), form)


def channel(question: Asked, query: str, intent: Intent | None) -> tuple[float, str] | None:
    """The `failures` channel's weight and reason in the plan (`compile_plan`'s `failures`) when the
    query asks what went wrong or the intent is `debug_failure` (never under `explore_history`,
    which lists the revisions of its words' hits); None otherwise."""
    phrase = question.phrase
    debug = intent == Intent.DEBUG_FAILURE
    if intent == Intent.EXPLORE_HISTORY or not (phrase or debug):
        return None
    if question.alone:
        weight, why = LISTED, f"the query asks what went wrong: {phrase!r}"
    elif not query:
        weight, why = UNASKED, "intent debug_failure"
    elif phrase:
        weight, why = BESIDE, f"the query asks what went wrong: {phrase!r}, and about its words"
    else:
        weight, why = BESIDE, "intent debug_failure, beside the query's words"
    listed = "refuted claims and what refuted them" if question.claims else _LISTS
    return weight, f"{listed} ({why})"


def failures(
    session: Session, scope_ids: list[int], nodes: Callable[[list[str]], dict[str, Node]], claims_only: bool = False
) -> list[str]:
    """The channel's memories, best first (see the module): those that say something failed, newest
    first, then the outcomes and experiments, newest first; only the refuted claims and what
    refuted them when `claims_only`. `nodes` loads nodes by id."""

    base = SearchQuery(initiative_ids=scope_ids, window=WINDOW, count_total=False)

    def ids(query: SearchQuery) -> list[str]:
        return [r.id for r in session.search(query)[0]]

    def newest_tagged(query: SearchQuery) -> list[str]:
        # The search ranks by its words' scores: the newest are taken from its first `TAGGED` rows.
        rows = session.search(dataclasses.replace(query, window=TAGGED))[0]
        return [r.id for r in sorted(rows, key=lambda r: -r.seq)[:WINDOW]]

    claims = ids(dataclasses.replace(base, types=[NodeType.HYPOTHESIS.value]))  # the newest, whatever their status
    refuted = ids(dataclasses.replace(base, types=[NodeType.HYPOTHESIS.value], statuses=["refuted"]))
    verdicts = session.verdicts_against(list(dict.fromkeys([*refuted, *claims])))
    falsified = [c for c in claims if any(kind == EdgeType.FALSIFIES for _, kind in verdicts.get(c, ()))]
    refuters = [s for c in [*refuted, *falsified] for s, kind in verdicts.get(c, ()) if kind == EdgeType.FALSIFIES]
    tagged: list[str] = []
    ended: list[str] = []
    if not claims_only:
        languages = ["en", *(lang for lang in session.stemmed_languages() if lang in FAILURE_WORDS)]
        words = list(dict.fromkeys(stem(w, lang) for lang in languages for w in FAILURE_WORDS[lang]))
        tagged = newest_tagged(dataclasses.replace(base, tokens=words, stemmed=True, fields=("tags",)))
        ended = ids(dataclasses.replace(base, types=[NodeType.OUTCOME.value, NodeType.EXPERIMENT.value]))
    found = nodes(list(dict.fromkeys([*refuted, *falsified, *refuters, *tagged, *ended])))
    inside = set(scope_ids)
    live = {i: n for i, n in found.items() if not n.retracted and inside.intersection(n.initiatives)}

    def newest(chosen: list[str]) -> list[str]:
        return sorted((i for i in dict.fromkeys(chosen) if i in live), key=lambda i: -live[i].seq)

    # Asked about claims, the claims come first and what refuted them after; else what failed, newest first.
    failed = (
        newest([*refuted, *falsified]) + newest(refuters)
        if claims_only
        else newest([*refuted, *falsified, *refuters, *tagged])
    )
    listed = set(failed)
    return [*failed, *(i for i in newest(ended) if i not in listed)][:WINDOW]
