"""Literal tokenising shared by indexing and querying, and the derived tag families.

The same function produces the tokens stored in the full-text index and the tokens of a query, on
every backend, so "what matches" is defined once, here: runs of Unicode letters and digits,
case-folded, diacritics removed. Everything else (quotes, `*`, `:`, parentheses, emoji, `AND`) is
just a separator or an ordinary word — user text is never query syntax.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

#: A token longer than this is cut: it is almost certainly a blob, and FTS engines cap terms anyway.
MAX_TOKEN_CHARS = 64

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "out",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "up",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "и",
        "в",
        "во",
        "не",
        "что",
        "он",
        "на",
        "я",
        "с",
        "со",
        "как",
        "а",
        "то",
        "все",
        "она",
        "так",
        "его",
        "но",
        "да",
        "ты",
        "к",
        "у",
        "же",
        "вы",
        "за",
        "бы",
        "по",
        "только",
        "ее",
        "мне",
        "было",
        "вот",
        "от",
        "меня",
        "еще",
        "нет",
        "о",
        "из",
        "ему",
        "теперь",
        "когда",
        "даже",
        "ну",
        "вдруг",
        "ли",
        "если",
        "уже",
        "или",
        "ни",
        "быть",
        "был",
        "него",
        "до",
        "вас",
        "нибудь",
        "опять",
        "уж",
        "вам",
        "ведь",
        "там",
        "потом",
        "себя",
        "ничего",
        "ей",
        "может",
        "они",
        "тут",
        "где",
        "есть",
        "надо",
        "ней",
        "для",
        "мы",
        "тебя",
        "их",
        "чем",
        "была",
        "сам",
        "чтоб",
        "без",
        "будто",
        "чего",
        "раз",
        "тоже",
        "себе",
        "под",
        "будет",
        "ж",
        "тогда",
        "кто",
        "этот",
        "того",
        "потому",
        "этого",
        "какой",
        "совсем",
        "ним",
        "здесь",
        "этом",
        "один",
        "почти",
        "мой",
        "тем",
        "чтобы",
        "нее",
        "сейчас",
        "были",
        "куда",
        "зачем",
        "всех",
        "никогда",
        "можно",
        "при",
        "наконец",
        "два",
        "об",
        "другой",
        "хоть",
        "после",
        "над",
        "больше",
        "тот",
        "через",
        "эти",
        "нас",
        "про",
        "всего",
        "них",
        "какая",
        "много",
        "разве",
        "три",
        "эту",
        "моя",
        "впрочем",
        "хорошо",
        "свою",
        "этой",
        "перед",
        "иногда",
        "лучше",
        "чуть",
        "том",
        "нельзя",
        "такой",
        "им",
        "более",
        "всегда",
        "конечно",
        "всю",
        "между",
    ]
)


def fold(token: str) -> str:
    """Case-fold and strip combining marks (é → e, Ё → е), like FTS5 `remove_diacritics 2`."""
    decomposed = unicodedata.normalize("NFKD", token.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokens(text: str | None) -> list[str]:
    """Every literal token of `text`, in order, folded; empty for empty or token-free text."""
    if not text:
        return []
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        folded = fold(match.group())
        # Folding can itself produce separators (e.g. ligatures); split again to stay consistent.
        for piece in _TOKEN.findall(folded):
            out.append(piece[:MAX_TOKEN_CHARS])
    return out


def index_text(text: str | None) -> str:
    """The space-joined token stream stored in the full-text index for one field."""
    return " ".join(tokens(text))


def query_tokens(text: str) -> list[str]:
    """Distinct query tokens in first-seen order."""
    return list(dict.fromkeys(tokens(text)))


def topic_tags(name: str, body: str | None, limit: int = 5) -> list[str]:
    """`topic:` tags: the most-mentioned content words (name weighted ×3), ties by first mention."""
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    position = 0
    for weight, text in ((3, name), (1, body or "")):
        for token in tokens(text):
            position += 1
            if len(token) < 3 or token in STOP_WORDS or token.isdigit():
                continue
            counts[token] += weight
            first_seen.setdefault(token, position)
    ranked = sorted(counts, key=lambda t: (-counts[t], first_seen[t]))
    return [f"topic:{t}" for t in ranked[:limit]]


def lang_tag(text: str | None) -> str:
    """`lang:` tag from the share of Cyrillic vs Latin letters (kaeru's rule)."""
    latin = cyrillic = 0
    for ch in text or "":
        if not ch.isalpha():
            continue
        if "a" <= ch.lower() <= "z":
            latin += 1
        elif "\u0400" <= ch <= "\u04ff":
            cyrillic += 1
    letters = latin + cyrillic
    if letters == 0:
        return "lang:other"
    if cyrillic / letters >= 0.8:
        return "lang:ru"
    if latin / letters >= 0.8:
        return "lang:en"
    return "lang:mixed"


DERIVED_FAMILIES = ("topic:", "lang:")


def merge_tags(manual: Iterable[str], derived: Iterable[str]) -> tuple[str, ...]:
    """Manual tags first (stable order), then derived ones; exact duplicates dropped."""
    return tuple(dict.fromkeys([*manual, *derived]))
