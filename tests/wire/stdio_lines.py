"""`kaeru serve` on pipes, spoken to one raw line at a time: shared by the stdio tests that send
lines the SDK's client would not."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.cli.zygote_client import server_argv
from tests.wire.support import KAERU_SERVE


class Piped:
    """`kaeru serve` on pipes, its standard error written to `log`; nothing sent for it first."""

    def __init__(self, env: dict[str, str], log: Path):
        self.log = log
        with log.open("wb") as errors:
            self.proc = subprocess.Popen(
                server_argv(KAERU_SERVE, env), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=env
            )

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the server exited: {self.log.read_text()}"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        code = self.proc.wait(30)
        self.proc.stdout.close()
        return code
