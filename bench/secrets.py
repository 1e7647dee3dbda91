"""The secret guard against its labelled corpus: recall per format, false positives, cost per call.

A script, not a test (the test asserts only the quality bars, never a timing):

    PYTHONPATH=src python -m bench.secrets                  # the guard of this tree
    PYTHONPATH=src python -m bench.secrets --baseline REV   # and the guard of git revision REV
    PYTHONPATH=src python -m bench.secrets --compare        # and detect-secrets, if installed
    PYTHONPATH=src python -m bench.secrets --wide           # and every 10-line chunk of this machine's
                                                            # Python stdlib, site-packages, npm, Perl

The corpus is tests/data/secrets (generated fake keys; real code and prose). A positive is caught
when redaction removes the whole secret and keeps the text around it. A negative snippet is a
false positive when any finding is reported in it. Costs are `scan()` wall times in µs: a short
note, each negative snippet, a ~4 KB stretch of code, each positive. Other detectors are scored
more leniently (any finding in the text counts as caught), since their spans differ from ours.
"""

from __future__ import annotations

import argparse
import collections
import gc
import subprocess
import sys
import sysconfig
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.data.secrets.corpus import Negative, Positive, caught, negatives, positives

from bench.stats import percentile
from kaeru.domain import guard

SHORT = "Decided to keep the retry budget at 3 for the ingest worker; the flaky test was a race in setup."
Finder = Callable[[str], list[str]]
_KEEP: list[Any] = []


def _cost_us(fn: Callable[[str], object], texts: Sequence[str], repeat: int) -> tuple[float, float]:
    samples: list[float] = []
    gc.disable()
    try:
        for _ in range(repeat):
            for text in texts:
                start = time.perf_counter_ns()
                fn(text)
                samples.append((time.perf_counter_ns() - start) / 1000)
    finally:
        gc.enable()
    samples.sort()
    return percentile(samples, 50), percentile(samples, 95)


def _quality(pos: list[Positive], neg: list[Negative]) -> None:
    by_format: dict[str, list[bool]] = collections.defaultdict(list)
    for p in pos:
        by_format[p.format].append(caught(p.text, p.secret, guard.redact(p.text, guard.scan(p.text))))
    hits = sum(sum(v) for v in by_format.values())
    print(f"## Recall: {hits}/{len(pos)} = {hits / len(pos):.4f} over {len(by_format)} formats\n")
    print("| format | positives | caught | recall |")
    print("| --- | ---: | ---: | ---: |")
    for fmt in sorted(by_format):
        got = by_format[fmt]
        print(f"| {fmt} | {len(got)} | {sum(got)} | {sum(got) / len(got):.2f} |")
    by_origin: dict[str, list[bool]] = collections.defaultdict(list)
    flagged: list[tuple[Negative, list[str]]] = []
    for n in neg:
        found = guard.scan(n.text)
        by_origin[n.origin.split(":")[0]].append(bool(found))
        if found:
            flagged.append((n, [f.rule for f in found]))
    print(f"\n## False positives: {len(flagged)}/{len(neg)} = {len(flagged) / len(neg):.4%} of negative snippets\n")
    print("| origin | snippets | flagged | rate |")
    print("| --- | ---: | ---: | ---: |")
    for origin in sorted(by_origin):
        got = by_origin[origin]
        print(f"| {origin} | {len(got)} | {sum(got)} | {sum(got) / len(got):.2%} |")
    for n, found_rules in flagged:
        print(f"\n- flagged: `{n.origin}` by {', '.join(found_rules)}")


def _costs(label: str, fn: Callable[[str], object], pos: list[Positive], neg: list[Negative]) -> None:
    snippets = [n.text for n in neg]
    long_text = "\n\n".join(snippets[:12])
    rows = [
        (f"short note ({len(SHORT)} chars)", [SHORT], 3000),
        (f"negative snippets (mean {sum(map(len, snippets)) // len(snippets)} chars)", snippets, 1),
        (f"long code ({len(long_text)} chars)", [long_text], 300),
        ("positives", [p.text for p in pos], 3),
    ]
    print(f"\n## Cost per call: {label} (µs)\n")
    print("| text | p50 | p95 |")
    print("| --- | ---: | ---: |")
    for name, texts, repeat in rows:
        p50, p95 = _cost_us(fn, texts, repeat)
        print(f"| {name} | {p50:.1f} | {p95:.1f} |")


