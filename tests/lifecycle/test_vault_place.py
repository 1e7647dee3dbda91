"""A vault where SQLite's log cannot keep it whole — a network file system, a sync client's folder —
is said by `kaeru doctor` and at `kaeru serve`'s start, with what to do instead (decision 182)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kaeru.storage.sqlite.place import NETWORK_TYPES, file_system_of, sync_folder_of
from tests.cli.support import kaeru

#: Lines as the kernel writes them (proc(5), "/proc/pid/mountinfo"): a local root, a home folder
#: mounted over NFS, a local disk mounted inside it, and a mount point with a space (octal `\040`).
MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:44 / /home rw,relatime shared:20 - nfs4 fileserver:/export/home rw,vers=4.2
41 40 8:17 / /home/ada/scratch rw,relatime shared:21 - ext4 /dev/sdb1 rw
42 22 0:45 / /mnt/team\\040share rw,relatime shared:22 - cifs //nas/team rw
"""


def test_the_file_system_is_read_from_the_longest_mount_point_holding_the_folder() -> None:
    assert file_system_of(Path("/home/ada/.local/share/kaeru"), MOUNTINFO) == "nfs4"
    assert file_system_of(Path("/home/ada/scratch/kaeru"), MOUNTINFO) == "ext4"
    assert file_system_of(Path("/home"), MOUNTINFO) == "nfs4"
    assert file_system_of(Path("/homestead/kaeru"), MOUNTINFO) == "ext4"  # a prefix of a name is not a parent
    assert file_system_of(Path("/mnt/team share/kaeru"), MOUNTINFO) == "cifs"
    assert {"nfs4", "cifs"} <= NETWORK_TYPES and "ext4" not in NETWORK_TYPES


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0, reason="mounts a tmpfs (root, Linux)")
def test_this_machines_own_mount_table_is_read_as_the_kernel_writes_it(tmp_path: Path) -> None:
    point = tmp_path / "a mount point"
    point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(point)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        table = Path("/proc/self/mountinfo").read_text()
        assert file_system_of(point.resolve() / "kaeru", table) == "tmpfs"
    finally:
        subprocess.run(["umount", str(point)], check=True)


def test_sync_folders_are_known_by_their_names() -> None:
    assert sync_folder_of(Path("/Users/ada/Dropbox/kaeru")) == "Dropbox"
    assert sync_folder_of(Path("/Users/ada/OneDrive - Contoso/kaeru")) == "OneDrive - Contoso"
    assert sync_folder_of(Path("/Users/ada/Library/Mobile Documents/com~apple~CloudDocs/kaeru")) == "Mobile Documents"
    assert sync_folder_of(Path("/Users/ada/Dropbox (Team)/kaeru")) == "Dropbox (Team)"
    assert sync_folder_of(Path("/Users/ada/Library/CloudStorage/OneDrive-Personal/kaeru")) == "CloudStorage"
    assert sync_folder_of(Path("/Volumes/x/GoogleDrive-ada@example.com/kaeru")) == "GoogleDrive-ada@example.com"
    assert sync_folder_of(Path("/home/ada/Dropboxes/kaeru")) is None
    assert sync_folder_of(Path("/home/ada/.local/share/kaeru")) is None


def test_doctor_and_serve_say_that_a_synced_vault_will_be_damaged(tmp_path: Path) -> None:
    local = {"KAERU_VAULT": str(tmp_path / "local")}
    synced = {"KAERU_VAULT": str(tmp_path / "Dropbox" / "kaeru")}
    for env in (local, synced):
        assert kaeru(env, "note", "--initiative", "web", "the vault moves between laptops").code == 0

    def place(env: dict[str, str]) -> dict[str, str]:
        return {c["name"]: c for c in kaeru(env, "doctor", as_json=True).json()["checks"]}["place"]

    assert place(local)["status"] == "ok"
    found = place(synced)
    assert found["status"] == "warn" and "'Dropbox'" in found["summary"]
    assert "PostgreSQL" in found["fix"] and "kaeru backup" in found["fix"]

    # `kaeru serve` says it on stderr (a client's log), and serves all the same.
    served = subprocess.run(
        [sys.executable, "-m", "kaeru", "serve"],
        input=b"",
        capture_output=True,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("KAERU_")}, **synced},
        timeout=60,
        check=False,
    )
    assert served.returncode == 0 and served.stdout == b""
    assert b"warning: the vault folder" in served.stderr and b"'Dropbox'" in served.stderr


def test_a_link_named_like_a_sync_folder_and_a_link_into_one_are_both_seen(tmp_path: Path) -> None:
    from kaeru.storage.sqlite.place import shared_place

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "Dropbox").symlink_to(tmp_path / "elsewhere")  # ~/Dropbox kept on another disk
    assert shared_place(tmp_path / "Dropbox" / "kaeru") is not None
    (tmp_path / "OneDrive - Contoso").mkdir()
    (tmp_path / "vault-link").symlink_to(tmp_path / "OneDrive - Contoso")
    assert shared_place(tmp_path / "vault-link" / "kaeru") is not None
    assert shared_place(tmp_path / "elsewhere" / "kaeru") is None
