"""`kaeru serve`'s stop signals where the event loop takes them only in part (`transports._stop_on_signals`).

Before: a loop that took SIGTERM and refused SIGINT kept its own SIGTERM handler, which the fallback
then took back as "the previous one": once the server ended, the process ignored SIGTERM; and the
loop, giving it back, left the default action, which the fallback then put back in place of the
host's own handler. A stop
handler that Python did not install (`signal.getsignal` answers None for one set from C, as in a
program that embeds Python) made the server's end a TypeError."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from kaeru.mcp.transports import _stop_on_signals

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the loop's signal handlers are POSIX's")

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class _Refusing(asyncio.SelectorEventLoop):
    """An event loop that takes the handlers of the signals `takes` only and refuses the others, as
    Windows' loops refuse every one."""

    def __init__(self, takes: tuple[int, ...] = ()):
        super().__init__()
        self.takes = takes

    def add_signal_handler(self, sig: int, callback: Any, *args: Any) -> None:
        if sig not in self.takes:
            raise NotImplementedError
        super().add_signal_handler(sig, callback, *args)


def _host_term(signum: int, frame: Any) -> None:
    """A SIGTERM handler of the program that runs the server (pytest-xdist's workers install one)."""


@pytest.fixture
def handlers() -> Iterator[dict[int, Any]]:
    """The process's handlers of the stop signals as the server finds them — SIGTERM a handler of
    the host's own, which it must get back — restored as they were after the test."""
    before = {s: signal.getsignal(s) for s in SIGNALS}
    signal.signal(signal.SIGTERM, _host_term)
    try:
        yield {s: signal.getsignal(s) for s in SIGNALS}
    finally:
        for s, was in before.items():
            signal.signal(s, was)


def test_a_loop_that_takes_one_stop_signal_and_refuses_the_next_leaves_both_as_they_were(
    handlers: dict[int, Any],
) -> None:
    loop = _Refusing(takes=(signal.SIGTERM,))
    stopped: list[bool] = []
    try:
        undo = _stop_on_signals(loop, lambda: stopped.append(True))
        assert not loop.remove_signal_handler(signal.SIGTERM)  # the loop holds none: given back
        signal.raise_signal(signal.SIGTERM)
        loop.run_until_complete(asyncio.sleep(0))
        assert stopped == [True]  # the fallback's handler took it and stopped the server
        undo()
        assert {s: signal.getsignal(s) for s in SIGNALS} == handlers
    finally:
        loop.close()


def test_a_stop_handler_set_from_c_gives_way_to_the_default_when_the_server_ends(
    handlers: dict[int, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = signal.getsignal

    def from_c(signum: int) -> Any:
        was = real(signum)
        return None if signum in handlers and was is handlers[signum] else was  # as CPython says of C's

    loop = _Refusing()
    try:
        with monkeypatch.context() as patched:
            patched.setattr(signal, "getsignal", from_c)
            undo = _stop_on_signals(loop, lambda: None)
            undo()
    finally:
        loop.close()
    assert {s: signal.getsignal(s) for s in SIGNALS} == dict.fromkeys(SIGNALS, signal.SIG_DFL)
