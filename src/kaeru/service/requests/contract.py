"""The published contract tools' inputs (`search`, `claim`, `revise`).

Their wire schemas are the contract files (`api/schemas/*.input.json`), served as they are; these
models carry the same fields so that their services take a model like every other.
tests/contract/test_requests.py checks that fields, requirements and defaults agree with the files.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from kaeru.service.requests.base import BUDGET_DEFAULT, Budget, Initiatives, Json, Ref, Request, Text, ref

_REVISION = "Your last-read revision: refused if the node changed since."
_REQUEST_ID = "Idempotency key: a retry replays the first result."


class SearchRequest(Request):
    initiatives: Initiatives = Field(description="The initiatives to search.")
    text: Text | None = Field(None, description="Words to find; literal, no query syntax.")
    filters: Annotated[Json | None, ref("Filters")] = Field(None, description="Narrow the hits.")
    match: Literal["any", "all"] = Field("any", description="any: a hit holds one word; all: every word.")
    prefix: bool = Field(False, description="Match each word as a prefix.")
    limit: int = Field(10, ge=1, le=50, description="Hits per page.")
    budget_chars: Budget = Field(BUDGET_DEFAULT, description="Most body characters in the answer.")
    cursor: Text | None = Field(None, description="From continuation: the next page.")


class ClaimRequest(Request):
    initiative: Text = Field(description="The initiative to write into; created if new (with a warning).")
    text: Text = Field(description="The hypothesis, stated so that evidence can decide it.")
    about: Ref | None = Field(None, description="The node the claim is about (linked refers_to).")
    evidence: Annotated[Json | None, ref("Evidence")] = Field(None, description="{node} or {method}.")
    initial_status: Literal["open", "supported", "refuted", "inconclusive"] = Field(
        "open", description="open, or the verdict when already known."
    )
    options: Annotated[Json | None, ref("CaptureOptions")] = Field(None, description="Slot, layer, slot CAS.")
    request_id: Text | None = Field(None, description=_REQUEST_ID)


class ReviseRequest(Request):
    initiative: Text = Field(description="The call's initiative (names resolve in it).")
    node: Ref = Field(description="The node to patch in place (same id, same tier).")
    patch: Annotated[Json, ref("Patch")] = Field(description="The fields to change; omitted fields stay as they are.")
    expected_revision: Text | None = Field(None, description=_REVISION)
    request_id: Text | None = Field(None, description=_REQUEST_ID)
