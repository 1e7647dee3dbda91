-- A second full-text index over Snowball stems (kaeru.domain.text.stem_text), used by `recall`
-- only: `search` stays literal. Filled for existing nodes by the store right after migrating.
CREATE VIRTUAL TABLE nodes_stem_fts USING fts5 (
    name, description, body, tags, scope,
    content = '', contentless_delete = 1, tokenize = 'ascii'
);
INSERT INTO meta (key, value) VALUES ('stem_index_pending', '1')
    ON CONFLICT (key) DO UPDATE SET value = '1';

-- Timelines walk nodes in (created_at, seq) order from a pivot.
CREATE INDEX nodes_created ON nodes (created_at, seq);
