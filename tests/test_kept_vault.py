"""`bench.kept.kept_vault`: a benchmark vault is built once, and a failed build leaves nothing that a
later run would take for a vault and measure."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.kept import kept_vault


def test_a_vault_is_built_once_and_a_failed_build_leaves_nothing(tmp_path: Path) -> None:
    builds: list[Path] = []

    def failing(folder: Path) -> None:
        (folder / "half").write_text("written before the failure")
        raise RuntimeError("the build stopped half-way")

    with pytest.raises(RuntimeError), kept_vault(tmp_path, "v", failing):
        pass
    assert list(tmp_path.iterdir()) == []

    def building(folder: Path) -> None:
        builds.append(folder)
        (folder / "whole").write_text("built")

    for _ in range(2):
        with kept_vault(tmp_path, "v", building) as vault:
            assert vault == tmp_path / "v" and (vault / "whole").read_text() == "built"
    assert len(builds) == 1 and builds[0] != tmp_path / "v"
    with kept_vault(None, "w", building) as scratch:
        assert (scratch / "whole").exists()
    assert not scratch.exists()
