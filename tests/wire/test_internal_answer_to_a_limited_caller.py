"""What a caller limited to some initiatives is told of an `internal` error that is no storage
error: its first clause and the log's reference, not the text after it, which can quote SQL
(`kaeru.mcp.faults`; a storage error's case on a real server: tests/wire/test_operator_log.py)."""

from __future__ import annotations

import logging
import re

import pytest

from kaeru.errors import Internal
from kaeru.mcp.faults import answered
from kaeru.service.grants import Principal, acting

#: What `storage/migrate.py` raises when an upgrade fails: the driver's words after the colon.
FAILED = "upgrading the vault failed: duplicate key value violates unique constraint; DETAIL: Key (name)=(payroll-2027)"


def test_a_limited_caller_is_told_the_first_clause_and_the_log_the_whole(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="kaeru.mcp"), acting(Principal("bob", frozenset({"web"}))):
        said = answered(Internal(FAILED), "note", "r-1", None)
    assert isinstance(said, Internal)
    assert re.fullmatch(
        r"upgrading the vault failed \(the server's log has the whole message\) \[log ref [0-9a-f]{8}\]", said.message
    ), said.message
    ref = said.message[-9:-1]
    logged = [record.getMessage() for record in caplog.records if f"ref {ref}" in record.getMessage()]
    assert len(logged) == 1 and "payroll-2027" in logged[0], logged


def test_a_caller_of_every_initiative_is_told_the_whole_message() -> None:
    with acting(Principal("alice")):
        said = answered(Internal(FAILED), "note", "r-2", None)
    assert said.message.startswith(FAILED + " [log ref "), said.message
