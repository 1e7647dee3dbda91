-- Vectors of the optional semantic channel: one per node and model, with a digest of the text it
-- was computed from (a changed text makes the vector stale; `kaeru reindex` refreshes it).
CREATE TABLE node_vectors (
    node_id   TEXT NOT NULL,
    model     TEXT NOT NULL,
    text_sha  TEXT NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (node_id, model)
) WITHOUT ROWID;

-- Expired result lists are purged by age.
CREATE INDEX cursors_created ON cursors (created_at);
