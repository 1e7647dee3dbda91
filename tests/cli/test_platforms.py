"""kaeru on a system other than Linux: what CPython lacks there, taken away from it here.

On Windows every server and `kaeru backup` ended in a traceback at once: the event loop takes no
signal handlers, there is no `resource` module and no SIGHUP, and a descriptor opened without
O_BINARY writes each newline as CR LF. A child process runs kaeru with the platform's standard
library cut down so (`PLATFORM`, as a user's process would have it; kaeru's own code untouched),
and each test says what the user sees: the server answers, the backup is whole, the archive is the
bytes its sha256 names. What cannot be stood in for here — the Proactor loop's pipes, ACLs — is not.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import apsw
import pytest

from kaeru.config import Settings
from kaeru.storage.sqlite.place import shared_place
from tests.cli.zygote_client import base_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="stands in for other systems on Linux")

#: Run as `python -c PLATFORM PATCHES ARGS…`: the named parts of the standard library made as
#: another system has them, then `kaeru ARGS`.
PLATFORM = r"""
import asyncio, io, os, signal, socket, sys

patches, args = sys.argv[1].split(","), sys.argv[2:]
if "no-resource" in patches:  # Windows
    sys.modules["resource"] = None
if "no-sighup" in patches:  # Windows
    del signal.SIGHUP
if "no-netlink" in patches:  # macOS, Windows: no socket diagnostics
    del socket.AF_NETLINK
if "loop-without-signals" in patches:  # Windows' event loops
    def refused(self, *args, **kwargs):
        raise NotImplementedError
    asyncio.unix_events._UnixSelectorEventLoop.add_signal_handler = refused
    asyncio.unix_events._UnixSelectorEventLoop.remove_signal_handler = refused
if "text-mode" in patches:  # Windows' C runtime: a descriptor is in text mode unless O_BINARY
    os.O_BINARY = 0x8000  # Windows' value
    texts, opened, fdopened = set(), os.open, os.fdopen

    class Crlf(io.RawIOBase):
        def __init__(self, fd):
            self.fd = fd
        def writable(self):
            return True
        def fileno(self):
            return self.fd
        def write(self, data):
            data = bytes(data)
            os.write(self.fd, data.replace(b"\n", b"\r\n"))
            return len(data)
        def close(self):
            if not self.closed:
                os.close(self.fd)
            super().close()

    def text_open(path, flags, mode=0o777, *, dir_fd=None):
        fd = opened(path, flags & ~os.O_BINARY, mode, dir_fd=dir_fd)
        if flags & (os.O_WRONLY | os.O_RDWR) and not flags & os.O_BINARY:
            texts.add(fd)
        return fd

    def text_fdopen(fd, mode="r", *args, **kwargs):
        if fd in texts and "b" in mode and "w" in mode:
            texts.discard(fd)
            return io.BufferedWriter(Crlf(fd))
        texts.discard(fd)
        return fdopened(fd, mode, *args, **kwargs)

    os.open, os.fdopen = text_open, text_fdopen
sys.argv = ["kaeru", *args]
from kaeru.cli.app import COMMANDS, main
if "win32" in patches:  # after the imports that choose their kind of system by it
    import importlib, sysconfig
    sysconfig.get_config_vars()
    for name in (*(f"kaeru.cli.{c}" for c in COMMANDS), "zoneinfo", "mcp.server.stdio", "kaeru.mcp.server",
                 "kaeru.mcp.transports", "kaeru.service.doctor", "kaeru.storage.factory", "kaeru.storage.sqlite.health"):
        importlib.import_module(name)
    sys.platform = "win32"
main()
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
WAIT_S = 60.0


def _argv(patches: Sequence[str], *args: str) -> list[str]:
    return [sys.executable, "-c", PLATFORM, ",".join(patches), *args]


