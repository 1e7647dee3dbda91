"""How a turn is written as a `note`: the ingests a client may reasonably use (SPEC §3.2 `note`).

Shared by the in-process harness (`--ingest`) and the MCP mode (`--mcp`), so that the same ingest
can be ranked both ways. Each is one vault:

* `harness`: what the in-process harness has always stored — `text` `<speaker>: <text>` (plus
  ` [image: <caption>]`), `occurred_at` = the session's time + i seconds for the i-th turn, no name.
* `text`: `text` only; no name (the server makes one from the first words), no date (the turn is
  dated when written).
* `named`: `text` plus a `name` per turn, `<speaker> <turn id>` (`Caroline D1:3`).
* `dated`: `named` plus the session's date and time as `occurred_at`, the same for every turn of
  the session (the issue's other client).
* `dated-text`: `named` with the session's date written at the head of the text instead
  (`[1:56 pm on 8 May, 2023] Caroline: …`), no `occurred_at`.

Only the ingest sees turn ids (in `named` names); no channel reads them as such.
"""

from __future__ import annotations

from typing import Any

from bench.locomo.data import Conversation, Turn

INGESTS = ("harness", "text", "named", "dated", "dated-text")


def note_arguments(conv: Conversation, turn: Turn, ingest: str) -> dict[str, Any]:
    """The `note` tool's arguments for one turn under `ingest`."""
    args: dict[str, Any] = {"initiative": conv.initiative, "text": turn.text}
    if ingest in ("named", "dated", "dated-text"):
        args["name"] = f"{turn.speaker} {turn.dia_id}"
    if ingest == "dated":
        args["occurred_at"] = turn.session_at
    elif ingest == "dated-text":
        args["text"] = f"[{turn.session_label}] {turn.text}"
    elif ingest == "harness":
        args["occurred_at"] = turn.occurred_at
    elif ingest not in ("text", "named"):
        raise ValueError(f"unknown ingest {ingest!r}; choose from {', '.join(INGESTS)}")
    return args
