-- A slim copy of the columns a full-text match is filtered and ranked on, keyed by seq. A search
-- joins every matching row to it instead of to `nodes`, whose rows carry whole bodies: a broad
-- search at 100k nodes read ~56,000 pages of `nodes` and now reads ~6,000 of this index, so it no
-- longer sweeps the page cache (and the CPU caches) that the next call needs.
CREATE INDEX nodes_head ON nodes (seq, retracted, node_type, tier, layer, status, id);

-- Unused since the search plan probes the index instead (decision 45).
DROP TABLE IF EXISTS nodes_fts_vocab;
DROP TABLE IF EXISTS nodes_stem_fts_vocab;
