"""Rebuild `negatives.jsonl`: snippets of real source code and prose, sampled deterministically.

Not run by the tests (they read the committed file); kept so the corpus can be re-made and audited,
with the project's virtualenv (its site-packages give the credential-handling library code):

    .venv/bin/python tests/data/secrets/sample.py > tests/data/secrets/negatives.jsonl

Origins and licences are in README.md beside this file. Snippets holding a private key block or a
known secret prefix are skipped: the corpus is of ordinary text, not of leaked fixtures.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

SEED = 15
STDLIB = Path(sysconfig.get_paths()["stdlib"])
INCLUDE = Path(sysconfig.get_paths()["include"])
NPM = Path("/usr/lib/node_modules/npm")
PERL = Path("/usr/share/perl/5.36")
SKIP_MARKERS = ("PRIVATE KEY", "BEGIN CERTIFICATE")

#: (language, origin label, root, glob, snippets wanted, lines per snippet)
SOURCES = [
    ("python", "cpython-stdlib", STDLIB, "*.py", 1500, (4, 14)),
    ("c", "cpython-include", INCLUDE, "*.h", 300, (4, 14)),
    ("javascript", "npm-cli", NPM / "lib", "*.js", 450, (4, 14)),
    ("javascript", "npm-cli-deps", NPM / "node_modules", "*.js", 250, (4, 14)),
    ("perl", "perl-core", PERL, "*.pm", 300, (4, 14)),
    ("markdown", "npm-docs", NPM / "docs" / "content", "*.md", 300, (3, 10)),
]


def _files(root: Path, pattern: str, *, site: bool = False) -> list[Path]:
    skip: tuple[str, ...] = ("/test/", "/tests/", "/idle_test/", "/pydoc_data/", "/__pycache__/")
    if not site:
        skip += ("/site-packages/",)
    return sorted(p for p in root.rglob(pattern) if p.is_file() and not any(s in f"/{p.as_posix()}/" for s in skip))


def _windows(rng: random.Random, lines: list[str], span: tuple[int, int]) -> Iterator[tuple[int, str]]:
    if not lines:
        return
    for _ in range(3):
        size = rng.randint(*span)
        start = rng.randrange(max(1, len(lines) - size + 1))
        text = "".join(lines[start : start + size]).strip("\n")
        if len(text.strip()) >= 40:
            yield start + 1, text


def _sample(
    lang: str, label: str, root: Path, pattern: str, wanted: int, span: tuple[int, int]
) -> Iterator[dict[str, str]]:
    files = _files(root, pattern)
    rng = random.Random(f"{SEED}:{label}")
    seen: set[str] = set()
    produced = 0
    order = files[:]
    rng.shuffle(order)
    while produced < wanted and order:
        for path in order:
            if produced >= wanted:
                break
            try:
                lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            except (UnicodeDecodeError, OSError):
                continue
            for line_no, text in _windows(rng, lines, span):
                digest = hashlib.sha1(text.encode()).hexdigest()
                if digest in seen or any(m in text for m in SKIP_MARKERS):
                    continue
                seen.add(digest)
                yield {"lang": lang, "origin": f"{label}:{path.relative_to(root)}:{line_no}", "text": text}
                produced += 1
                break
        else:
            continue


def _pydoc_prose(wanted: int) -> Iterator[dict[str, str]]:
    tree = ast.parse((STDLIB / "pydoc_data" / "topics.py").read_text(encoding="utf-8"))
    topics: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            topics = ast.literal_eval(node.value)
    paragraphs = [
        (name, p.strip()) for name in sorted(topics) for p in topics[name].split("\n\n") if 80 <= len(p.strip()) <= 1200
    ]
    rng = random.Random(f"{SEED}:pydoc")
    for name, text in rng.sample(paragraphs, min(wanted, len(paragraphs))):
        yield {"lang": "prose", "origin": f"cpython-docs:pydoc_data/topics.py:{name}", "text": text}


#: Library code that handles credentials: windows centred on a line naming one (the hard negatives).
SITE = Path(sysconfig.get_paths()["purelib"])
CREDENTIAL_LINE = re.compile(r"(?i)passw|token|secret|api_?key|credential|authorization")
TARGETED = [
    ("python", "cpython-stdlib-auth", STDLIB, 300),
    ("python", "mcp", SITE / "mcp", 120),
    ("python", "starlette", SITE / "starlette", 40),
    ("python", "uvicorn", SITE / "uvicorn", 30),
    ("python", "pydantic", SITE / "pydantic", 60),
    ("python", "psycopg", SITE / "psycopg", 60),
    ("python", "pyjwt", SITE / "jwt", 40),
    ("python", "cryptography", SITE / "cryptography", 50),
    ("python", "pip", SITE / "pip" / "_internal", 100),
]


def _targeted(lang: str, label: str, root: Path, wanted: int) -> Iterator[dict[str, str]]:
    candidates: list[tuple[Path, int]] = []
    files = _files(root, "*.py", site=root.is_relative_to(SITE))
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        candidates.extend((path, i) for i, line in enumerate(lines) if CREDENTIAL_LINE.search(line))
    rng = random.Random(f"{SEED}:{label}")
    rng.shuffle(candidates)
    seen: set[str] = set()
    produced = 0
    for path, index in candidates:
        if produced >= wanted:
            break
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        before, after = rng.randint(1, 6), rng.randint(1, 6)
        text = "".join(lines[max(0, index - before) : index + after + 1]).strip("\n")
        digest = hashlib.sha1(text.encode()).hexdigest()
        if digest in seen or any(m in text for m in SKIP_MARKERS) or len(text.strip()) < 40:
            continue
        seen.add(digest)
        produced += 1
        yield {"lang": lang, "origin": f"{label}:{path.relative_to(root)}:{index + 1}", "text": text}


def main() -> None:
    out = sys.stdout
    for lang, label, root, pattern, wanted, span in SOURCES:
        for row in _sample(lang, label, root, pattern, wanted, span):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    for row in _pydoc_prose(300):
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    for lang, label, root, wanted in TARGETED:
        for row in _targeted(lang, label, root, wanted):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
