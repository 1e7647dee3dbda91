"""The scanner behind `kaeru.domain.secrets`: rule table loading, prefiltering, value checks."""

from __future__ import annotations

import base64
import binascii
import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    start: int
    end: int
    preview: str


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    keywords: tuple[str, ...]
    pattern: re.Pattern[str]
    group: str | None
    check: str | None


def _load() -> tuple[tuple[Rule, ...], dict[str, Any]]:
    raw = tomllib.loads(
        resources.files(__package__ or "kaeru.domain.secrets").joinpath("rules.toml").read_text("utf-8")
    )
    table = tuple(
        Rule(
            id=entry["id"],
            keywords=tuple(entry["keywords"]),
            pattern=re.compile(entry["regex"]),
            group=entry.get("group"),
            check=entry.get("check"),
        )
        for entry in raw["rule"]
    )
    return table, raw["generic"]


_RULES, _GENERIC = _load()
GENERIC_ID: str = _GENERIC["id"]
_WORDS = frozenset(_GENERIC["words"])
_QUALIFIERS = frozenset(_GENERIC["key_qualifiers"])
_PLACEHOLDERS: tuple[str, ...] = tuple(_GENERIC["placeholders"])
_NON_VALUES = frozenset(_GENERIC["non_values"])
#: Substrings of the lowered text without which the generic rule cannot match.
_GENERIC_HINTS = ("secret", "token", "pass", "pwd", "key", "credential")


def rules() -> tuple[str, ...]:
    """Every rule id, the generic one last."""
    return (*(r.id for r in _RULES), GENERIC_ID)