def _score(label: str, find: Finder, pos: list[Positive], neg: list[Negative]) -> None:
    hits = sum(bool(find(p.text)) for p in pos)
    fps = sum(bool(find(n.text)) for n in neg)
    p50, p95 = _cost_us(find, [n.text for n in neg], 1)
    print(
        f"| {label} | {hits / len(pos):.3f} | {fps / len(neg):.2%} ({fps}) | {p50:.1f} | {p95:.1f} |",
    )


def _baseline(rev: str) -> Finder:
    source = subprocess.run(
        ["git", "show", f"{rev}:src/kaeru/domain/guard.py"], check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType(f"guard_{rev}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"guard@{rev}", "exec"), module.__dict__)
    scan = module.scan

    def find(text: str) -> list[str]:
        return [text[f.start : f.end] for f in scan(text)]

    return find


def _detect_secrets() -> tuple[str, Finder] | None:
    try:
        import inspect
        from importlib.metadata import version

        from detect_secrets.core.scan import _process_line_based_plugins
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    settings = default_settings()
    settings.__enter__()
    _KEEP.append(settings)  # the settings last as long as their context manager does
    four = "is_added" in inspect.getsource(_process_line_based_plugins)

    def find(text: str) -> list[str]:
        lines = [(i, line, False, False) if four else (i, line) for i, line in enumerate(text.splitlines(), 1)]
        return [s.secret_value or "" for s in _process_line_based_plugins(lines, filename="note.txt")]

    name = "bc-detect-secrets" if four else "detect-secrets"
    return f"{name} {version(name)} (default plugins, filters)", find


def _wide() -> None:
    """Out of sample: text the rules were not tuned on (what is installed here; not reproducible
    byte for byte across machines, so a figure to watch, not a bar)."""
    roots = [
        ("python stdlib", Path(sysconfig.get_paths()["stdlib"]), "*.py"),
        ("python site-packages", Path(sysconfig.get_paths()["purelib"]), "*.py"),
        ("npm (js)", Path("/usr/lib/node_modules"), "*.js"),
        ("npm (markdown)", Path("/usr/lib/node_modules"), "*.md"),
        ("perl", Path("/usr/share/perl"), "*.pm"),
    ]
    print("\n## Out of sample: every 10-line chunk of installed code (tests and site-packages of stdlib skipped)\n")
    print("| source | chunks | flagged | rate | by rule |")
    print("| --- | ---: | ---: | ---: | --- |")
    for label, root, pattern in roots:
        if not root.is_dir():
            continue
        chunks = flagged = 0
        by_rule: collections.Counter[str] = collections.Counter()
        for path in sorted(root.rglob(pattern)):
            rel = f"/{path.relative_to(root).as_posix()}"
            if "/test" in rel or (label == "python stdlib" and "/site-packages/" in rel):
                continue
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            for i in range(0, len(lines), 10):
                chunk = "\n".join(lines[i : i + 10])
                if not chunk.strip():
                    continue
                chunks += 1
                found = guard.scan(chunk)
                if found:
                    flagged += 1
                    by_rule.update({f.rule for f in found})
        rules_seen = ", ".join(f"{r} {n}" for r, n in by_rule.most_common())
        print(f"| {label} | {chunks} | {flagged} | {flagged / max(chunks, 1):.4%} | {rules_seen} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline", metavar="REV", help="also score the guard of this git revision")
    parser.add_argument("--compare", action="store_true", help="also score detect-secrets, if importable")
    parser.add_argument("--wide", action="store_true", help="also scan the code installed on this machine")
    args = parser.parse_args(argv)
    pos, neg = positives(), negatives()
    print(
        f"# Secret guard: {len(pos)} positives, {len(neg)} negative snippets, {len(guard.rules())} rules (the generic one included)\n"
    )
    _quality(pos, neg)
    _costs("this tree", guard.scan, pos, neg)
    if args.wide:
        _wide()
    others: list[tuple[str, Finder]] = []
    if args.baseline:
        others.append((f"guard at {args.baseline}", _baseline(args.baseline)))
    if args.compare:
        found = _detect_secrets()
        if found is None:
            print("\n(detect-secrets is not installed: `pip install detect-secrets` to compare)")
        else:
            others.append(found)
    if others:
        print("\n## Other detectors (any finding in a positive counts as caught)\n")
        print("| detector | recall | false positives | p50 µs/snippet | p95 µs/snippet |")
        print("| --- | ---: | ---: | ---: | ---: |")

        def ours(text: str) -> list[str]:
            return [text[f.start : f.end] for f in guard.scan(text)]

        _score("this tree", ours, pos, neg)
        for label, find in others:
            _score(label, find, pos, neg)
    for settings in _KEEP:
        settings.__exit__(None, None, None)


if __name__ == "__main__":
    main()
