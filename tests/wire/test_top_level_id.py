"""The id of a line over the size limit, read from its head (`unreadable._top_level_id`): the
message's own `id`, never one inside `params`, and none when it is no whole number or string — a
`1.5` was read as `1`, and the refusal went out under another request's id (review, session 38)."""

from __future__ import annotations

import pytest

from kaeru.mcp.unreadable import _top_level_id


@pytest.mark.parametrize(
    ("head", "found"),
    [
        (b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"arguments":{"text":"xx', 12),
        (b'{"jsonrpc":"2.0","id":"a\\"b","params":', 'a"b'),
        (b'{"params":{"id":4,"arguments":{"text":"x"}},"id":7,', 7),
        (b'{"jsonrpc":"2.0","id":1.5,"method":', None),
        (b'{"jsonrpc":"2.0","id":1e3,"method":', None),
        (b'{"jsonrpc":"2.0","id":null,"method":', None),
        (b'{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"text":"xxxx', None),
    ],
)
def test_the_id_of_a_head_is_its_own_whole_id(head: bytes, found: object) -> None:
    assert _top_level_id(head) == found
