-- A second full-text index over Snowball stems (kaeru.domain.text.stem), used by `recall` only:
-- `search` stays literal. Same weights as `tsv`. Filled for existing nodes by the store right
-- after migrating (PostgreSQL cannot run the Python stemmer).
ALTER TABLE nodes ADD COLUMN stv TSVECTOR;
CREATE INDEX nodes_stv ON nodes USING gin (stv);
INSERT INTO meta (key, value) VALUES ('stem_index_pending', '1')
    ON CONFLICT (key) DO UPDATE SET value = '1';

-- Timelines walk nodes in (created_at, seq) order from a pivot.
CREATE INDEX nodes_created ON nodes (created_at, seq);
