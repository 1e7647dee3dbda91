"""`archive` with a `request_id` (SPEC 2.1, decision 467): the first call's answer is stored and a
later call with the same key and arguments is answered with it, changing nothing.

Every other mutation claims its key, does its work and stores its answer in one transaction
(`run_mutation`). An archive cannot: an export only reads the vault, an import writes it in chunks
of their own. So the key is looked up before the work and the answer stored after it, in a
transaction of its own. Two calls with one key at the same moment may then both run — harmless, an
export writing the same file again and an import skipping what the other wrote — and the one that
stores second is answered the first's answer, as a replay: one answer for the key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kaeru.domain.timefmt import fmt
from kaeru.errors import RequestIdReused, Unavailable
from kaeru.service.checks import screen_secrets
from kaeru.service.outcomes import MutationOutcome
from kaeru.service.replay import call_digests
from kaeru.service.runtime import Runtime
from kaeru.storage.base import RequestKey, StoredRequest

#: The initiative of an archive's key: an archive names none (it spans the vault), and no
#: initiative is named "" (`normalise_initiative` refuses a blank name), so no initiative's key is
#: an archive's — nor could one be under any name, `archive` being no other tool's operation.
WHOLE_VAULT = ""
OPERATION = "archive"


class _Peeked(Exception):
    """Leaves the look-up's transaction by rolling it back: on PostgreSQL `begin_request` claims a
    free key with a row, and a look-up is to write nothing (a refused archive stores nothing)."""

    def __init__(self, stored: StoredRequest | None):
        super().__init__()
        self.stored = stored


def replayed_or_run(
    rt: Runtime, request_id: str | None, args: dict[str, Any], run: Callable[[], MutationOutcome]
) -> tuple[MutationOutcome, bool]:
    """The answer to an archive call (`args`: as sent) and whether it is a replay: without
    `request_id`, `run()`'s; with one, the answer stored under it, or `run()`'s, stored.

    A `partial` import is not stored: the same import again completes it (decision 212), which a
    replay of the partial answer would not. Nor is an answer whose storing the vault refused
    (`unavailable`): the work stands, and hiding it behind a refusal would say nothing was done.

    Raises:
        RequestIdReused: the key was stored for an archive call with other arguments.
        KaeruError: `run()` refused the call, or the key is refused (a secret); nothing is stored.
    """
    if not request_id:
        return run(), False
    # A handle the next call names it by: refused, never redacted (decision 362).
    screen_secrets(rt.settings.secret_policy, "request_id", request_id, handle=True)
    digests = call_digests(args, WHOLE_VAULT)
    key = RequestKey(WHOLE_VAULT, OPERATION, request_id)
    try:
        with rt.store.write() as session:
            raise _Peeked(session.begin_request(key, digests[0], fmt(rt.now())))
    except _Peeked as peeked:
        if peeked.stored is not None:
            return _replay(peeked.stored, digests, request_id), True
    outcome = run()
    if outcome.state == "partial":
        return outcome, False
    try:
        with rt.store.write() as session:
            stored = session.begin_request(key, digests[0], fmt(rt.now()))
            if stored is None:
                session.finish_request(key, outcome.to_json())
    except Unavailable:
        return outcome, False
    if stored is None or stored.args_hash not in digests:
        # Stored now; or taken meanwhile by a call with other arguments, whose key it stays.
        return outcome, False
    return MutationOutcome.from_json(stored.response), True  # another call stored it first


def _replay(stored: StoredRequest, digests: tuple[str, ...], request_id: str) -> MutationOutcome:
    if stored.args_hash not in digests:
        raise RequestIdReused(
            f"request_id {request_id!r} was already used for a different {OPERATION} call; use a new "
            "request_id for a new operation",
            field="request_id",
        )
    return MutationOutcome.from_json(stored.response)
