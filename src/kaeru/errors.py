"""The project's one error hierarchy.

Every failure a caller can act on is a `KaeruError` with a stable `code` (the issue codes of
SPEC §2). Storage maps driver exceptions into these, so both backends fail identically, and the
single MCP adapter turns them into `rejected` envelopes.
"""

from __future__ import annotations

from typing import Any


class KaeruError(Exception):
    """Base error: a stable issue code, a human message, the offending field, retryability."""

    code = "internal"
    retryable = False

    def __init__(self, message: str, *, field: str | None = None, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        self.details = details or {}


class InvalidArgument(KaeruError):
    code = "invalid_argument"


class NotFound(KaeruError):
    code = "not_found"


class AmbiguousRef(KaeruError):
    code = "ambiguous_ref"


class RevisionConflict(KaeruError):
    code = "revision_conflict"
    retryable = True


class SlotConflict(KaeruError):
    code = "slot_conflict"
    retryable = True


class RequestIdReused(KaeruError):
    code = "request_id_reused"


class ImmutableSource(KaeruError):
    code = "immutable_source"


class SecretDetected(KaeruError):
    code = "secret_detected"


class UnknownInitiative(KaeruError):
    code = "unknown_initiative"


class CursorInvalid(KaeruError):
    code = "cursor_invalid"


class PathNotAllowed(KaeruError):
    code = "path_not_allowed"


class Forbidden(KaeruError):
    """The caller's token does not grant this: another initiative, or a write with a read-only token."""

    code = "forbidden"


class Unavailable(KaeruError):
    """The store could not answer now (lock timeout, connection lost); the same call may succeed later."""

    code = "unavailable"
    retryable = True


class WritesCrossed(Unavailable):
    """PostgreSQL rolled a write back because another write crossed it: a deadlock (SQLSTATE 40P01)
    or a serialisation failure (40001), told before its COMMIT could stand, so nothing of it was
    written and it may run again whole, which `run_mutation` does (decision 461)."""


class CommitUnknown(Unavailable):
    """The database's answer to COMMIT was lost and could not be learnt after: the write may have
    been applied. Unlike every other `unavailable`, a retry without `request_id` may write twice."""


class Internal(KaeruError):
    code = "internal"


class SemanticUnavailable(KaeruError):
    """The semantic channel's model could not be loaded (a broken torch, a damaged package): recall
    goes on with its lexical channels, a write is stored without its vector."""

    code = "semantic_unavailable"


ISSUE_CODES: dict[str, str] = {
    "invalid_argument": "An argument is malformed or out of range; `field` names it. Fix the call.",
    "not_found": "A referenced node, slot or initiative does not exist; the message suggests close names.",
    "ambiguous_ref": "A name matches several live nodes; the message lists candidates. Use an id.",
    "revision_conflict": "`expected_revision` is stale; re-read the node and retry (retryable).",
    "slot_conflict": "`expected_slot_revision` is stale; re-read the slot and retry (retryable).",
    "request_id_reused": (
        "The `request_id` was already used with different arguments, or by another caller (over HTTP a "
        "request id is one token's)."
    ),
    "immutable_source": "A reference's source bytes cannot be revised; use `replace`.",
    "secret_detected": "The text looks like a secret (API key, token, private key) and policy rejects it.",
    "new_initiative": (
        "Warning: the write created a new initiative (an import: one the vault knew under another name, or "
        "close to one it holds); check the did-you-mean suggestions."
    ),
    "duplicate_call": (
        "Warning: the same call (every argument, by the same actor, without `request_id`) wrote a node "
        "minutes ago, and this one wrote another. If it was a retry, `forget` one; give `request_id` to "
        "make retries replay."
    ),
    "tasks_moved": (
        "Warning: `set_board` removed columns that held tasks, or `initiative merge` brought tasks from a board "
        "without their column; they were moved (a finished one to the closing column, any other to the first) "
        "and are listed as affected. Move them on with `task_update`."
    ),
    "closing_columns_changed": (
        "Warning: `set_board` changed which kept columns close a task (`done`, else the last column, and every "
        "column after it): their tasks were closed (`done_at` recorded) or opened again, and are listed as affected."
    ),
    "import_conflict": (
        "Warning: records of an imported archive differ from this vault's records of the same node, edge "
        "or slot revision (both vaults changed them after they parted); the vault's were kept, and the "
        "archive's later revisions of them, which build on its own, were left out too; the message names "
        "them. Compare with `trail`, and `revise` what should change."
    ),
    "budget_truncated": (
        "Warning: text was cut to fit `budget_chars`, or the bound of a `trail` history page or of a "
        "`revise` answer; see `body_range` (a change's `before_range`/`after_range`), coverage, and the "
        "`read` calls the message gives for the rest."
    ),
    "pages_removed": (
        "Information: a markdown export into a folder an earlier export wrote removed that export's pages of "
        "nodes this one does not hold at that path (forgotten since, outside the exported initiatives, or renamed "
        "or moved: a node's page is at its new path); the message names them. Other files are left alone."
    ),
    "index_truncated": "Warning: a text was stored whole, but its words past about 1 MB of distinct words are not searchable (on both backends); split it into several notes.",
    "not_embedded": (
        "Warning: on a write, it was stored but the semantic channel could not embed it (the message says "
        "why: the extra missing, the model not loaded); on a recall, the searched initiatives hold memories "
        "without a vector of their current text (the message counts them). Recall finds those by their words, "
        "not yet by their meaning; `kaeru reindex` adds their vectors."
    ),
    "semantic_unavailable": (
        "Warning: KAERU_SEMANTIC=1, but the semantic channel could not run (its extra is missing, its "
        "model did not load, or its vector scan failed, e.g. past the PostgreSQL statement timeout: the "
        "message says which); this recall used the lexical channels only."
    ),
    "already_ended": (
        "Warning: a rule's `applicability.through` day, or a new task's `due` day, has already ended on "
        "the user's calendar (KAERU_TIMEZONE): the rule was stored but `context` and `recall` will not give "
        "it as in force; the task is overdue from now. If the date was a slip, `revise` the rule's "
        "applicability or `task_update` the due."
    ),
    "in_the_future": (
        "Warning: `occurred_at` is later than now (by more than a few minutes of clock difference): the note "
        "was stored as happening then, and `timeline` and its `created_at` place it there. If the moment was a "
        "slip (a wrong year or day, another zone's wall time), `forget` the note and write it again."
    ),
    "supersession_reversed": (
        "Warning: a `supersedes` link made its target supersede its source the other way round, so each "
        "superseded the other; the older links were retracted (history keeps them) so that the newest "
        "decides which is current. The message names them."
    ),
    "superseded_current_again": (
        "Warning: `forget`, or an initiative's `delete`, retracted the only node that superseded some other "
        "node, which reads current again (`search`, `recall` and `context` answer it as current). The "
        "message names them; link a successor to them or forget them if they are out of date."
    ),
    "superseded_current_too": (
        "Warning: `evolve supersede`, or `note`/`task` with `link_to` and `edge_type` supersedes, named a node "
        "that was superseded before: the new node supersedes its current version(s) in this initiative too, "
        "so that one version stays current (a second successor would have left two). The message names them; "
        "one in another initiative stays current and is named."
    ),
    "supersession_forked": (
        "Warning: `link` made a node supersede a target that already had current successor(s); they stay "
        "current beside it (two current versions). The message names them; link the new node to each with "
        "supersedes if it replaces them too."
    ),
    "revised_superseded": (
        "Warning: `revise` changed a node that something supersedes: the revision is stored, but `context`, "
        "`search` and `recall` answer its current successor(s), named in the message; revise those to change "
        "the current value."
    ),
    "path_search_cut": (
        "Warning: a strongest-path search (`trail kind=path`, `link action=chain`) stopped at its bound of "
        "expanded nodes after it had found a path to the goal: the path answered (or saved) is the "
        "strongest through the nodes it walked, and a stronger one through nodes beyond may exist. The "
        "message says how to look further (through a node in between)."
    ),
    "unknown_initiative": "A read named an initiative that does not exist.",
    "cursor_invalid": (
        "The cursor is malformed, tampered with or belongs to other arguments (as a warning: the list it "
        "named was not held any more and was run again)."
    ),
    "path_not_allowed": "An export/import path lies outside the configured root.",
    "property_skipped": (
        "Warning (`kaeru import-from kaeru-md`): a page's `properties:` line holds a value a write would refuse "
        "(a day that is no date, a rule's task that is no task page of the folder, a property on a node it is not "
        "for or one the import does not carry, a value nested too deep, a line that is not JSON), or names a page "
        "no node was imported of. That value was left out (the rest of the page imported); the message names the "
        "page, the property and why. A rule is never imported wider than its page says: one scoped to a task that "
        "is no page of the folder keeps that task id (in force for no task, as a rule of a forgotten task); one "
        "whose applicability or state cannot be read is imported released. `revise` it to put it in force."
    ),
    "reached_through_supersession": (
        "Information: a search hit did not match itself; it is the current successor (in the searched "
        "initiatives) of matches left out as superseded — the message names the hit and those matches."
    ),
    "successor_out_of_scope": (
        "Information: a hit is superseded by a node outside the searched initiatives, which is not listed; "
        "the message gives the exact `read` call that shows it."
    ),
    "not_in_force": (
        "Warning: a `search` or `read` hit is a rule not in force today (released, past its "
        "`applicability.through` day, or scoped to a task that is closed or forgotten: the test `context` "
        "uses). The message names the rule and why; do not follow it (`context` lists the rules in force)."
    ),
    "forbidden": (
        "The HTTP token does not grant this call: an initiative outside its grants (whether or not it "
        "exists), a write with a read-only token, or a rename or merge onto a name another token is granted "
        "(only the vault's owner opens memories to another token). Ask the vault's owner for a grant."
    ),
    "left_board": (
        "Warning: `task_update` or `set_board` moved a task that is also on another initiative's board to a "
        "column that board does not have: the task left that board's open work (its `context`, its open-task "
        "searches, the viewer's board) without being closed there. The message names the board and its columns "
        "(after a `set_board`, how many tasks left it); add "
        "the column there (`initiative set_board`), or `detach` the task from it. A board outside a "
        "limited token's grants is not said."
    ),
    "blocks_cycle": (
        "Warning: a `blocks` link closed a cycle (a task waits, through others, on itself), so none of its "
        "tasks can be done first. The link was stored; the message names the cycle. Remove one link of it "
        "(`link` with `action: remove`) if a task does not really wait on another. For a token limited to "
        "some initiatives, a cycle through a node outside its grants is not said."
    ),
    "still_blocked": (
        "Warning: `task_update` closed a task while a task that blocks it (a `blocks` link from it) is still "
        "open. The task was closed; the message names the blocker. Close it too if it is finished, or "
        "remove the link if it no longer holds."
    ),
    "task_closed": (
        "Warning: `context` was asked for a task that is closed (in a closing column of its board): the "
        "rules scoped to it are given as asked, but no work on it is open. `task_update` it to an open "
        "column if it is not finished."
    ),
    "token_grants": (
        "Warning: an `initiative` rename or merge touched tokens whose grants name an initiative by name. A "
        "rename grants the new name to the tokens of the old one, which keep the old one too: to them the new "
        "name holds exactly what the old one did. Tokens already granted the new name (before any initiative "
        "went by it, or kept after one was renamed away) come to reach this initiative's memories: the "
        "admin's rename warns, a limited token's is refused (`forbidden`: only the vault's owner opens "
        "memories to another token). A merge moves no grant, since its target holds memories those tokens "
        "were never given; tokens granted the target and not the merged initiative come to reach the merged "
        "one's memories: the admin's merge warns, a limited token's is refused (`forbidden`), as for a "
        "rename. Only the admin's answer counts and names the tokens; `kaeru token grant NAME "
        "--initiative TARGET` gives one access, `--remove NAME` takes one away."
    ),
    "unavailable": (
        "The store is busy or unreachable, its disk is full or cannot be written, or the vault is being "
        "upgraded after a kaeru update (the message says which, and where); nothing was applied — unless "
        "the message says the database's answer to COMMIT was lost: then the write may stand. Retry later, "
        "with the same `request_id` (retryable). Where waiting cannot help — a vault written by a newer "
        "kaeru, a PostgreSQL database not in UTF-8, a role refused a right on the vault, a password, role "
        "or database the server refuses, a server that only reads (a standby), a vault database emptied "
        "under a running server, a SQLite vault's `-wal` or `-shm` deleted under a running server (every "
        "server on the vault is to be restarted) — `retryable` is false and the message says what to change."
    ),
    "internal": "An unexpected server fault; nothing was applied. Please report it.",
    "duplicate_key": (
        "Warning (`kaeru import-from`): two items of the source share a key (an entity's name, a note's "
        "path): the message names it and says what was kept (the last item, or one node holding both "
        "entities' observations)."
    ),
    "line_skipped": (
        "Warning (`kaeru import-from`): a line of a memory-jsonl file (or an entry of one JSON document) "
        "is not JSON, or neither an entity nor a relation, and was left out; the message names it."
    ),
    "link_skipped": (
        "Warning (`kaeru import-from`): a relation names no item of the source, or links an item to "
        "itself, and was left out."
    ),
    "links_unresolved": (
        "Warning (`kaeru import-from`): wiki links of a folder's notes name no note in that folder; "
        "the notes were imported without those links, the message lists some."
    ),
    "name_cleaned": (
        "Warning (`kaeru import-from`): an item's name is not one a node can hold (line breaks or tabs in it, "
        "or longer than a name may be); it was imported under the cleaned name the message gives, and the "
        "source's name is kept in the node's properties."
    ),
    "read_graph_file": (
        "Information (`kaeru import-from memory-jsonl`): the file is one JSON document with `entities` and "
        "`relations` (the memory server's `read_graph` answer), not JSON lines; it was read as such."
    ),
    "file_skipped": (
        "Warning (`kaeru import-from markdown|kaeru-md`): a `.md` path in the folder is not a file that can be "
        "read (a folder so named, a symbolic link to nothing, a file the user may not read); it was left out "
        "and the message names it. The rest of the folder was imported."
    ),
    "not_utf8": (
        "Warning (`kaeru import-from`): a note (markdown, kaeru-md) or lines (memory-jsonl) hold bytes that "
        "are not UTF-8 (a file saved as Latin-1 or Windows-1252); they were imported with U+FFFD in their "
        "place. The message names the file and the first such byte, or the lines: save it as UTF-8 and "
        "import again (the nodes are revised)."
    ),
    "type_changed": (
        "Warning (`kaeru import-from`): re-imported items whose source now gives them another node type became "
        "new nodes of that type, each superseding the old one (kept in history; links a person made to it reach "
        "the new one through the supersession). The message names the items, old → new type."
    ),
    "type_kept": (
        "Warning (`kaeru import-from`): a re-imported item's source gives it another node type than its node has, "
        "and the import does not override a successor or a type a person made in kaeru: something already "
        "supersedes the node, or a person gave it its type (`evolve`). The node keeps its type and kind tag and "
        "the rest of the change is applied. The message names the item and why."
    ),
    "forgotten_kept": (
        "Warning (`kaeru import-from`): items of the source were forgotten in kaeru; they stay forgotten (not "
        "imported again, even when changed in the source) and their relations are left out. The message "
        "names them."
    ),
    "links_ambiguous": (
        "Warning (`kaeru import-from markdown`): a wiki link's name is the file name (or title) of several "
        "notes equally near the folder's root; it was linked to the first by path, the message names the "
        "others. Write the note's path in the link (`[[people/Alice]]`) to choose."
    ),
}
