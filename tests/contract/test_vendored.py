"""The repository stands alone: the contract and the benchmark data are vendored, unmodified.

A clone with nothing beside it must run the whole suite, so no test or benchmark may reach for the
`shared` folder beside the repository, and the vendored files must be the originals (their SHA-256
values are pinned in the README next to them).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "contract"
LOCOMO = ROOT / "bench" / "data" / "locomo"

#: SHA-256 over the 64 examples (sorted by name: the name, a NUL, the bytes, a NUL).
EXAMPLES_SHA256 = "5b7626577de38b3fa2244f275eba3ac38c1e50f88fb6bd36d4ac99ca1d222786"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_vendored_contract_files_are_the_originals() -> None:
    pinned = dict(re.findall(r"\| `([^`]+)` \| `([0-9a-f]{64})` \|", (CONTRACT / "README.md").read_text()))
    assert len(pinned) == 9
    for name, digest in pinned.items():
        assert _sha256(CONTRACT / name) == digest, f"{name} differs from the published original"
    assert {p.name for p in (CONTRACT / "published").glob("*.json")} | {"README.md", "validate.py"} == {
        Path(name).name for name in pinned
    }


def test_vendored_contract_examples_are_the_64_originals() -> None:
    examples = sorted((CONTRACT / "published" / "examples").glob("*.json"))
    assert len(examples) == 64
    digest = hashlib.sha256()
    for path in examples:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    assert digest.hexdigest() == EXAMPLES_SHA256


def test_vendored_locomo_data_matches_its_readme() -> None:
    readme = (LOCOMO / "README.md").read_text()
    for name in ("locomo10.json", "errors.json"):
        assert _sha256(LOCOMO / name) in readme, f"{name} does not match the SHA-256 in its README"
    assert "CC BY-NC 4.0" in readme and "CC BY-NC 4.0" in (LOCOMO.parent / "README.md").read_text()


def test_nothing_reads_the_shared_folder_beside_the_repository() -> None:
    """The `shared` folder beside the repository exists on the machine this was built on, not in a clone.
    (The pattern is assembled so that this guard itself holds no path to it.)"""
    parent = r"\.\." + "/"
    reach = re.compile(
        r"""/\s*["']shared["']|["']shared["']\s*/|""" + parent + r"""shared|shared/(contract|bench-data)"""
    )
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("tests", "bench", "scripts", "src")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if reach.search(line)
    ]
    assert not offenders, offenders


def test_the_vendored_validate_script_passes_on_its_own_folder() -> None:
    """The contract's own checker (`validate.py --formats`) accepts the vendored copy as it stands."""
    run = subprocess.run(
        [sys.executable, str(CONTRACT / "published" / "validate.py"), "--formats"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert "7 schemas, 21 valid + 43 invalid examples, 0 failure(s)" in run.stdout
