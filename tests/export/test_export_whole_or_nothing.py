"""An export leaves its target as it was or puts the whole new export there, and leaves no scraps.

- A markdown export over an earlier one that fails while its pages are put in place leaves the
  earlier export as it was: pages were moved in one by one, so a failure (or a Ctrl-C) half-way
  left new README, INDEX and LOG files over a mix of new and old pages (decision 166 said "the
  target is as it was").
- SIGTERM or SIGHUP ends an export as an error, removing its hidden scraps: they stayed beside the
  target (an archive's `.partial` file; a markdown export's hidden folder of private pages).
- A signal that comes while the new pages are put in place is acted on once they all are, and said
  so: the stop was reported as "nothing was written, and an earlier export there is as it was"
  over a folder holding the new export.
- A failed swap whose pages of the earlier export cannot all be moved back keeps them, and says
  where: the folder they were moved aside to was deleted, with the person's previous pages.
- Scraps a killed export left are removed by the next export of that target.
- An amg export's records wait beside its target, not in the system's temporary folder (a RAM disk
  often): a full temporary folder failed an export to a disk with room, naming the target's disk;
  to standard output, where there is no target, the error names the temporary folder.

Both backends (the signal and scrap tests on POSIX only)."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.outcomes import MutationOutcome
from tests.backends import VaultSpec
from tests.cli.support import kaeru_env
from tests.lifecycle.test_disk_full import _fill, _mounted

posix_only = pytest.mark.skipif(os.name != "posix", reason="signals and scraps of dead processes: POSIX")


def _export(service: Service, vault: VaultSpec, root: Path, path: str, fmt: str, **kw: Any) -> MutationOutcome:
    args = {"action": "export", "path": path, "format": fmt}
    return archive.export(service.store, replace(vault.settings(), export_root=root), parse("archive", args), **kw)


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `folder`, hidden ones too."""
    return {
        p.relative_to(folder).as_posix(): (None if p.is_dir() else p.read_bytes()) for p in sorted(folder.rglob("*"))
    }


def _notes(service: Service, *names: str) -> None:
    run = build_server(service).registry.run
    for name in names:
        done = run("note", {"initiative": "t", "name": name, "text": f"a note named {name}"})
        assert done["state"] == "applied", done


