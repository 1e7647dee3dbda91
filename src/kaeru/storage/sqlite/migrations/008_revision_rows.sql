-- Node revisions in a rowid table. `node_revisions` was WITHOUT ROWID, keyed (node_seq, rev_no):
-- such a table keeps whole rows in an index b-tree, interior pages included, so with bodies of
-- ~1 kB a page held three rows and the tree was deep and narrow. One note rewrote nine of its
-- pages (four interior, four leaves, an overflow page): 9 of the note's 33 WAL frames. A rowid
-- table keeps rows in its leaves only, behind interior pages of bare row ids; the key is a small
-- unique index. That index, ordered by rev_no, also serves the as-of lookups that had their own
-- (node_seq, recorded_at) index: recorded_at grows with rev_no within a node.
CREATE TABLE node_revisions_by_row (
    rev_seq     INTEGER PRIMARY KEY,
    node_seq    INTEGER NOT NULL,
    rev_no      INTEGER NOT NULL,
    revision    TEXT NOT NULL,
    node_type   TEXT NOT NULL,
    tier        TEXT NOT NULL,
    name        TEXT NOT NULL,
    body        TEXT,
    description TEXT,
    tags        TEXT NOT NULL,
    layer       TEXT NOT NULL,
    visibility  TEXT NOT NULL,
    status      TEXT,
    properties  TEXT NOT NULL,
    initiatives TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    retracted   INTEGER NOT NULL,
    pinned      INTEGER NOT NULL,
    request_id  TEXT,
    actor       TEXT NOT NULL
);
INSERT INTO node_revisions_by_row (
    node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status,
    properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor
)
SELECT node_seq, rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status,
    properties, initiatives, created_at, recorded_at, retracted, pinned, request_id, actor
FROM node_revisions ORDER BY recorded_at, node_seq, rev_no;
DROP TABLE node_revisions;
ALTER TABLE node_revisions_by_row RENAME TO node_revisions;
CREATE UNIQUE INDEX node_revisions_key ON node_revisions (node_seq, rev_no);
