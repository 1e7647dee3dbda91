"""Recall's `date` channel: a question that names a time ("what happened on 2 February", "what did
we decide yesterday", "in March 2024"). The words that say when are no words to search for; the
window's memories — made in it, or made before and changed in it — are the answer when no other
word of the question is found, and lift the hits the words found otherwise (decisions 50, 288, 471)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kaeru.domain.model import Node
from kaeru.domain.stopwords import STOP_WORDS
from kaeru.domain.text import content_tokens, query_tokens
from kaeru.service.recall.fusion import Fusion
from kaeru.storage.base import Session

#: A date window holding at most this many memories has all of them scored (`date`); a larger one
#: only lifts the text candidates that fall inside it, and when no word of the query is found, its
#: newest this many are the answer (`newest_dated`).
DATE_CANDIDATES = 200
#: How many memories of such a window past its newest `DATE_CANDIDATES` are counted (ids only) for
#: the omission that says they were not read; past them the count is a lower bound (`window`).
DATE_COUNTED = 200
#: How many audit records written since a window began are read to find the memories changed in it
#: (`Session.changed_in`); past them an older change may be missing, and the answer says so.
CHANGES_READ = 5000
#: A `seq` past every node's: the end of a window, as a timeline pivot (`newest_dated`).
_LAST_SEQ = 2**62
#: Words that ask what happened, said beside a time ("what happened yesterday", "anything new last
#: week?", "what changed on 2 February", "what did I work on today"): with the time they name no
#: subject, and searched for they found the notes that say "happened" instead of the day's own.
ASKS_WHAT_HAPPENED = frozenset(
    {
        "happen",
        "happened",
        "happening",
        "happens",
        "occur",
        "occurred",
        "change",
        "changed",
        "changes",
        "anything",
        "everything",
        "something",
        "new",
        "news",
        "going",
        "went",
        "done",
        "doing",
        "work",
        "worked",
        "working",
    }
)


def search_words(query: str, undated: str | None, skipped: frozenset[str]) -> list[str]:
    """The question's words to search for, at most 64, without `skipped` (a failure phrase asked
    alone). A question naming a time (`undated`: the question with the phrases that say when
    blanked out, `timefmt.without_dates`) searches for its other words only, neither stop words nor
    the words that ask what happened — when nothing else is left, for none: a question of stop
    words alone otherwise searches for them all (`content_tokens`), and "what did we do yesterday"
    asked "did", "we" and "do" of every memory. Beside a subject they are left out as well: they say
    what kind of question it is, not what it is about ("what new activity did Maria start in June")."""
    if undated is None:
        return [w for w in content_tokens(query)[:64] if w not in skipped] if query else []
    kept = [w for w in query_tokens(undated) if w not in STOP_WORDS and w not in ASKS_WHAT_HAPPENED]
    return [w for w in kept if w not in skipped][:64]


@dataclass
class Windows:
    """What the windows a question names hold: the memories made in those holding at most
    `DATE_CANDIDATES` (`made`), the larger windows (`crowded`), and the memories made before a
    window and changed in it (`changed`); the windows holding any (`held`); `complete` is False when
    the log of changes was not read back to a window's start."""

    held: set[tuple[str, str]] = field(default_factory=set)
    made: list[str] = field(default_factory=list)
    crowded: list[tuple[str, str]] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    complete: bool = True


def window_memories(session: Session, scope_ids: list[int], windows: tuple[tuple[str, str], ...]) -> Windows:
    """The memories of each window (`Windows`), made in it (`timeline`'s walk) or changed in it (the
    audit log, `changed_in`): a day's work on existing nodes — a task done, a note revised — is
    what happened that day as much as a new note is."""
    found = Windows()
    for since, until in windows:
        ids = session.timeline(scope_ids, since=since, until=until, pivot=None, before=0, after=DATE_CANDIDATES + 1)
        if len(ids) <= DATE_CANDIDATES:
            found.made.extend(ids)
        else:
            found.crowded.append((since, until))
        changed, complete = session.changed_in(scope_ids, since, until, CHANGES_READ)
        found.changed.extend(node_id for _, _, node_id in reversed(changed))  # the latest change first
        found.complete = found.complete and complete
        if ids or changed:
            found.held.add((since, until))
    return found


def newest_dated(session: Session, scope_ids: list[int], windows: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """The newest `DATE_CANDIDATES` memories of each of `windows`, and the ids of the older ones, up
    to `DATE_COUNTED` and one more when more are left (counted as left out, a lower bound past
    them). A day of more memories than that answered "what happened today" with nothing, said
    complete: the window was dropped whole, and the answer without words had none to give (decision 471)."""
    newest: list[str] = []
    older: list[str] = []
    for since, until in windows:
        ids = session.timeline(
            scope_ids,
            since=since,
            until=until,
            pivot=(until, _LAST_SEQ),
            before=DATE_CANDIDATES + DATE_COUNTED + 1,
            after=0,
        )
        newest.extend(ids[-DATE_CANDIDATES:])
        older.extend(ids[:-DATE_CANDIDATES])
    return newest, older


def lift(fusion: Fusion, pool: dict[str, Node], windows: tuple[tuple[str, str], ...], changed: set[str]) -> None:
    """Lift candidates recorded inside a window the query names ("on 2024-03-05", "in March 2024"),
    and those changed in it."""
    for node_id, node in pool.items():
        if node_id in changed or any(since <= node.created_at <= until for since, until in windows):
            fusion.put("date", node_id, 1.0)
