-- Vectors of the optional semantic channel: one per node and model, with a digest of the text it
-- was computed from (a changed text makes the vector stale; `kaeru reindex` refreshes it).
CREATE TABLE node_vectors (
    node_id  TEXT COLLATE "C" NOT NULL,
    model    TEXT COLLATE "C" NOT NULL,
    text_sha TEXT COLLATE "C" NOT NULL,
    vector   BYTEA NOT NULL,
    PRIMARY KEY (node_id, model)
);
