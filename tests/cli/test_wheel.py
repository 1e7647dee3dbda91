"""Installing as a tool (issue 19): the built wheel carries what the server reads at run time, and,
installed into a fresh virtual environment, gives a `kaeru` that answers `--help` and `initialize`
over stdio, with numpy beside it for the in-memory rankings. Builds with `python -m build` (dev extra); installs the dependencies with pip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "kaeru"


def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=540, check=False, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)])
    [built] = out.glob("kaeru_memory-*.whl")
    return built


def test_the_wheel_carries_migrations_rules_and_schemas(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    needed = [
        *PACKAGE.glob("storage/*/migrations/*.sql"),
        *PACKAGE.glob("storage/*/migrations/*.py"),  # the migrations that are programs (backfills)
        *PACKAGE.rglob("*.toml"),  # data read at run time: the secret rules, the refusals' meanings
        *PACKAGE.glob("api/schemas/*.json"),
        *PACKAGE.glob("web/static/*"),  # the viewer's assets (issue 19): no CDN
    ]
    assert len(needed) > 10
    missing = [str(p.relative_to(PACKAGE.parent)) for p in needed if str(p.relative_to(PACKAGE.parent)) not in names]
    assert not missing, missing
    assert not [n for n in names if n.startswith(("tests/", "bench/"))]


def test_the_wheel_carries_the_licence(wheel: Path) -> None:
    """An MIT package ships its copyright and permission notice (in the wheel's metadata folder)."""
    with zipfile.ZipFile(wheel) as built:
        licences = [n for n in built.namelist() if ".dist-info/" in n and n.rsplit("/", 1)[-1] == "LICENSE"]
        assert licences, "no LICENSE in the wheel's .dist-info"
        text = built.read(licences[0]).decode()
    assert text.startswith("MIT License") and "Permission is hereby granted" in text


def test_installed_into_a_fresh_venv_kaeru_helps_and_serves(wheel: Path, tmp_path: Path) -> None:
    home = tmp_path / "venv"
    # A fresh environment without pip of its own (ensurepip took seconds): this process's pip installs
    # into it with `--python`, resolving the wheel's dependencies as a user's pip would. Without byte
    # compiling (`--no-compile`, a third of the install): Python compiles what it imports, and the
    # subject is what the wheel carries and declares, not pip's .pyc files.
    venv.create(home, with_pip=False)
    bindir = home / ("Scripts" if os.name == "nt" else "bin")
    pip = [sys.executable, "-m", "pip", "--python", str(bindir / "python"), "install", "--quiet"]
    run([*pip, "--disable-pip-version-check", "--no-compile", str(wheel)])
    kaeru = bindir / "kaeru"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAERU_", "PYTHON"))}
    env["KAERU_VAULT"] = str(tmp_path / "vault")
    helped = run([str(kaeru), "--help"], env=env, cwd=tmp_path)
    for command in ("serve", "setup", "import-from", "ui"):
        assert command in helped.stdout
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "wheel-test", "version": "1"},
        },
    }
    with subprocess.Popen(
        [str(kaeru), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
        text=True,
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(initialize) + "\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        server.stdin.close()
        assert server.wait(60) == 0
    result = answer["result"]
    assert result["serverInfo"]["name"] == "kaeru-memory"
    assert {"tools", "prompts", "resources", "completions"} <= set(result["capabilities"])
    assert len(result["instructions"]) <= 2048

    # Over HTTP it serves the viewer at /ui, its stylesheet from the installed package.
    from tests.wire.support import http_server

    with http_server(env, tmp_path, serve=(str(kaeru), "serve")) as served:
        for path, expected in (("/ui/", "Initiatives"), ("/ui/static/style.css", "--accent")):
            with urllib.request.urlopen(served.base + path, timeout=30) as page:
                assert page.status == 200 and expected in page.read().decode()

    # A default install ranks broad searches and common-word recall from in-memory copies, which
    # need numpy (decision 164): without it every such call fell back to SQL, several times slower.
    probe = "from kaeru.storage.sql.copies import numpy_module; print(numpy_module() is not None)"
    ranked = run([str(bindir / "python"), "-c", probe], env=env, cwd=tmp_path)
    assert ranked.stdout.strip() == "True", "the default install lacks numpy: broad searches rank in SQL"
