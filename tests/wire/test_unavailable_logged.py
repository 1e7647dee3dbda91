"""Tool calls answered `unavailable` because the database is down reach the operator's log of a real
`kaeru serve --http`: the first of each tool and error class at once — time, tool, the error's class
and first line, never the database's password — the others counted and said when the window ends or
the server stops (`kaeru.mcp.logs.Outages`). Before, the log said nothing; only `/health` did."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from kaeru.errors import Unavailable
from kaeru.mcp.faults import answered, outages_said
from kaeru.mcp.logs import Outages
from tests.backends import VaultSpec
from tests.wire.bearer_clients import bearer_client
from tests.wire.closed_database import assert_logged_bounded, closed, pg_vault
from tests.wire.support import call_ok, http_server, structured, subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

__all__ = ["pg_vault"]  # the fixture, shared with test_token_check_unavailable_logged

ADMIN = "unavailable-log-admin-token-41f"
CALLS = 6


@pytest.mark.anyio
async def test_calls_answered_unavailable_are_logged_bounded(pg_vault: VaultSpec, tmp_path: Path) -> None:
    vault = pg_vault
    env = subprocess_env(vault.env(), KAERU_AUTH_TOKEN=ADMIN)  # the admin token is checked without the vault
    with http_server(env, tmp_path) as server:
        async with bearer_client(server.url, ADMIN) as client:
            await call_ok(client, "note", {"initiative": "pg", "text": "the dunlin before the outage"})
            with closed(vault):
                for _ in range(CALLS):
                    result = await client.call_tool("search", {"initiatives": ["pg"], "text": "dunlin"})
                    envelope = structured(result)
                    assert [issue["code"] for issue in envelope["issues"]] == ["unavailable"], envelope
            found = await call_ok(client, "search", {"initiatives": ["pg"], "text": "dunlin"})
            assert found["data"]["total"] == 1
    # Every call counted, in fewer lines than calls.
    assert_logged_bounded(server.output(), "search", CALLS, vault)


async def _logged(said: str, caplog: pytest.LogCaptureFixture) -> str:
    """The operator's line for a call answered `unavailable` with `said`, made on a worker thread."""
    outages = Outages(logging.getLogger("kaeru.test.outages"))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kaeru.test.outages"), outages_said(outages):
        error = Unavailable(said)
        assert await anyio.to_thread.run_sync(answered, error, "note", None, None) is error
        for _ in range(1000):  # the line is handed to the event loop
            if caplog.records:
                break
            await anyio.sleep(0.01)
    [record] = caplog.records
    return record.getMessage()


@pytest.mark.anyio
async def test_a_password_an_unavailable_message_quotes_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    """What a driver says of a connection can quote its URL or conninfo: the line logs `***` for the
    password, and only the message's first line. The call runs on a worker thread, as a tool does."""
    said = (
        "cannot connect to PostgreSQL at postgresql://kaeru:hunter2@db.example:5432/vault (host=db password=swordfish dbname=vault)"
        "\nDETAIL: the next line is not logged"
    )
    line = await _logged(said, caplog)
    assert line == (
        "unavailable answer to note: Unavailable: cannot connect to PostgreSQL at "
        "postgresql://kaeru:***@db.example:5432/vault (host=db password=*** dbname=vault)"
    ), line


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("said", "secret", "kept"),
    [
        # A URL the 300-character cut runs through: masked before the cut, not after (its `@` cut off).
        ("x" * 270 + " postgresql://kaeru:hunter2secretpassword@db/x", "hunter2", "postgresql://kaeru:***"),
        # An environment's setting quoted back, any `…password=`, in any case.
        ("psql exited: PGPASSWORD=tern7gull psql -h db", "tern7gull", "PGPASSWORD=*** psql -h db"),
        ("connect with Db_Password = tern7gull failed", "tern7gull", "Db_Password = ***"),
        # A conninfo's quoted value with an escaped quote in it, and one whose quote is never closed.
        (r"invalid conninfo: host=db password='it\'s tern7gull' dbname=v", "tern7gull", "password=*** dbname=v"),
        (r"invalid conninfo: host=db password='tern7 gull", "gull", "host=db password=***"),
    ],
    ids=["url-across-the-cut", "PGPASSWORD", "any-case-spaced", "escaped-quote", "unclosed-quote"],
)
async def test_a_password_is_masked_wherever_the_line_quotes_it(
    said: str, secret: str, kept: str, caplog: pytest.LogCaptureFixture
) -> None:
    line = await _logged(said, caplog)
    assert secret not in line, line
    assert kept in line, line
    # The line is still cut, after the mask: at most 300 characters of it, then `…`.
    assert len(line.partition("Unavailable: ")[2]) <= 301, line


@pytest.mark.anyio
async def test_a_long_line_is_cut_after_its_password_is_masked(caplog: pytest.LogCaptureFixture) -> None:
    """A line still over 300 characters once masked is cut; the cut never bares the password."""
    line = await _logged("x" * 270 + " postgresql://kaeru:hunter2secretpassword@db/" + "y" * 50, caplog)
    assert line.endswith(" postgresql://kaeru:***@db/yyy…") and "hunter2" not in line, line