def _preview(fragment: str) -> str:
    """A hint of what matched that never echoes the secret: at most a third of it, at most 6 chars."""
    return fragment[: min(6, len(fragment) // 3)] + "…"


# --- value shape -----------------------------------------------------------------------------------


def _entropy(value: str) -> float:
    value = value[:256]
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


#: Templates and references inside a value: `${VAR}`, `$(cmd)`, `%(name)s`, `{{ var }}`.
_TEMPLATE = re.compile(r"\$\{\w|\$\(\w|%\(\w+\)|\{\{")


def _is_placeholder(value: str) -> bool:
    lowered = value.lower()
    if lowered in _NON_VALUES or any(p in lowered for p in _PLACEHOLDERS) or _TEMPLATE.search(value):
        return True
    # One or two distinct characters (`aaaaaaaa`, `--------`) are filler, not keys.
    return len(set(lowered)) <= 2


_DIGIT = re.compile(r"\d").search
_ALPHA = re.compile(r"[^\W\d_]").search
_LOWER = re.compile(r"[a-z]").search
_INNER_UPPER = re.compile(r"(?s).[A-Z]").search
_SYMBOL = re.compile(r"[!@#$%^&*+/=~?|]").search


def _token_shaped(value: str) -> bool:
    """Looks machine-made or password-like: letters with digits, mixed case inside, or symbols.
    (Regex searches, not loops: a scan of a hostile text checks many long values.)"""
    has_alpha = _ALPHA(value) is not None
    if has_alpha and (_DIGIT(value) or _SYMBOL(value)):
        return True
    if _INNER_UPPER(value) and _LOWER(value):
        return len(value) >= 16 and _entropy(value) >= 3.5
    return False


#: Placeholders inside a prefixed key (`xoxb-your-token`, `ghp_xxxx…`, `AKIA…EXAMPLE`, `sk-...`).
_TOKEN_PLACEHOLDERS: tuple[str, ...] = tuple(_GENERIC["token_placeholders"])


def _check_token(value: str) -> bool:
    lowered = value.lower()
    return not any(p in lowered for p in _TOKEN_PLACEHOLDERS)


#: A run of a key's base64 that words and paths of prose are not: 16 or more characters, with a
#: capital or a digit (`MIIEowIBAAKCAQEA`; not `authentication`, `/usr/local/etc/ssh/sshd`).
_KEY_RUN = re.compile(r"[A-Za-z0-9+/]{16,}")
_CAPITAL_OR_DIGIT = re.compile(r"[A-Z0-9]").search


def _check_key_body(value: str) -> bool:
    body = re.sub(r"^[A-Za-z-]+:.*$", "", value, flags=re.M)  # PEM headers (Proc-Type: …)
    # Prose that names the header (`the file must start with -----BEGIN OPENSSH PRIVATE KEY-----
    # and …`) runs to the end of the text like a cut-off key: only base64 makes it a key.
    if not any(_CAPITAL_OR_DIGIT(run) for run in _KEY_RUN.findall(body)):
        return False
    body = "".join(body.split())
    return len(body) >= 16 and not _is_placeholder(body) and "..." not in value and "…" not in value


def _check_basic_auth(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    _user, sep, password = decoded.partition(":")
    return bool(sep) and len(password) >= 3 and not _is_placeholder(password)


#: `$VAR`, `${…}`, `$(…)`, `%(name)s`, `%VAR%`, `@Value`: a reference to a value, not a value.
_REFERENCE = re.compile(r"\$[A-Za-z_{(]|%\(|%[A-Za-z_]\w*%|@[A-Za-z_]")


def _check_url_password(value: str, user: str) -> bool:
    if _REFERENCE.match(value) or value.startswith(("{", "[")) or value == user:
        return False
    return not _is_placeholder(value) and value.lower() not in {"pass", "pw", "pwd", "secret"}


def _check_shaped_token(value: str) -> bool:
    return _check_token(value) and _token_shaped(value)


_CHECKS: dict[str, Callable[[str], bool]] = {
    "token": _check_token,
    "shaped_token": _check_shaped_token,
    "key_body": _check_key_body,
    "basic_auth": _check_basic_auth,
}


# --- the generic KEY = value rule ------------------------------------------------------------------

#: After a key: an optional closing quote, an optional annotation (`password: str = …`), and an
#: assignment (`=` but not `=>`/`=~`/`== `, `:=`, `=>`, or a `:` that is not `::`, `:/`, `:=`).
_OP = re.compile(
    r"""["']?(?P<op>\s*(?::\s*[A-Za-z_][\w.\[\]|, ]{0,40}?\s)?\s*(?::=|=>|=(?!>)(?!=[\s=])(?!~\s))|\s*:(?![:=/\\])|>(?=[^<>\n]{8,256}</))[ \t]*"""
)
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_QUOTES = "\"'`"
#: An unquoted value: up to a space, quote, `,`, `;`, or an `&` that starts the next query parameter.
_UNQUOTED = re.compile(r"""(?:[^\s'"`,;&]|&(?![\w.\-]+=))[^\s'"`,;&]*(?:&(?![\w.\-]+=)[^\s'"`,;&]*)*""")
#: An env file's value (`KEY=value` alone on its line) holds no query parameters.
_UNQUOTED_ENV = re.compile(r"""[^\s'"`,;]+""")
_CODE_CHAR = re.compile(r"[()\[\]{}\\]").search
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
#: A file path (`/run/secrets/db`, `./certs/dev.pem`, `~/.netrc`, `C:\\keys\\a.pfx`) or a regex
#: literal (`/^Unexpected/`), not a key.
_PATHLIKE = re.compile(r"^(?:\.{0,2}|~)?/|^[A-Za-z]:\\|\.(?:pem|key|json|txt|p12|pfx|crt|env|ya?ml)$")


#: A release's version (`v2.14.0-rc1`, `1.4.2`, `3.0.0+build.7`, `2.1b3`): what a note says a token,
#: key or release is at, never a secret, though its letters and digits read as token-shaped. Two to
#: four numbers of at most eight digits (a date is one), then at most two of the usual pre-release
#: and build words, each with at most eight digits: a key that merely starts with digits and dots,
#: or runs on in such words (`1.2.3-a1b2a3b4`), is still a value.
_VERSION = re.compile(
    r"v?\d{1,8}(?:\.\d{1,8}){1,3}"
    r"(?:[-+.]?(?:alpha|beta|rc|dev|pre|post|preview|snapshot|final|build|a|b|p)\.?\d{0,8}){0,2}",
    re.IGNORECASE,
).fullmatch


def _is_path(value: str) -> bool:
    """Path-shaped and made of words (a base64 key that starts with `/` is not a path)."""
    return bool(_PATHLIKE.search(value)) and _entropy(value) < 4.3


def _key_words(key: str) -> list[str]:
    return [w for w in re.split(r"[_.\-]+", _CAMEL.sub("_", key).lower()) if w]


def _secret_key(key: str) -> bool:
    words = _key_words(key)
    if not words:
        return False
    last = words[-1]
    if last in _WORDS:
        return True
    return last == "key" and len(words) >= 2 and words[-2] in _QUALIFIERS


def _key_ends(text: str, lowered: str) -> list[int]:
    """Where each identifier holding a secret word ends (a `str.find` per word: cheap on prose)."""
    ends: set[int] = set()
    n = len(text)
    for hint in _GENERIC_HINTS:
        i = lowered.find(hint)
        while i >= 0:
            j = i + len(hint)
            while j < n and text[j] in _WORD_CHARS:
                j += 1
            ends.add(j)
            i = lowered.find(hint, j)
    return sorted(ends)


#: The longest value looked at (a closing quote farther away, or a longer word: not a credential).
_MAX_VALUE = 512
_LINE_PREFIXES = frozenset({"", "export", "-", "set", "ENV", "env"})


def _at_line_start(text: str, i: int) -> bool:
    """Only blanks and one short word (`export`, `-`, `set`) before `i` on its line. Walks back over
    at most that much (never to the line's start through a long line: scans stay linear)."""
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    word_end = i
    while i > 0 and word_end - i <= 6 and text[i - 1] not in " \t\n":
        i -= 1
    if text[i:word_end] not in _LINE_PREFIXES:
        return False
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    return i == 0 or text[i - 1] == "\n"


#: At most this many secret-named assignments are examined in one text. Real text has a few per
#: kilobyte (≈ 2,500 in 4 MB of code); only a hostile or generated text has more, and the cap keeps
#: its scan under a second. The prefixed-key rules still scan all of it.
_MAX_ASSIGNMENTS = 20_000
_SPACE = re.compile(r"\s").search


def _generic(text: str, lowered: str, findings: list[Finding]) -> None:
    examined = 0
    for key_end in _key_ends(text, lowered):
        match = _OP.match(text, key_end)
        if not match:
            continue
        examined += 1
        if examined > _MAX_ASSIGNMENTS:
            return
        op = match.group("op")
        quoted_key = match.start("op") > key_end
        key_start = key_end
        while key_start > 0 and text[key_start - 1] in _KEY_CHARS:
            key_start -= 1
        key = text[key_start:key_end]
        if not _secret_key(key):
            continue
        at_line_start = _at_line_start(text, key_start - 1 if quoted_key else key_start)
        upper_key = key.upper() == key and any(c.isalpha() for c in key)
        env_line = at_line_start and not quoted_key and (op == "=" or op.strip() == ":")
        strong = upper_key or env_line
        pos = match.end()
        if text.startswith(("=", "~"), pos) and not env_line:
            continue  # `a==b`, `a=~b`: comparisons; only an env line's value may begin so
        if pos >= len(text):
            continue
        ch = text[pos]
        if op == ">":  # <password>value</password>: the element's text is the value
            if text[key_start - 1 : key_start] != "<":
                continue
            close = text.find("<", pos)
            value = text[pos:close].strip()
            start = pos + (len(text[pos:close]) - len(text[pos:close].lstrip()))
            end = start + len(value)
            if len(value) < 8 or _is_placeholder(value) or _is_path(value) or _VERSION(value) or " " in value:
                continue
            findings.append(Finding(GENERIC_ID, start, end, _preview(value)))
            continue
        if ch in "fbrFBR" and pos + 1 < len(text) and text[pos + 1] in _QUOTES:
            continue  # f-strings / bytes / raw strings: code
        if ch in _QUOTES:
            close = text.find(ch, pos + 1, pos + 1 + _MAX_VALUE)
            newline = text.find("\n", pos + 1, pos + 1 + _MAX_VALUE)
            if close < 0 or (0 <= newline < close):
                continue
            value = text[pos + 1 : close]
            start, end = pos + 1, close
            stripped = value.strip()
            if len(stripped) < 8 or _is_placeholder(stripped) or _is_path(stripped) or _VERSION(stripped):
                continue
            if _SPACE(stripped):
                if not upper_key or len(stripped.split()) > 4:
                    continue
            elif not strong and not _token_shaped(stripped):
                continue
            if "://" in stripped:
                continue  # a URL; its password, if any, is the url_password rule's
        else:
            word = (_UNQUOTED_ENV if env_line and op == "=" else _UNQUOTED).match(text, pos, pos + _MAX_VALUE)
            if not word:
                continue
            value = word.group()
            start, end = pos, word.end()
            value = value.rstrip(".:")  # end of a sentence
            if value.endswith((")", "]", "}", ">")) and not any(c in value[:-1] for c in "([{<"):
                value = value.rstrip(")]}>")  # closes a bracket opened before the key
            end = start + len(value)
            if len(value) < 8 or _is_placeholder(value) or _is_path(value) or _VERSION(value):
                continue
            if _CODE_CHAR(value) or value[0] == "<" or _REFERENCE.match(value):
                continue
            if value[0] == "#" and not (env_line and op == "="):  # a comment, but `KEY=#x` is a value
                continue
            if value[0] in "&*!" and _IDENT.fullmatch(value[1:]) and not (env_line and op == "="):
                continue  # YAML anchors, aliases and tags; C pointers
            if "://" in value or _DOTTED.fullmatch(value):
                continue
            after = text[end : end + 2]
            if after[:1] in ("(", "[") or after == "..":
                continue  # `abc12345...`: an elided value; one `.` after it ends a sentence
            identifier = _IDENT.fullmatch(value) and not _DIGIT(value)
            if identifier and not upper_key:
                continue  # `private_key: PrivateKeyTypes`, `credentials: kDefault`: a name, not a value
            if not strong:
                if _IDENT.fullmatch(value):
                    if not (_token_shaped(value) and _DIGIT(value)):
                        continue
                elif not _token_shaped(value):
                    continue
        if value.startswith("[REDACTED:"):
            continue
        findings.append(Finding(GENERIC_ID, start, end, _preview(value)))


# --- scan / redact ---------------------------------------------------------------------------------


def _trie_pattern(words: list[str]) -> str:
    """One regex for many literals, as a trie (`(?:s(?:k-(?:ant-)?|…)|…)`): `re` tries alternatives
    one by one, so sharing prefixes makes one pass over the text much cheaper than a flat `a|b|…`."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        alternatives = [re.escape(ch) + build(node[ch]) for ch in sorted(k for k in node if k)]
        if not alternatives:
            return ""
        ends_here = "" in node
        body = alternatives[0] if len(alternatives) == 1 and not ends_here else "(?:" + "|".join(alternatives) + ")"
        return body + ("?" if ends_here else "")

    return build(trie)


#: Which rules each keyword triggers; one pass of `_KEYWORD` finds every keyword the text holds.
_KEYWORD_RULES: dict[str, list[int]] = {}
for _index, _rule in enumerate(_RULES):
    for _keyword in _rule.keywords:
        _KEYWORD_RULES.setdefault(_keyword, []).append(_index)
_KEYWORD = re.compile(_trie_pattern(list(_KEYWORD_RULES)))


#: Characters by how seldom prose holds them, rarest first (no lower-case letter is rare).
_RARITY = "_=:/-JQXZKVYUWGFBHMPDCLRNOTSIEA0123456789. "


def _rarest(keyword: str) -> str:
    """The character of `keyword` that comes first in `_RARITY`, or '' when it holds none."""
    held = [ch for ch in _RARITY if ch in keyword]
    return held[0] if held else ""


#: The keywords to look for before the pattern runs, grouped by the rarest character each holds, so
#: that a group is looked at only in a text that holds its character. A keyword holding a shorter
#: one is left out: wherever it occurs, the shorter one does.
_PRESENCE: dict[str, list[str]] = {}
#: A group of more keywords than this is not searched word by word: the pattern runs at once.
_SEARCHES = 8
for _keyword in sorted(_KEYWORD_RULES):
    if not any(_other != _keyword and _other in _keyword for _other in _KEYWORD_RULES):
        _PRESENCE.setdefault(_rarest(_keyword), []).append(_keyword)


def _holds_keyword(text: str) -> bool:
    """False only when no keyword occurs in `text` (then `_KEYWORD` finds nothing either): a few `str`
    searches, several times cheaper on prose than one pass of the pattern (decision 14.C3)."""
    for rare, keywords in _PRESENCE.items():
        if (not rare or rare in text) and (len(keywords) > _SEARCHES or any(word in text for word in keywords)):
            return True
    return False


def _triggered(text: str) -> list[int]:
    """The rules whose keywords the text holds, in table order."""
    if not _holds_keyword(text):
        return []
    hits: set[int] = set()
    for keyword in set(_KEYWORD.findall(text)):
        hits.update(_KEYWORD_RULES[keyword])
    return sorted(hits)


def scan(text: str | None) -> list[Finding]:
    """Every secret-looking span of `text`, in order of position."""
    if not text:
        return []
    findings: list[Finding] = []
    for index in _triggered(text):
        rule = _RULES[index]
        for match in rule.pattern.finditer(text):
            if rule.group:
                start, end = match.span(rule.group)
            else:
                start, end = match.span()
            value = text[start:end]
            if rule.check == "url_password":
                if not _check_url_password(value, match.group("user")):
                    continue
            elif rule.check == "key_body":
                if not _check_key_body(match.group("body")):
                    continue
            elif not _CHECKS[rule.check or "token"](value):
                continue
            findings.append(Finding(rule.id, start, end, _preview(value)))
    lowered = text.lower()
    _generic(text, lowered, findings)
    findings.sort(key=lambda f: (f.start, -f.end))
    return findings


def redact(text: str, findings: list[Finding]) -> str:
    """`text` with only each finding's span replaced by `[REDACTED:<rule>]` (overlaps merged)."""
    out: list[str] = []
    cursor = 0
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if finding.end <= cursor:
            continue
        start = max(finding.start, cursor)
        out.append(text[cursor:start])
        if start == finding.start:
            out.append(f"[REDACTED:{finding.rule}]")
        cursor = finding.end
    out.append(text[cursor:])
    return "".join(out)