def test_a_markdown_export_that_fails_while_put_in_place_leaves_the_earlier_one(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    _notes(service, "alpha", "beta")
    root = tmp_path / "exports"
    assert _export(service, vault, root, "notes", "markdown").state == "applied"
    folder = root / "notes"
    [page] = folder.glob("*/*/alpha.md")
    (folder / "my own note.md").write_text("the person's\n")
    # A folder where the next export's new page goes: moving that page in fails, after the export's
    # top files (README, INDEX, LOG) and other pages were moved in.
    (page.parent / "gamma.md").mkdir()
    before = _tree(folder)
    _notes(service, "gamma")

    with pytest.raises(KaeruError) as refused:
        _export(service, vault, root, "notes", "markdown")
    assert _tree(folder) == before
    assert "gamma.md' is a folder where a page of the export goes" in refused.value.message, refused.value.message


@posix_only
@pytest.mark.parametrize(("fmt", "path"), [("amg", "a.amg.gz"), ("markdown", "notes")])
def test_sigterm_ends_an_export_without_scraps_and_leaves_the_earlier_one(
    service: Service, vault: VaultSpec, tmp_path: Path, fmt: str, path: str
) -> None:
    _notes(service, "alpha", "beta")
    root = tmp_path / "exports"
    assert _export(service, vault, root, path, fmt).state == "applied"
    before = _tree(root)
    _notes(service, "gamma")
    # In a process of its own, which SIGTERM ended before (a test worker must not be).
    script = (
        "import os, signal, sys\n"
        "from dataclasses import replace\n"
        "from pathlib import Path\n"
        "from kaeru.api.requests import parse\n"
        "from kaeru.config import Settings\n"
        "from kaeru.errors import KaeruError\n"
        "from kaeru.export import archive\n"
        "from kaeru.storage.factory import open_store\n"
        "settings = replace(Settings.from_env(), export_root=Path(sys.argv[1]))\n"
        "store = open_store(settings)\n"
        "def progress(stage, n):\n"
        "    if stage == 'edges':\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "request = parse('archive', {'action': 'export', 'path': sys.argv[2], 'format': sys.argv[3]})\n"
        "try:\n"
        "    archive.export(store, settings, request, progress)\n"
        "except KaeruError as error:\n"
        "    print(error)\n"
        "    sys.exit(3)\n"
    )
    env = kaeru_env(vault, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run(
        [sys.executable, "-c", script, str(root), path, fmt], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    assert "stopped by signal SIGTERM" in done.stdout and "as it was" in done.stdout
    assert _tree(root) == before


@posix_only
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_while_the_pages_are_put_in_place_is_acted_on_once_they_all_are(
    service: Service, vault: VaultSpec, tmp_path: Path, signame: str
) -> None:
    _notes(service, "alpha", "beta")
    root = tmp_path / "exports"
    assert _export(service, vault, root, "notes", "markdown").state == "applied"
    _notes(service, "gamma")
    # The signal is sent from inside the rename that puts the first new page in place.
    script = (
        "import os, signal, sys\n"
        "from dataclasses import replace\n"
        "from pathlib import Path\n"
        "from kaeru.api.requests import parse\n"
        "from kaeru.config import Settings\n"
        "from kaeru.errors import KaeruError\n"
        "from kaeru.export import archive\n"
        "from kaeru.storage.factory import open_store\n"
        "settings = replace(Settings.from_env(), export_root=Path(sys.argv[1]))\n"
        "store = open_store(settings)\n"
        "folder = Path(sys.argv[1]) / 'notes'\n"
        "real = os.replace\n"
        "def replacing(src, dst):\n"
        "    src, dst = Path(src).relative_to(folder).parts, Path(dst).relative_to(folder).parts\n"
        "    if src[0].startswith('.') and not dst[0].startswith('.') and not sent:\n"
        "        sent.append(1)\n"
        "        os.kill(os.getpid(), getattr(signal, sys.argv[2]))\n"
        "    return real(folder.joinpath(*src), folder.joinpath(*dst))\n"
        "sent = []\n"
        "os.replace = replacing\n"
        "request = parse('archive', {'action': 'export', 'path': 'notes', 'format': 'markdown'})\n"
        "try:\n"
        "    archive.export(store, settings, request)\n"
        "except KaeruError as error:\n"
        "    print(error)\n"
        "    sys.exit(3)\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(4)\n"
    )
    env = kaeru_env(vault, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run(
        [sys.executable, "-c", script, str(root), signame], env=env, capture_output=True, text=True, check=False
    )
    if signame == "SIGTERM":
        assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
        assert "stopped by signal SIGTERM" in done.stdout, done.stdout
        assert "holds the new export, whole" in done.stdout and "as it was" not in done.stdout, done.stdout
    else:
        assert done.returncode == 4, (done.returncode, done.stdout, done.stderr)
    # The whole new export, as an export the signal did not stop writes it, and no scraps.
    after = _tree(root)
    assert _export(service, vault, tmp_path / "fresh", "notes", "markdown").state == "applied"
    fresh = _tree(tmp_path / "fresh")
    assert after.keys() == fresh.keys() and not [p for p in after if "/." in p or p.startswith(".")]
    assert {p for p in after if p.endswith("/gamma.md")}


def test_pages_of_the_earlier_export_that_cannot_be_moved_back_are_kept_and_said(
    service: Service, vault: VaultSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _notes(service, "alpha", "beta")
    root = tmp_path / "exports"
    assert _export(service, vault, root, "notes", "markdown").state == "applied"
    folder = root / "notes"
    [page] = folder.glob("*/*/alpha.md")
    earlier = (folder / "README.md").read_bytes()
    (page.parent / "gamma.md").mkdir()  # the swap fails at the new page `gamma`, after the top files were put in place
    _notes(service, "gamma")
    # The disk refuses every page moved back from the folder the earlier pages were moved aside to.
    real = os.replace
    aside: set[str] = set()

    def replacing(src: Any, dst: Any) -> None:
        try:
            here, there = Path(src).relative_to(folder).parts, Path(dst).relative_to(folder).parts
        except ValueError:
            return real(src, dst)
        if here[0] in aside and not there[0].startswith("."):
            raise OSError(errno.EIO, os.strerror(errno.EIO), str(src))
        if there[0].startswith(".") and not here[0].startswith("."):
            aside.add(there[0])
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replacing)
    with pytest.raises(KaeruError) as failed:
        _export(service, vault, root, "notes", "markdown")
    monkeypatch.undo()

    message = failed.value.message
    assert "could not be moved back" in message and "as it was" not in message, message
    kept = [p for p in folder.iterdir() if p.name.startswith(".") and str(p) in message]
    assert len(kept) == 1, (message, list(folder.iterdir()))
    assert (kept[0] / "README.md").read_bytes() == earlier
    # Kept past the time a scrap of a dead export is removed after: it is not one.
    old = 1_000_000_000
    os.utime(kept[0], (old, old))
    (page.parent / "gamma.md").rmdir()
    assert _export(service, vault, root, "notes", "markdown").state == "applied"
    assert kept[0].exists()


def _dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


@posix_only
def test_an_export_removes_the_scraps_a_killed_export_of_its_target_left(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    _notes(service, "alpha")
    root = tmp_path / "exports"
    (root / "notes").mkdir(parents=True)
    pid = _dead_pid()
    file_scrap = root / f".a.amg.{pid}-0123abcd.partial"
    file_scrap.write_bytes(b"half an archive")
    folder_scrap = root / "notes" / f".export.{pid}-0123abcd.partial"
    (folder_scrap / "operational" / "episode").mkdir(parents=True)
    (folder_scrap / "operational" / "episode" / "secret.md").write_text("a private page\n")
    old = 1_000_000_000  # long before any export running now
    for scrap in (file_scrap, folder_scrap):
        os.utime(scrap, (old, old))

    assert _export(service, vault, root, "a.amg", "amg").state == "applied"
    assert _export(service, vault, root, "notes", "markdown").state == "applied"
    assert not file_scrap.exists() and not folder_scrap.exists()


@pytest.fixture
def full_temporary_folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The system's temporary folder on a small file system with no room left."""
    for place in _mounted(2**20):
        _fill(place)
        monkeypatch.setattr(tempfile, "tempdir", str(place))
        yield place


def test_an_amg_export_needs_no_room_in_the_temporary_folder(
    service: Service, vault: VaultSpec, tmp_path: Path, full_temporary_folder: Path
) -> None:
    _notes(service, *(f"note {i}" for i in range(30)))
    root = tmp_path / "exports"
    done = _export(service, vault, root, "a.amg.gz", "amg")
    assert done.state == "applied" and done.artifacts[0]["nodes"] == 30
    assert [p.name for p in root.iterdir()] == ["a.amg.gz"]

    with pytest.raises(KaeruError) as refused:
        _export(service, vault, root, "-", "amg", stream=io.BytesIO())
    assert "No space left on device" in refused.value.message
    assert str(full_temporary_folder) in refused.value.message
