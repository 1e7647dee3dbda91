"""A signal held while a markdown export's pages are put in place is acted on once they all are; what
the export then says, and what it finishes, fit a folder holding the new export.

- A Ctrl-C there: `kaeru export` said "stopped by Ctrl-C (SIGINT) before it ended" of a folder that
  held the new export, whole. It says the new export was put in place; exit 130 still.
- A SIGTERM there: the earlier export's pages were removed with the swap, but the folders they left
  empty stayed and which pages went was not said (the `pages_removed` issue of an export that ended).
  The stop removes those folders and names the pages.

POSIX only (signals); both backends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.cli.support import kaeru_env
from tests.export.test_export_whole_or_nothing import _export, _tree, posix_only

#: Python that makes the first rename moving a new page of the folder `FOLDER` in place (from the
#: hidden folder its pages are written to) send `SIGNAL` to the process first, as a Ctrl-C or a
#: `kill` at that moment would (the helper of `test_export_whole_or_nothing`'s swap test).
_SIGNAL_IN_THE_SWAP = (
    "import os, signal, sys\n"
    "from pathlib import Path\n"
    "folder = Path(FOLDER)\n"
    "real = os.replace\n"
    "sent = []\n"
    "def replacing(src, dst):\n"
    "    try:\n"
    "        here, there = Path(src).relative_to(folder).parts, Path(dst).relative_to(folder).parts\n"
    "    except ValueError:\n"
    "        return real(src, dst)\n"
    "    if here[0].startswith('.') and not there[0].startswith('.') and not sent:\n"
    "        sent.append(1)\n"
    "        os.kill(os.getpid(), getattr(signal, SIGNAL))\n"
    "    return real(src, dst)\n"
    "os.replace = replacing\n"
)


def _run_signalled(vault: VaultSpec, folder: Path, signame: str, body: str) -> subprocess.CompletedProcess[str]:
    """`body` run in a process of its own (a test worker must not get the signal), its export of
    `folder` sent `signame` while the new pages are put in place."""
    script = f"FOLDER = {str(folder)!r}\nSIGNAL = {signame!r}\n" + _SIGNAL_IN_THE_SWAP + body
    env = kaeru_env(vault, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False)


def _earlier_export_with_a_page_to_go(service: Service, vault: VaultSpec, root: Path) -> str:
    """An export in `root/notes` holding a page, alone in its folder, of a node forgotten since (the
    next export removes it), and a node noted since; that page's path in the folder."""
    run = build_server(service).registry.run
    for name, kind in (("alpha", "observation"), ("beta", "idea")):
        done = run("note", {"initiative": "t", "kind": kind, "name": name, "text": f"a note named {name}"})
        assert done["state"] == "applied", done
    beta = done["data"]["primary"]["id"]
    assert _export(service, vault, root, "notes", "markdown").state == "applied"
    [page] = (root / "notes").glob("*/*/beta.md")
    assert [p.name for p in page.parent.iterdir()] == ["beta.md"]  # its folder empties when it goes
    assert run("forget", {"initiative": "t", "node": beta, "reason": "wrong"})["state"] == "applied"
    assert run("note", {"initiative": "t", "name": "gamma", "text": "a note named gamma"})["state"] == "applied"
    return page.relative_to(root / "notes").as_posix()


def _whole_new_export(service: Service, vault: VaultSpec, tmp_path: Path, root: Path) -> None:
    """`root` holds what an export the signal did not stop writes there, and no scraps or empty folders."""
    after = _tree(root)
    assert _export(service, vault, tmp_path / "fresh", "notes", "markdown").state == "applied"
    assert after.keys() == _tree(tmp_path / "fresh").keys()


@posix_only
def test_a_sigterm_in_the_swap_removes_the_emptied_folders_and_names_the_removed_pages(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    root = tmp_path / "exports"
    gone = _earlier_export_with_a_page_to_go(service, vault, root)
    body = (
        "from dataclasses import replace\n"
        "from kaeru.api.requests import parse\n"
        "from kaeru.config import Settings\n"
        "from kaeru.errors import KaeruError\n"
        "from kaeru.export import archive\n"
        "from kaeru.storage.factory import open_store\n"
        "settings = replace(Settings.from_env(), export_root=folder.parent)\n"
        "request = parse('archive', {'action': 'export', 'path': 'notes', 'format': 'markdown'})\n"
        "try:\n"
        "    archive.export(open_store(settings), settings, request)\n"
        "except KaeruError as error:\n"
        "    print(error)\n"
        "    sys.exit(3)\n"
    )
    done = _run_signalled(vault, root / "notes", "SIGTERM", body)

    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    said = done.stdout
    assert "stopped by signal SIGTERM" in said and "holds the new export, whole" in said, said
    assert "removed 1 page(s)" in said and gone in said, said
    assert not (root / "notes" / gone).parent.exists()
    _whole_new_export(service, vault, tmp_path, root)


@posix_only
def test_a_ctrl_c_in_the_swap_is_said_as_one_after_the_new_export_was_put_in_place(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    root = tmp_path / "exports"
    gone = _earlier_export_with_a_page_to_go(service, vault, root)
    # `kaeru export` of this checkout's code (the console script runs the installed one).
    body = "\n".join(
        (
            "from kaeru.cli.app import main",
            "sys.argv = ['kaeru', 'export', '--format', 'markdown', str(folder)]",
            "main()",
        )
    )
    done = _run_signalled(vault, root / "notes", "SIGINT", body)

    assert done.returncode == 130, (done.returncode, done.stdout, done.stderr)
    said = done.stderr
    assert "Traceback" not in said and said.count("\n") == 1, said
    assert said.startswith("error: interrupted: stopped by Ctrl-C (SIGINT) after the new export was put in place"), said
    assert "the folder holds it, whole" in said and "before it ended" not in said, said
    assert "removed 1 page(s)" in said and gone in said, said
    assert not (root / "notes" / gone).parent.exists()
    _whole_new_export(service, vault, tmp_path, root)