def _run(vault: Path, patches: Sequence[str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**base_env(), "KAERU_VAULT": str(vault)}
    return subprocess.run(_argv(patches, *args), capture_output=True, text=True, env=env, timeout=WAIT_S, check=False)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    made = _run(folder, (), "note", "--initiative", "web", "first line\nsecond line")
    assert made.returncode == 0, made.stderr
    return folder


def _line(stream: io.BufferedReader | None, deadline: float) -> bytes:
    assert stream is not None
    ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
    assert ready, "no answer"
    return stream.readline()


@pytest.mark.parametrize("patches", [("loop-without-signals",), ("loop-without-signals", "win32")])
def test_serve_answers_and_stops_cleanly_where_the_loop_takes_no_signals(vault: Path, patches: tuple[str, ...]) -> None:
    env = {**base_env(), "KAERU_VAULT": str(vault)}
    server = subprocess.Popen(
        _argv(patches, "serve"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        assert server.stdin is not None
        server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        server.stdin.flush()
        answer = _line(server.stdout, time.monotonic() + WAIT_S)  # type: ignore[arg-type]
        assert json.loads(answer)["result"]["serverInfo"]["name"], answer
        server.send_signal(signal.SIGTERM)
        code = server.wait(WAIT_S)
    finally:
        server.kill()
        server.wait()
    stderr = server.stderr.read().decode() if server.stderr else ""
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert not (vault / "vault.sqlite3-wal").exists()  # the store was closed, as on Linux


@pytest.fixture
def http_server(vault: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str]]]:
    """`kaeru serve --http --port 0` run with the patches `request.param` names: its address and
    what it said on stderr until it announced itself."""
    env = {**base_env(), "KAERU_VAULT": str(vault)}
    server = subprocess.Popen(
        _argv(request.param, "serve", "--http", "--port", "0"),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
    )
    said: list[str] = []
    deadline = time.monotonic() + WAIT_S
    try:
        while not any("serving MCP" in line for line in said):
            line = _line(server.stderr, deadline).decode()  # type: ignore[arg-type]
            assert line, "".join(said)
            said.append(line)
        url = next(line for line in said if "serving MCP" in line).split(" at ")[1].strip()
        yield url.removesuffix("/mcp"), said
        server.send_signal(signal.SIGTERM)
        assert server.wait(WAIT_S) == 0
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize("http_server", [("no-resource",)], indirect=True)
def test_http_server_serves_without_the_resource_module(http_server: tuple[str, list[str]]) -> None:
    base, said = http_server
    with urllib.request.urlopen(f"{base}/health", timeout=WAIT_S) as answer:
        assert answer.read() == b"ok", said


@pytest.mark.parametrize("http_server", [("no-netlink",)], indirect=True)
def test_http_server_without_a_token_says_any_local_account_can_connect_where_owners_are_unknown(
    http_server: tuple[str, list[str]],
) -> None:
    _, said = http_server
    warned = [line for line in said if "any local account can connect" in line]
    assert len(warned) == 1, said
    assert "WARNING" in warned[0]
    assert "KAERU_AUTH_TOKEN" in warned[0] and "kaeru token add NAME" in warned[0]


@pytest.mark.parametrize("http_server", [()], indirect=True)
def test_http_server_where_owners_are_known_says_nothing_of_it(http_server: tuple[str, list[str]]) -> None:
    from kaeru.mcp.peers import owners_known

    if not owners_known():
        pytest.skip("this machine's socket diagnostics cannot be asked")
    _, said = http_server
    assert not [line for line in said if "any local account" in line]


def test_backup_is_made_and_whole_where_there_is_no_sighup(vault: Path, tmp_path: Path) -> None:
    target = tmp_path / "backup.sqlite3"
    done = _run(vault, ("no-sighup",), "--json", "backup", str(target))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["live_nodes"] == 1
    copy = apsw.Connection(str(target), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert copy.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        copy.close()


def test_an_exported_archive_is_the_bytes_its_sha256_names_in_text_mode(vault: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.amg"
    done = _run(vault, ("text-mode",), "--json", "export", str(target))
    assert done.returncode == 0, done.stderr
    (artifact,) = json.loads(done.stdout)["data"]["artifacts"]
    written = target.read_bytes()
    assert b"\r\n" not in written
    assert (len(written), hashlib.sha256(written).hexdigest()) == (artifact["bytes"], artifact["sha256"])
    imported = _run(tmp_path / "other", (), "import", str(target))
    assert imported.returncode == 0, imported.stderr


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A folder every account may enter (pytest's own are the owner's only)."""
    made = Path(tempfile.mkdtemp(prefix="kaeru-reachable-"))
    os.chmod(made, 0o755)
    if any(not place.stat().st_mode & stat.S_IXOTH for place in made.parents):
        shutil.rmtree(made)
        pytest.skip("a parent of the temporary folder keeps other accounts out")
    yield made
    shutil.rmtree(made)


def test_doctor_on_windows_says_it_cannot_tell_who_may_read_the_vault(reachable: Path) -> None:
    """Windows' `st_mode` shows every file 0666 and every folder 0777 whatever its ACLs say: a WARN
    with `chmod` advice there was false, and its advice did nothing."""
    folder = reachable / "vault"
    assert _run(folder, (), "note", "--initiative", "web", "x").returncode == 0
    os.chmod(folder, 0o777)
    os.chmod(folder / "vault.sqlite3", 0o666)
    done = _run(folder, ("win32",), "--json", "doctor")
    private = {c["name"]: c for c in json.loads(done.stdout)["checks"]}["private"]
    assert private["status"] == "info", private
    assert "cannot tell" in private["summary"]
    assert "chmod" not in json.dumps(private)


def test_a_postgresql_vault_without_a_home_or_uids_gets_a_folder_for_its_exports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Windows has no `os.getuid`; the exports' folder of a PostgreSQL vault with no home is named
    by the account's login name there."""
    monkeypatch.delattr(os, "getuid")
    monkeypatch.setitem(sys.modules, "pwd", None)  # no password database either
    monkeypatch.delenv("HOME", raising=False)
    env = {"KAERU_DATABASE_URL": "postgresql://localhost/kaeru"}
    monkeypatch.setenv("USERNAME", "ayumi")
    for name in ("LOGNAME", "USER", "LNAME"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings.from_env(env)
    assert settings.vault_dir == Path(tempfile.gettempdir()) / "kaeru-ayumi"


def test_a_network_mount_whose_name_is_not_utf8_is_still_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The kernel's mount table names mount points as bytes; one not UTF-8 (a Latin-1 `café`) was
    decoded with U+FFFD and matched no folder, so a vault on that NFS share went unwarned."""
    folder = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9"))
    folder.mkdir()
    table = tmp_path / "mountinfo"
    point = os.fsencode(folder)
    table.write_bytes(b"36 35 0:40 / " + point + b" rw,relatime shared:1 - nfs4 server:/share rw\n")
    real_open = Path.open

    def the_mount_table(self: Path, *args: object, **kwargs: object) -> object:  # the kernel's, stood in for
        return real_open(table if str(self) == "/proc/self/mountinfo" else self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", the_mount_table)
    said = shared_place(folder)
    assert said is not None and "network file system (nfs4)" in said


#: The modules Windows' CPython does not have that test files import.
NOT_ON_WINDOWS = ("fcntl", "pty", "termios", "pwd", "resource")


@pytest.mark.parametrize("path", ["tests/cli/test_serve_at_terminal.py", "tests/cli/test_no_home.py"])
def test_test_files_are_collected_without_posix_modules(path: str) -> None:
    root = Path(__file__).resolve().parents[2]
    without = "; ".join(f"sys.modules[{name!r}] = None" for name in NOT_ON_WINDOWS)
    code = f"import os, sys; {without}; del os.geteuid; import pytest; sys.exit(pytest.main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "--collect-only", "-q", "-p", "no:cacheprovider", path],
        cwd=root,
        capture_output=True,
        text=True,
        env=base_env(),
        timeout=WAIT_S,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing collected (skipped)
    assert "error" not in done.stdout.lower(), done.stdout
