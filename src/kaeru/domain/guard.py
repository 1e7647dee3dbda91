"""The secret guard: deterministic rules that spot credentials in text before it is stored.

Rules follow kaeru's guard (API keys by prefix, private key blocks, `KEY=value` secrets) and extend
it to tags, which kaeru did not scan. Matches are reported truncated so the secret is never echoed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN_CHARS = r"[A-Za-z0-9_]"

_PREFIX_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("openai_key", re.compile(rf"sk-(?:proj-|ant-)?{_TOKEN_CHARS}{{20,}}")),
    ("github_fine_pat", re.compile(rf"github_pat_{_TOKEN_CHARS}{{20,}}")),
    ("github_pat", re.compile(rf"ghp_{_TOKEN_CHARS}{{20,}}")),
    ("github_oauth", re.compile(rf"gho_{_TOKEN_CHARS}{{20,}}")),
    ("github_server", re.compile(rf"ghs_{_TOKEN_CHARS}{{20,}}")),
    ("slack_bot", re.compile(r"xoxb-[A-Za-z0-9-]{10,}")),
    ("slack_user", re.compile(r"xoxp-[A-Za-z0-9-]{10,}")),
    ("aws_access_key", re.compile(r"AKIA[A-Z0-9]{16,}")),
    ("google_api_key", re.compile(r"AIza[A-Za-z0-9_\-]{30,}")),
    (
        "private_key_block",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"),
    ),
)

#: Every prefix rule's literal start, in one pattern: most text has none of them, and one pass to
#: say so is cheaper than a pass per rule.
_ANY_PREFIX = re.compile(r"sk-|github_pat_|gh[pos]_|xox[bp]-|AKIA|AIza|-----BEGIN ")

_MARKERS = ("SECRET", "TOKEN", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY")
_ENV_PAIR = re.compile(r"(?P<key>[A-Za-z0-9_]+)\s*[=:]\s*")
_QUOTED = re.compile(r"""(?P<q>["'])(?P<value>.*?)(?P=q)""")


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    start: int
    end: int
    preview: str


def _preview(fragment: str) -> str:
    return fragment[:6] + "…" if len(fragment) > 6 else fragment


def _is_marker(key: str) -> bool:
    upper = key.upper()
    return any(upper == m or upper.endswith("_" + m) for m in _MARKERS)


def scan(text: str | None) -> list[Finding]:
    """Every secret-looking span of `text`, in order of position."""
    if not text:
        return []
    findings: list[Finding] = []
    if _ANY_PREFIX.search(text):
        for rule, pattern in _PREFIX_RULES:
            for match in pattern.finditer(text):
                findings.append(Finding(rule, match.start(), match.end(), _preview(match.group())))
    offset = 0
    for line in text.splitlines(keepends=True):
        if "=" not in line and ":" not in line:
            offset += len(line)
            continue
        for pair in _ENV_PAIR.finditer(line):
            if not _is_marker(pair.group("key")):
                continue
            rest = line[pair.end() :]
            quoted = _QUOTED.match(rest)
            if quoted:
                value, start, end = (
                    quoted.group("value").strip(),
                    pair.end() + quoted.start("value"),
                    pair.end() + quoted.end("value"),
                )
            else:
                word = rest.split(maxsplit=1)[0] if rest.strip() else ""
                value, start = word.strip("'\""), pair.end() + (len(rest) - len(rest.lstrip()))
                end = start + len(word)
            # Already-redacted text must not trip the guard again.
            if len(value) >= 8 and not value.startswith("[REDACTED:"):
                findings.append(Finding("env_secret", offset + start, offset + end, _preview(value)))
        offset += len(line)
    findings.sort(key=lambda f: (f.start, -f.end))
    return findings


def redact(text: str, findings: list[Finding]) -> str:
    """`text` with every finding replaced by `[REDACTED:<rule>]` (overlaps merged)."""
    out: list[str] = []
    cursor = 0
    for finding in findings:
        if finding.start < cursor:
            continue
        out.append(text[cursor : finding.start])
        out.append(f"[REDACTED:{finding.rule}]")
        cursor = finding.end
    out.append(text[cursor:])
    return "".join(out)
