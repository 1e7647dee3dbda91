"""The doctor's check record, and its checks of the settings rather than the vault: whether the
semantic extra is usable, whether `kaeru serve --http` would expose the vault, and the settings kaeru
could not use at all (service/doctor.py runs them with the vault's)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from kaeru.config import SettingError, Settings
from kaeru.errors import KaeruError
from kaeru.service.embedding import EXTRA_INSTALL

OK, WARN, FAIL, INFO, SKIP = "ok", "warn", "fail", "info", "skip"


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    summary: str
    fix: str | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def unusable_settings_check(problems: Sequence[SettingError]) -> Check:
    """One failed check naming every variable that holds a value kaeru cannot use (the doctor's other checks
    ran as if each were unset, which is what every other command refuses to do)."""
    names = ", ".join(name for problem in problems for name in problem.names)
    return Check(
        "settings",
        FAIL,
        "; ".join(str(problem) for problem in problems),
        f"correct or unset {names}: every other command refuses to start until then (the checks below ran "
        "without them)",
    )


def semantic_check(settings: Settings, installed: bool, load: Callable[[], str] | None) -> tuple[Check, str | None]:
    """The extra's check, and the model's id when it is on and loads. Its packages can be there and
    fail to import (a broken torch): then every write's vector and every recall's channel fails, so
    with KAERU_SEMANTIC=1 the model is loaded here (a few seconds), not only looked for."""
    state = "on (KAERU_SEMANTIC=1)" if settings.semantic else "off"
    if installed and settings.semantic and load is not None:
        try:
            model = load()
        except Exception as exc:
            why = exc.message if isinstance(exc, KaeruError) else f"{type(exc).__name__}: {exc}"
            return Check(
                "semantic", FAIL, f"KAERU_SEMANTIC=1, but {why}", EXTRA_INSTALL + " (or unset KAERU_SEMANTIC)"
            ), None
        return Check(
            "semantic", OK, f"the [semantic] extra is installed and its model {model} loads; recall {state}"
        ), model
    if installed:
        return Check(
            "semantic", OK if settings.semantic else INFO, f"the [semantic] extra is installed; recall {state}"
        ), None
    if settings.semantic:
        return Check(
            "semantic",
            FAIL,
            "KAERU_SEMANTIC=1 but the [semantic] extra is not installed: recall stays lexical",
            EXTRA_INSTALL + " (or unset KAERU_SEMANTIC)",
        ), None
    return Check("semantic", INFO, "the [semantic] extra is not installed; recall is lexical (optional)"), None


def http_check(settings: Settings, is_loopback: Callable[[str], bool], vault_tokens: bool | None) -> Check:
    """The HTTP settings as `kaeru serve --http` judges them: a non-loopback host needs a token —
    `KAERU_AUTH_TOKEN` or one in the vault — and should have TLS. `vault_tokens` None: the vault's
    tokens could not be read (the `tokens` check fails), which is no sign that it holds none."""
    host, token, cert = settings.http_host, settings.auth_token, settings.tls_cert
    held = {True: "tokens in the vault", False: "no token in the vault", None: "the vault's tokens could not be read"}
    where = (
        f"KAERU_HOST={host}, port {settings.http_port}, KAERU_AUTH_TOKEN {'set' if token else 'not set'}, "
        f"{held[vault_tokens]}, TLS {'on' if cert else 'off'}"
    )
    if not is_loopback(host) and not token and vault_tokens is False:
        return Check(
            "http",
            FAIL,
            f"{where}: `kaeru serve --http` would expose the vault beyond this machine without authentication",
            "set KAERU_AUTH_TOKEN or add a token (`kaeru token add NAME`; clients send `Authorization: Bearer "
            "<token>`), or KAERU_HOST=127.0.0.1",
        )
    missing = [str(p) for p in (cert, settings.tls_key) if p is not None and not p.is_file()]
    if missing:
        return Check(
            "http",
            FAIL,
            f"{where}: no such file: {', '.join(missing)}",
            "point KAERU_TLS_CERT and KAERU_TLS_KEY at PEM files",
        )
    if not is_loopback(host) and cert is None:
        # Decision 180: a bearer token sent over plain HTTP can be read by anyone on the path.
        return Check(
            "http",
            WARN,
            f"{where}: tokens and memories would cross the network in clear text",
            "serve HTTPS (KAERU_TLS_CERT and KAERU_TLS_KEY), or bind 127.0.0.1 behind a reverse proxy that does",
        )
    return Check("http", OK, where)
