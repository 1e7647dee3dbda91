"""`python -m bench.report RESULTS.json` — the Markdown tables of a bench.run results file (for docs)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _f(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    m, g = result["machine"], result.get("git", {})
    out = [
        f"Run {result['started_at']} → {result['finished_at']} · commit `{(g.get('commit') or '?')[:10]}`"
        f"{' (src/ modified)' if g.get('src_dirty') else ''} · {m['cpu_count']} × {m.get('cpu_model')} · "
        f"Python {m['python']} · SQLite {m['sqlite_version']} · mcp {m.get('mcp_version')}",
        "",
    ]
    for run in result["runs"]:
        b = run["build"]
        out += [
            f"#### {run['backend']}, {run['size']:,} nodes",
            "",
            f"Built in {b['seconds']:.0f} s ({b['notes_per_second']:,.0f} notes/s, {b['mode']}), "
            f"{(b.get('vault_bytes') or 0) / 1e6:,.0f} MB, {b.get('fts_segments')} FTS5 segments; "
            f"load average {run['loadavg']['before']} → {run['loadavg']['after']}; hits per search: "
            + ", ".join(f"{op} {h['min']}–{h['max']}" for op, h in run["search_hits"].items())
            + ".",
            "",
            "| op | layer | p50 ms | p95 ms | p99 ms | mean ms | n | CPU p50 ms | CPU p95 ms |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for op, layers in run["ops"].items():
            for layer, s in layers.items():
                cpu = s.get("cpu") or {}
                out.append(
                    f"| {op} | {layer} | {_f(s['p50'])} | {_f(s['p95'])} | {_f(s['p99'])} | {_f(s['mean'])} | "
                    f"{s['n']} | {_f(cpu.get('p50'))} | {_f(cpu.get('p95'))} |"
                )
        r = run["ratios"]
        out += ["", "| ratio (same run) | value |", "|---|---:|"]
        for op in ("search_selective", "search_broad"):
            x = r[f"{op}_vs_raw_fts"]
            out.append(
                f"| {op} / raw FTS5 (scoped MATCH), p50 · p95 · CPU p50 | "
                f"{_f(x['p50'], 1)}× · {_f(x['p95'], 1)}× · {_f(x['cpu_p50'], 1)}× |"
            )
            page = r.get(f"{op}_vs_raw_fts_page", {})
            if page.get("p50") is not None:
                out.append(
                    f"| {op} / the same page by hand (raw_fts_page), p50 · p95 · CPU p50 | "
                    f"{_f(page['p50'], 1)}× · {_f(page['p95'], 1)}× · {_f(page['cpu_p50'], 1)}× |"
                )
            bare = r.get(f"{op}_vs_raw_fts_bare", {})
            if bare.get("p50") is not None:
                scope = r[f"{op}_raw_scope_cost"]
                out.append(f"| {op} / raw FTS5 bare words (no scope term), p50 | {_f(bare['p50'], 1)}× |")
                out.append(f"| raw FTS5 with scope / bare, CPU p50 ({op}) | {_f(scope['cpu_p50'], 1)}× |")
        for op in ("note", "read", "search_selective", "search_broad"):
            x = r[f"{op}_stdio_vs_in_process"]
            if x["ratio_p50"] is None:
                continue
            out.append(
                f"| {op}: stdio (mcp Client) / in-process · overhead ms | {_f(x['ratio_p50'], 2)}× · "
                f"+{_f(x['overhead_ms_paired_median'], 2)} |"
            )
            out.append(
                f"| {op}: stdio (raw JSON-RPC) / in-process · overhead ms | {_f(x['raw_ratio_p50'], 2)}× · "
                f"+{_f(x['raw_overhead_ms_paired_median'], 2)} |"
            )
        out += ["", "| target | value | thread CPU | verdict |", "|---|---:|---:|---|"]
        for t in run["targets"]:
            if t["pass"] is None:
                verdict = "—" if t["value"] is None else "inconclusive"
            else:
                verdict = "**pass**" if t["pass"] else "**FAIL**"
            if not t["applies"]:
                verdict += " (informative below 100k)"
            ci = f" (95% CI {_f(t['ci95'][0], 2)} … {_f(t['ci95'][1], 2)})" if t.get("ci95") else ""
            out.append(f"| {t['description']} | {_f(t['value'])}{ci} | {_f(t.get('value_cpu'))} | {verdict} |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__)
    p.add_argument("results", type=Path)
    a = p.parse_args(argv)
    print(markdown(json.loads(a.results.read_text())))


if __name__ == "__main__":
    main()
