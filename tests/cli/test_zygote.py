"""The CLI zygote (`tests/cli/zygote.py`, `zygote_client.py`) runs `python -m kaeru` as a fresh
interpreter does: same exit codes, stdout and stderr on equal vaults, same end on Ctrl-C, nothing of
one run left to the next, a kill reported as a kill. The suite's CLI tests are only as good as this
parity (its servers': tests/wire/test_forked_server.py)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from tests.backends import VaultSpec
from tests.cli import zygote_client as zygote
from tests.cli.support import Run, kaeru, kaeru_env

Runner = Callable[..., Run]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
DIGEST = re.compile(r"sha256 [0-9a-f]{16}")  # of an archive that holds ids and times
SLUG = re.compile(r"(?<=[a-z0-9])-[0-9a-f]{6,12}\b")  # a name's suffix from its node's id, a revision's
#: an instant (ISO) or a day with its time of day as the compact text writes it (decision 478)
STAMP = re.compile(r"\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?)?")


def spawned(env: Mapping[str, str], *args: str, stdin: bytes | None = None) -> Run:
    done = subprocess.run(
        [sys.executable, "-m", "kaeru", *args], capture_output=True, env=dict(env), input=stdin, timeout=90, check=False
    )
    return Run(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))


def forked(env: Mapping[str, str], *args: str, stdin: bytes | None = None) -> Run:
    code, out, err = zygote.forked(list(args), env, stdin)
    return Run(code, out.decode(errors="replace"), err.decode(errors="replace"))


def _session(vault: VaultSpec, place: Path, run: Runner) -> list[tuple[str, Run]]:
    """The same commands, in order, on `vault`, each run by `run`: what a user sees of each."""
    place.mkdir(parents=True)
    env = kaeru_env(vault)
    home = place / "home"
    home.mkdir()
    (place / "a-file").write_text("not a folder")
    runs: list[tuple[str, Run]] = []

    def step(name: str, *args: str, stdin: bytes | None = None, extra: Mapping[str, str] | None = None) -> Run:
        done = run({**env, **(extra or {})}, *args, stdin=stdin)
        runs.append((name, done))
        return done

    def nowhere(name: str, *args: str) -> None:
        """`args` where no vault is: a SQLite folder under a file, whatever the backend."""
        runs.append((name, run(kaeru_env({"KAERU_VAULT": str(place / "a-file" / "vault")}), *args, stdin=None)))

    first = step("note from stdin", "note", "-i", "parity", "-", stdin=b"the zygote forks a child per run\n")
    step("note", "note", "-i", "parity", "a second note: children inherit nothing of one another")
    step("search", "search", "-i", "parity", "zygote")
    step("search --json", "--json", "search", "-i", "parity", "child")
    step("read", "read", "-i", "parity", UUID.findall(first.stdout)[0])
    # A note piped with CR and CRLF line ends is stored with them (a text stream that translated
    # newlines stored "\n" where a user's run keeps what was sent).
    crlf = step("note from stdin, CRLF", "note", "-i", "parity", "-", stdin=b"line one\r\nline two\rend\n")
    step("read the CRLF note", "--json", "read", "-i", "parity", UUID.findall(crlf.stdout)[0])
    step("recall", "recall", "-i", "parity", "how are the runs started")
    step("context", "context", "-i", "parity")
    step("export to a file", "export", "-i", "parity", str(place / "out.amg"))
    step("refusal", "--json", "search", "-i", "no-such-initiative", "zygote")
    step("usage error", "search", "zygote")
    nowhere("missing vault", "search", "-i", "parity", "x")
    nowhere("doctor on a missing vault", "doctor")
    step(
        "HOME and XDG override",
        "setup",
        "claude-desktop",
        "--write",
        extra={"HOME": str(home), "XDG_CONFIG_HOME": str(place / "xdg")},
    )
    step("home only", "setup", "codex", "--write", extra={"HOME": str(home)})
    step("version", "--version")
    assert (place / "out.amg").is_file()
    assert (place / "xdg" / "Claude" / "claude_desktop_config.json").is_file()
    assert (home / ".codex" / "config.toml").is_file()
    return runs


def _plain(text: str, vault: VaultSpec, place: Path) -> str:
    """`text` without what differs between two equal vaults by nature: ids, times, places."""
    for name in (vault.database_url, str(vault.vault_dir), str(place)):
        if name:
            text = text.replace(name, "<place>")
    if vault.database_url:
        text = text.replace(vault.database_url.rsplit("/", 1)[-1], "<database>")
    return DIGEST.sub("sha256 <digest>", SLUG.sub("-<n>", STAMP.sub("<time>", UUID.sub("<id>", text))))


def test_forked_runs_match_spawned_ones(twin: tuple[VaultSpec, VaultSpec], tmp_path: Path) -> None:
    forked_vault, spawned_vault = twin
    by_fork = _session(forked_vault, tmp_path / "f", forked)
    by_spawn = _session(spawned_vault, tmp_path / "s", spawned)
    assert [name for name, _ in by_fork] == [name for name, _ in by_spawn]
    codes = {name: run.code for name, run in by_spawn}
    assert codes["refusal"] == 2 and codes["usage error"] == 2 and codes["missing vault"] == 2, codes
    assert codes["doctor on a missing vault"] == 1, codes
    assert (
        codes["note from stdin"] == codes["read"] == codes["export to a file"] == codes["HOME and XDG override"] == 0
    ), codes
    for (name, one), (_, other) in zip(by_fork, by_spawn, strict=True):
        assert (
            one.code,
            _plain(one.stdout, forked_vault, tmp_path / "f"),
            _plain(one.stderr, forked_vault, tmp_path / "f"),
        ) == (
            other.code,
            _plain(other.stdout, spawned_vault, tmp_path / "s"),
            _plain(other.stderr, spawned_vault, tmp_path / "s"),
        ), name


def _waiting_on_stdin(pid: int) -> None:
    """Return once `pid` is blocked reading its fd 0 (past its start-up, inside the command)."""
    while True:
        try:
            call = Path(f"/proc/{pid}/syscall").read_text().split()
        except (FileNotFoundError, ProcessLookupError):
            return  # it ended: its status says how
        if call[:2] == ["0", "0x0"]:  # read(0, …)
            return
        os.sched_yield()


def _at_a_terminal() -> None:
    """SIGINT's default disposition, as a terminal's Ctrl-C finds it (a test runner's worker may
    ignore SIGINT, and an ignored signal stays ignored in a child, forked or started anew)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def terminal_zygote() -> Iterator[zygote.Zygote]:
    """A zygote started as a terminal starts a `python`: its children start so too."""
    started = zygote.launch(preexec_fn=_at_a_terminal)
    yield started
    zygote.stop(started)


