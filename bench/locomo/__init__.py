"""LoCoMo retrieval benchmark: does kaeru find the dialogue turns that answer a question?

Data (evaluation only, CC BY-NC 4.0, never packaged): bench/data/locomo —
`locomo10.json` (10 long conversations, 5,882 turns) and `errors.json` (an audit of its answer key);
both are checked against the sha256 values in that directory's README.

1. Ingest: one SQLite vault per run in a temporary directory; each conversation is an initiative
   `locomo-<sample_id>`; each turn one `note` (kind observation) with text `<speaker>: <text>`
   (+ ` [image: <blip_caption>]` when the turn shares an image) and `occurred_at` = the session's
   date_time (UTC), later turns of a session a second apart. Node id → turn id is kept in the harness.
2. Questions: categories 1–4 (1,540); evidence = `evidence`, with WRONG_CITATION entries of
   `errors.json` replaced by `correct_evidence`; malformed ids repaired (`--strict-evidence` to
   skip), ids that name no turn dropped, questions left without evidence not scored.
3. Systems, all in the same run: `recall` (when the service has it, plus one row per disabled
   channel), `search` (literal), and in-harness baselines `bm25`, `grep`, `random`.
4. Metrics, per category and overall: evidence recall@1/5/10, all-evidence hit@10, MRR (and MRR@10),
   p50/p95 latency of the service calls.

5. Through MCP (`--mcp INGEST…`): `kaeru serve` spawned over stdio per ingest, every turn a `note`
   and every question a `recall` (its defaults, limit 10) from the `mcp` SDK client, scored the same
   beside the in-process rows (bench/locomo/mcp_side.py). The ingests — text only, a name per turn,
   the session date as `occurred_at` or in the text, the harness's own — are in
   bench/locomo/ingests.py; `--ingest` writes the in-process vault with one of them (decision 17.P1).

6. Pooled (`--pooled`, bench/locomo/pooled.py): every conversation's turns, one conversation after
   another, in ONE initiative `locomo-pooled` (turn ids `<sample_id>/<turn id>`), each question asked
   over the whole pool and the baselines built over the same pooled turns — a long memory of one
   project (decision 17.B1).

Run: `python -m bench.locomo [--limit-conversations N] [--limit-questions N] [--systems ...]
[--out bench/results/locomo.json]`. Results are deterministic (seeded ids and random baseline,
pinned clock); only timings vary.
"""
