"""`kaeru serve --http --tls-cert FILE --tls-key FILE` (decision 180): a team's server reached over a
network sends its tokens and memories encrypted — the SDK's client over HTTPS, a plain-HTTP request
answered by nothing, a key that does not fit refused before anything listens, and `kaeru doctor`
warning when a non-loopback server would speak plain HTTP."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.cli.support import kaeru
from tests.cli.zygote_client import count_served_cpu, server_argv
from tests.wire.support import KAERU_SERVE, call_ok, free_port, stop, subprocess_env, wait_until

pytestmark = [
    pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test certificate"),
    pytest.mark.timeout(120),
]


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, PEM."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


def _answers(url: str, context: ssl.SSLContext) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2, context=context) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@pytest.mark.anyio
async def test_the_sdk_client_works_over_https_and_plain_http_gets_nothing(tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    trusted = ssl.create_default_context(cafile=str(cert))
    port = free_port()
    env = subprocess_env({"KAERU_VAULT": str(tmp_path / "vault")})
    log = tmp_path / "serve.log"
    options = ("--http", "--host", "127.0.0.1", "--port", str(port), "--tls-cert", str(cert), "--tls-key", str(key))
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            server_argv((*KAERU_SERVE, *options), env),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"https://127.0.0.1:{port}"
            wait_until(lambda: _answers(f"{base}/health", trusted), 30, "GET /health over HTTPS")
            assert f"at {base}/mcp" in log.read_text()
            async with (
                httpx2.AsyncClient(verify=trusted, timeout=httpx2.Timeout(30, read=60)) as http,
                Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
            ):
                await call_ok(client, "note", {"initiative": "team", "text": "the certificate rotates in March"})
                found: dict[str, Any] = await call_ok(
                    client, "search", {"text": "certificate", "initiatives": ["team"]}
                )
                assert [h["body"] for h in found["data"]["hits"]] == ["the certificate rotates in March"]
            with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5)
            # A client that does not trust the certificate is refused by TLS itself.
            assert not _answers(f"{base}/health", ssl.create_default_context())
        finally:
            stop(proc)
            count_served_cpu()


def test_a_key_that_does_not_fit_is_refused_before_anything_listens(tmp_path: Path) -> None:
    cert, _ = certificate(tmp_path)
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    wrong = kaeru(env, "serve", "--http", "--port", "0", "--tls-cert", str(cert), "--tls-key", str(cert))
    assert wrong.code == 2
    assert "cannot serve HTTPS" in wrong.stderr and "not a PEM certificate and its private key" in wrong.stderr
    missing = kaeru(
        env, "serve", "--http", "--port", "0", "--tls-cert", str(tmp_path / "none.pem"), "--tls-key", str(cert)
    )
    assert missing.code == 2 and "No such file" in missing.stderr
    alone = kaeru(env, "serve", "--tls-cert", str(cert), "--tls-key", str(cert))
    assert alone.code == 2 and "go with --http" in alone.stderr


def test_doctor_warns_when_a_network_server_would_speak_plain_http(tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    env = {"KAERU_VAULT": str(tmp_path / "vault"), "KAERU_HOST": "0.0.0.0", "KAERU_AUTH_TOKEN": "t0ken-for-doctor"}
    assert kaeru(env, "migrate").code == 0

    def http_check(**extra: str) -> dict[str, str]:
        checks = {c["name"]: c for c in kaeru(env, "doctor", as_json=True, **extra).json()["checks"]}
        return checks["http"]

    plain = http_check()
    assert plain["status"] == "warn" and "clear text" in plain["summary"]
    assert http_check(KAERU_TLS_CERT=str(cert), KAERU_TLS_KEY=str(key))["status"] == "ok"
    gone = http_check(KAERU_TLS_CERT=str(tmp_path / "gone.pem"), KAERU_TLS_KEY=str(key))
    assert gone["status"] == "fail" and "gone.pem" in gone["summary"]
