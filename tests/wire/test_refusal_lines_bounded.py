"""How many lines refused requests cost the operator's log: bounded whatever arrives, and every
refusal still counted (`kaeru.mcp.logs.Refusals`; the real server's lines: tests/wire/test_operator_log.py)."""

from __future__ import annotations

import logging
import re

import pytest
from mcp.server.auth.provider import AccessToken

from kaeru.mcp.bearer import LoggedVerifier
from kaeru.mcp.logs import KINDS, Refusals


def test_a_flood_from_many_addresses_costs_a_bounded_number_of_lines_and_every_refusal_is_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("kaeru.http.test-refusals")
    refusals = Refusals(log)
    addresses = [f"203.0.113.{n}" for n in range(KINDS + 30)]
    with caplog.at_level(logging.WARNING, logger=log.name):
        for _ in range(50):
            for address in addresses:
                refusals.refused(address, "/mcp", "unknown token")
        refusals.flush()
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) <= 2 * KINDS + 1, lines
    firsts = [line for line in lines if re.fullmatch(r"refused /mcp from [\d.]+: unknown token", line)]
    more = [int(m.group(1)) for line in lines if (m := re.search(r" (\d+) more times since the first", line))]
    others = [int(m.group(1)) for line in lines if (m := re.match(r"refused (\d+) more requests from other", line))]
    assert len(firsts) == KINDS and len(others) == 1, lines
    assert len(firsts) + sum(more) + sum(others) == 50 * len(addresses)


class _Provider:
    """An identity provider's verifier (decision 15.K3) that grants `ci` a token without `kaeru:read`."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="ci", scopes=["kaeru:write"]) if token == "ci-token" else None


@pytest.mark.anyio
async def test_the_viewer_logs_a_token_it_refuses_for_want_of_the_read_scope(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("kaeru.http.test-viewer-scope")
    verifier = LoggedVerifier(_Provider(), Refusals(log))
    with caplog.at_level(logging.WARNING, logger=log.name):
        assert await verifier.verify_token("ci-token") is None
        assert await verifier.verify_token("other") is None
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        "refused /ui from an unknown address: token 'ci' without the kaeru:read scope",
        "refused /ui from an unknown address: unknown token",
    ], lines
    assert all("ci-token" not in line for line in lines)
