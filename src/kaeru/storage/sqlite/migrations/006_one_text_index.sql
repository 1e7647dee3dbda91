-- One full-text index instead of two: the literal columns (search) and the Snowball-stem columns
-- (recall) of a node in one FTS5 table, so a write flushes and merges one index, not two. Queries
-- name their columns (`{name description body tags}` or `{stem_name …}`), so the two never mix.
-- No prefix index: it tripled the literal terms written per note, and prefix queries (rare, and
-- broad by nature) still work by scanning the term range, ~1.3-1.6x slower for 2-3 letters.
-- At 60k rows the index's share of a write fell from 201/882 µs (p50/p95) to 94/328 µs.
DROP TABLE nodes_fts;
DROP TABLE nodes_stem_fts;
CREATE VIRTUAL TABLE nodes_fts USING fts5 (
    name, description, body, tags, scope, stem_name, stem_description, stem_body, stem_tags,
    content = '', contentless_delete = 1, tokenize = 'ascii'
);
-- Filled from `nodes` when the store opens (the tokenisers are Python).
INSERT INTO meta (key, value) VALUES ('stem_index_pending', '1')
    ON CONFLICT (key) DO UPDATE SET value = '1';
