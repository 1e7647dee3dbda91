"""beam-dev retrieval benchmark: does kaeru find the messages that answer a question in long
user–assistant conversations (BEAM, Tavakoli et al., 2025, arXiv:2510.27246; 100K tier, 15 dev
conversations)?

The same harness as LoCoMo (bench/locomo), on a second genre: long messages (code, explanations),
few dates, facts updated later in the conversation.

1. Ingest: one SQLite vault per run; each conversation is an initiative `beam-<number>`; each message
   one `note` (kind observation) with text `<role>: <content>` (as the data README says; markers
   kept) and `occurred_at` = the date of its batch (+1 s per message).
2. Questions: those with evidence — `source_chat_ids` lists, and for knowledge_update the
   `updated_info` messages (`original_info` kept for current-first); see bench/beam/data.py.
3. Systems, all in the same run: `recall` (query = the question, limit 10, no intent hint), one row
   per disabled channel (ablation), and Okapi BM25 over the same messages (bench/locomo/baselines).
4. Metrics: evidence recall@1/5/10, MRR, and current-first on knowledge_update questions.

5. `--pooled`: every conversation in ONE initiative `beam-pooled` (message ids `<number>/<id>`), BM25
   over the same pooled messages (bench/locomo/pooled.py, decision 17.B1).

Run: `python -m bench.beam [--limit-conversations N] [--no-ablation] [--pooled] [--out bench/results/beam.json]`;
`python -m bench.beam.ablation [--pooled]` runs LoCoMo and beam-dev and prints each channel's ablation side by side.
"""
