"""Tab completion in a terminal (decision 183): click's shell completion for commands and options,
and the names of the vault's own initiatives for every `--initiative`, read without creating or
changing anything — through the same environment protocol the shell script `kaeru` prints uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.backends import VaultSpec
from tests.cli.support import kaeru_env, write_notes


def completions(env: dict[str, str], words: str) -> list[str]:
    """What bash would be offered for the last of `words` (`COMP_WORDS`, `COMP_CWORD`)."""
    parts = words.split(" ")
    done = subprocess.run(
        [sys.executable, "-m", "kaeru"],
        env={
            **kaeru_env(env),
            "_KAERU_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(parts) - 1),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [line.split(",", 1)[1] for line in done.stdout.splitlines() if line]


def test_the_shell_script_is_printed_for_bash_zsh_and_fish() -> None:
    for shell in ("bash", "zsh", "fish"):
        done = subprocess.run(
            [sys.executable, "-m", "kaeru"],
            env={**kaeru_env({}), "_KAERU_COMPLETE": f"{shell}_source"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0 and "_KAERU_COMPLETE" in done.stdout, shell


def test_initiative_names_complete_from_the_vault(vault: VaultSpec) -> None:
    for name in ("web", "website", "docs"):  # written in process: the completions are the subject
        write_notes(vault, name, f"a note in {name}")
    env = vault.env()
    assert completions(env, "kaeru ba") == ["backup"]
    assert completions(env, "kaeru context -i we") == ["web", "website"]
    assert completions(env, "kaeru search -i web -i d") == ["docs"]
    assert completions(env, "kaeru note --initiative ") == ["docs", "web", "website"]
    assert completions(env, "kaeru recall -i zz") == []


def test_no_vault_completes_nothing_and_makes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    assert completions({"KAERU_VAULT": str(missing)}, "kaeru context -i w") == []
    assert completions({}, f"kaeru --vault {missing} context -i w") == []
    assert not missing.exists()
