"""An account with no home (decision 189): a container run under an arbitrary uid (`docker run
--user 54321`, Kubernetes' `runAsUser`, OpenShift) has no HOME and no password entry. kaeru's
default vault lives under the home, so `kaeru note` and `kaeru serve` ended in a `RuntimeError:
Could not determine home directory` traceback — even with `--vault` given. Now the default says
what to set, and a vault given by `--vault` or KAERU_VAULT needs no home.

Run for real as such a uid (a child process; as root only), with the system's Python reading this
checkout and the test environment's packages: the test's own interpreter may sit in root's home.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

UID = 54321  # no password entry on this machine (checked below)
PYTHON = "/usr/bin/python3"
SRC = Path(__file__).resolve().parents[2] / "src"

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to run a child as a uid with no account"
)


def _kaeru(tmp: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import pwd

    try:
        pwd.getpwuid(UID)
        pytest.skip(f"uid {UID} has an account here")
    except KeyError:
        pass
    probe = subprocess.run([PYTHON, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    if probe.returncode != 0 or probe.stdout.strip() != str(sys.version_info[:2]):
        pytest.skip(f"no system Python {sys.version_info[:2]} to run this checkout as another uid")
    paths = [str(SRC), *site.getsitepackages()]
    if closed := [p for p in paths if not _open_to_others(Path(p))]:
        pytest.skip(f"{closed[0]} is in a folder other accounts cannot enter (e.g. a `mktemp -d` checkout)")
    script = f"import sys; sys.argv = ['kaeru', *{list(args)!r}]; from kaeru.cli.app import main; main()"
    return subprocess.run(
        [PYTHON, "-c", script],
        user=UID,
        group=UID,
        extra_groups=[],
        cwd=tmp,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(paths), **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _open_to_others(path: Path) -> bool:
    """Whether an account that is neither the owner nor in the group can reach `path` and read it:
    every folder on the way lets others through, and the last one lets them list it."""
    folders = [path, *path.parents]
    try:
        return all(f.stat().st_mode & 0o001 for f in folders) and bool(path.stat().st_mode & 0o004)
    except OSError:
        return False


@pytest.fixture
def tmp(tmp_path: Path) -> Iterator[Path]:
    """A folder the uid may write in (pytest's own are root's alone)."""
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"kaeru-no-home-{tmp_path.name}"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def test_the_default_vault_says_what_to_set_when_there_is_no_home(tmp: Path) -> None:
    for args in (("note", "-i", "x", "hello"), ("serve",)):
        done = _kaeru(tmp, *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert "no home directory for the default vault" in done.stderr and "KAERU_VAULT" in done.stderr
    assert list(tmp.iterdir()) == []  # nothing made in the working folder (no `~` folder)


def test_a_vault_given_by_flag_or_variable_needs_no_home(tmp: Path) -> None:
    by_flag = _kaeru(tmp, "--vault", str(tmp / "flagged"), "note", "-i", "x", "kept without a home")
    assert by_flag.returncode == 0, by_flag.stderr
    by_env = _kaeru(tmp, "note", "-i", "x", "kept too", env={"KAERU_VAULT": str(tmp / "env")})
    assert by_env.returncode == 0, by_env.stderr
    found = _kaeru(tmp, "--vault", str(tmp / "flagged"), "search", "-i", "x", "kept")
    assert found.returncode == 0 and "kept without a home" in found.stdout
    tilde = _kaeru(tmp, "note", "-i", "x", "hi", env={"KAERU_VAULT": "~/vault"})
    assert tilde.returncode == 2 and "(KAERU_VAULT) starts with ~" in tilde.stderr and "Traceback" not in tilde.stderr


def test_setup_asks_for_the_clients_file_when_there_is_no_home(tmp: Path) -> None:
    done = _kaeru(tmp, "--vault", str(tmp / "v"), "setup", "claude-code")
    assert done.returncode == 2 and "no home directory" in done.stderr and "--path" in done.stderr, done.stderr
    given = _kaeru(tmp, "--vault", str(tmp / "v"), "setup", "cursor", "--path", str(tmp / "mcp.json"), "--write")
    assert given.returncode == 0 and (tmp / "mcp.json").is_file(), given.stderr


def test_what_needs_no_vault_folder_runs_without_a_home(tmp: Path) -> None:
    """Review: the settings were refused before any command, so a `--help` and a PostgreSQL vault
    (which needs no folder) were refused too; a path starting with `~` ended in a traceback."""
    assert _kaeru(tmp, "note", "--help").returncode == 0
    made = _kaeru(tmp, "--vault", str(tmp / "a"), "note", "-i", "x", "a note")
    assert made.returncode == 0, made.stderr
    for args in (("export", "~/out.amg"), ("import", "~/in.amg"), ("backup", "~/b.sqlite3")):
        done = _kaeru(tmp, "--vault", str(tmp / "a"), *args)
        assert done.returncode != 0 and "Traceback" not in done.stderr, (args, done.stderr)
        assert "~/" in done.stderr and "no home directory" in done.stderr, (args, done.stderr)
    # With PostgreSQL the vault is the database: no home is needed (the URL is refused later, here:
    # nothing listens on port 1 — what matters is that it is not the missing home).
    pg = _kaeru(tmp, "note", "-i", "x", "hi", env={"KAERU_DATABASE_URL": "postgresql://u@127.0.0.1:1/db"})
    assert "no home directory" not in pg.stderr and "Traceback" not in pg.stderr, pg.stderr