def _interrupted_while_reading(env: Mapping[str, str], by: zygote.Zygote | None) -> tuple[Run, set[str]]:
    """`kaeru note -i parity -` stopped by SIGINT while it waits on stdin, forked `by` a zygote or
    started anew; and its open fds then."""
    args = ["note", "-i", "parity", "-"]
    stdin_r, stdin_w = os.pipe()
    try:
        if by is not None:
            conn, out_r, err_r = zygote.start(args, env, stdin_r, by)
            os.close(stdin_r)
            pid = zygote.pid_of(conn)
            _waiting_on_stdin(pid)
            fds = set(os.listdir(f"/proc/{pid}/fd"))
            os.kill(pid, signal.SIGINT)
            code, out, err = zygote.collect(conn, out_r, err_r, args=args, pid=pid)
            return Run(code, out.decode(), err.decode()), fds
        child = subprocess.Popen(
            [sys.executable, "-m", "kaeru", *args],
            stdin=stdin_r,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            preexec_fn=_at_a_terminal,
        )
        os.close(stdin_r)
        _waiting_on_stdin(child.pid)
        fds = set(os.listdir(f"/proc/{child.pid}/fd"))
        child.send_signal(signal.SIGINT)
        out_b, err_b = child.communicate(timeout=90)
        return Run(child.returncode, out_b.decode(), err_b.decode()), fds
    finally:
        os.close(stdin_w)


def test_a_forked_child_interrupted_ends_as_a_spawned_one(
    sqlite_vault: VaultSpec, terminal_zygote: zygote.Zygote
) -> None:
    env = kaeru_env(sqlite_vault)
    by_fork, forked_fds = _interrupted_while_reading(env, terminal_zygote)
    by_spawn, spawned_fds = _interrupted_while_reading(env, None)
    assert by_spawn.code == 130 and "interrupted" in by_spawn.stderr, by_spawn
    assert (by_fork.code, by_fork.stdout, by_fork.stderr) == (by_spawn.code, by_spawn.stdout, by_spawn.stderr)
    # Nothing of the zygote's (its socket, its wakeup pipe, other runs' connections) is open in a child.
    assert forked_fds == spawned_fds == {"0", "1", "2"}, (forked_fds, spawned_fds)


def test_a_childs_environment_and_place_do_not_reach_the_next(
    sqlite_vault: VaultSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kaeru(sqlite_vault, "note", "-i", "parity", "one note to export")
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    setup = kaeru(
        sqlite_vault, "setup", "claude-desktop", "--write", XDG_CONFIG_HOME=str(first / "xdg"), TZ="Asia/Tokyo"
    )
    assert setup.code == 0 and kaeru(sqlite_vault, "export", "-i", "parity", "out.amg").code == 0
    monkeypatch.chdir(second)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    again = kaeru(sqlite_vault, "setup", "claude-desktop", "--write", HOME=str(home))
    assert again.code == 0 and kaeru(sqlite_vault, "export", "-i", "parity", "out.amg").code == 0
    assert (first / "out.amg").is_file() and (second / "out.amg").is_file()
    assert (first / "xdg" / "Claude" / "claude_desktop_config.json").is_file()
    assert (home / ".config" / "Claude" / "claude_desktop_config.json").is_file()
    assert str(first) not in again.stdout + again.stderr


def test_a_killed_child_reports_minus_nine(sqlite_vault: VaultSpec) -> None:
    args = ["note", "-i", "parity", "-"]
    stdin_r, stdin_w = os.pipe()
    try:
        conn, out_r, err_r = zygote.start(args, kaeru_env(sqlite_vault), stdin_r)
        os.close(stdin_r)
        pid = zygote.pid_of(conn)
        os.kill(pid, signal.SIGKILL)
        code, _, _ = zygote.collect(conn, out_r, err_r, args=args, pid=pid)
    finally:
        os.close(stdin_w)
    assert code == -signal.SIGKILL


def test_runs_that_change_how_python_starts_are_spawned(sqlite_vault: VaultSpec) -> None:
    """`-X importtime` output comes from the interpreter starting: a forked child would print none."""
    assert not zygote.forkable(kaeru_env(sqlite_vault, PYTHONPROFILEIMPORTTIME="1"))
    assert not zygote.forkable(kaeru_env(sqlite_vault, LC_ALL="C"))
    assert zygote.forkable(kaeru_env(sqlite_vault, TZ="Asia/Tokyo", HOME="/nonexistent"))
    done = kaeru(sqlite_vault, "--version", PYTHONPROFILEIMPORTTIME="1")
    assert done.code == 0 and "import time:" in done.stderr
