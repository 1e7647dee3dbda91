"""What "the same call" is, for `run_mutation`: the digest a `request_id`'s replay is matched by,
and the warning of a call without one that repeats a recent write (decision 291)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kaeru.domain.digest import args_sha256
from kaeru.domain.timefmt import parse_ts
from kaeru.service import grants
from kaeru.service.outcomes import Issue, MutationOutcome
from kaeru.service.recent import CallKey
from kaeru.service.runtime import Runtime
from kaeru.storage.base import Session


def args_digest(args: dict[str, Any]) -> str:
    """Digest of the call's arguments without `request_id`: what "the same call" means for replay.

    A caller over HTTP adds who it is: a request id is one caller's. Two people whose agents both
    sent `note-1` with the same text got one note, the second person the first one's stored answer
    as `replayed`, nothing written or recorded under their name (decision 476). A caller limited to
    some initiatives adds its grant as well: the admin's stored answer may name what it may not see
    (decision 373). The local admin (stdio, the CLI) digests as it always did."""
    principal = grants.current()
    if principal is not None:
        args = {**args, "\x00caller": principal.name}
        if principal.initiatives is not None:
            args["\x00grant"] = sorted(principal.initiatives)
    return args_sha256(args, ("request_id",))


def call_digests(args: dict[str, Any], initiative: str) -> tuple[str, ...]:
    """The digests a stored replay of this call may carry, the first the one to store. The call's
    `initiative` is digested as it is used, `initiative` (trimmed, in NFC: SPEC §1.3): a retry that
    spelt it with other surrounding spaces is the same call, not a reused `request_id` (decision
    461). A call that needed no normalising digests as it always did; one that did also matches the
    digest of its spelling as sent, which an older kaeru stored."""
    sent = args.get("initiative")
    if not isinstance(sent, str) or sent == initiative:
        return (args_digest(args),)
    return args_digest({**args, "initiative": initiative}), args_digest(args)


def remember(rt: Runtime, call: CallKey | None, outcome: MutationOutcome) -> None:
    """Keep the node a call without `request_id` wrote, for `repeated` to name if it comes again."""
    if call is not None and outcome.state == "applied" and outcome.created and outcome.primary is not None:
        rt.recent_writes.remember(call, outcome.primary.id, rt.now())


#: The operations that write a new node from a text: a retry of one writes the memory twice.
RETRY_GUARDED = frozenset({"note", "task", "claim"})


def repeated(rt: Runtime, session: Session, call: CallKey, now: datetime) -> Issue | None:
    """The warning for a call that repeats, argument for argument, one that wrote a node still live
    within `RETRY_WINDOW` (a retry without `request_id` writes the memory twice)."""
    node_id = rt.recent_writes.find(call, now)
    node = session.get_node(node_id) if node_id is not None else None
    if node is None or node.retracted:
        return None
    ago = max(0, int((now - parse_ts(node.recorded_at)).total_seconds()))
    return Issue(
        "duplicate_call",
        f"the same {call[0]} call wrote {node.id} {ago} s ago, and this one wrote another: if it was a "
        "retry, forget one of them, and give request_id to make retries replay",
        None,
    )
