"""`kaeru ui` (issue 19): serves the viewer on 127.0.0.1, prints its address and a sign-in link made
for the run; without that link (or a token) the viewer shows nothing. Both backends, in Chromium."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.wire.support import stop, subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def test_kaeru_ui_prints_its_address_and_a_sign_in_link(vault: VaultSpec, page: Any, tmp_path: Path) -> None:
    store = open_store(vault.settings())
    try:
        made = build_server(Service(store, vault.settings())).registry.run(
            "note", {"initiative": "garden", "name": "Tomatoes", "text": "Water the tomatoes at dawn."}
        )
        assert made["state"] == "applied", made
    finally:
        store.close()
    log = tmp_path / "ui.err"
    with log.open("w") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kaeru", "ui"],
            env=subprocess_env(vault.env()),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        try:
            assert proc.stdout is not None
            first, second = proc.stdout.readline(), proc.stdout.readline()
            assert first.startswith("kaeru viewer at http://127.0.0.1:"), (first, log.read_text())
            address = first.split(" at ", 1)[1].strip()
            link = second.split(": ", 1)[1].strip()
            assert address.endswith("/ui/") and link.startswith(address.removesuffix("/") + "/login?token=")

            response = page.goto(address)
            assert response.status == 401 and "Tomatoes" not in page.content()
            page.goto(link)
            page.wait_for_url(address)
            assert page.inner_text("main h1") == "Initiatives"
            assert page.locator("tr.initiative").evaluate_all("r => r.map(e => e.dataset.name)") == ["garden"]
            page.click("tr.initiative a")
            page.wait_for_url("**/ui/graph?i=garden")
            page.wait_for_load_state()  # the click waits for the navigation to commit, not for the page
            assert "Tomatoes" in page.locator("svg#graph g.node text").all_text_contents()
        finally:
            stop(proc)
            proc.wait(30)
    assert proc.returncode == 0, log.read_text()  # SIGTERM (`stop`) closes the store and exits 0
    assert "Traceback" not in log.read_text()
