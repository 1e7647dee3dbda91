-- The vault schema. Current state tables (nodes, edges, slots) are kept beside append-only
-- revision tables so reads of "now" are one index lookup and reads "as of" walk history.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE initiatives (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    created_at    TEXT NOT NULL,
    last_activity TEXT NOT NULL,
    properties    TEXT NOT NULL DEFAULT '{}'
);

CREATE TABLE nodes (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
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
    retracted   INTEGER NOT NULL DEFAULT 0,
    pinned      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX nodes_live_name ON nodes (name) WHERE retracted = 0;
CREATE INDEX nodes_type_seq ON nodes (node_type, seq);

CREATE TABLE node_revisions (
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
    actor       TEXT NOT NULL,
    PRIMARY KEY (node_seq, rev_no)
) WITHOUT ROWID;
CREATE INDEX node_revisions_time ON node_revisions (node_seq, recorded_at);

CREATE TABLE memberships (
    initiative_id INTEGER NOT NULL,
    node_seq      INTEGER NOT NULL,
    PRIMARY KEY (initiative_id, node_seq)
) WITHOUT ROWID;
CREATE INDEX memberships_node ON memberships (node_seq);

-- Pre-tokenised text (see kaeru.domain.text): the index splits on spaces only, so what matches is
-- decided in Python, identically for SQLite and PostgreSQL. `scope` holds one token per initiative
-- the node belongs to (`s<id>`), so a scoped query only ranks the initiative's own rows.
CREATE VIRTUAL TABLE nodes_fts USING fts5 (
    name, description, body, tags, scope,
    content = '', contentless_delete = 1, tokenize = 'ascii', prefix = '2 3'
);

CREATE TABLE edges (
    src         TEXT NOT NULL,
    dst         TEXT NOT NULL,
    edge_type   TEXT NOT NULL,
    weight      REAL NOT NULL,
    rev_no      INTEGER NOT NULL,
    properties  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    retracted   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (src, dst, edge_type)
) WITHOUT ROWID;
CREATE INDEX edges_dst ON edges (dst, edge_type);

CREATE TABLE edge_revisions (
    src         TEXT NOT NULL,
    dst         TEXT NOT NULL,
    edge_type   TEXT NOT NULL,
    rev_no      INTEGER NOT NULL,
    weight      REAL NOT NULL,
    properties  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    retracted   INTEGER NOT NULL,
    PRIMARY KEY (src, dst, edge_type, rev_no)
) WITHOUT ROWID;
CREATE INDEX edge_revisions_dst ON edge_revisions (dst, recorded_at);
CREATE INDEX edge_revisions_src ON edge_revisions (src, recorded_at);

CREATE TABLE slots (
    initiative_id INTEGER NOT NULL,
    slot          TEXT NOT NULL,
    node_id       TEXT,
    rev_no        INTEGER NOT NULL,
    revision      TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (initiative_id, slot)
) WITHOUT ROWID;

CREATE TABLE slot_revisions (
    initiative_id INTEGER NOT NULL,
    slot          TEXT NOT NULL,
    rev_no        INTEGER NOT NULL,
    node_id       TEXT,
    revision      TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (initiative_id, slot, rev_no)
) WITHOUT ROWID;

CREATE TABLE requests (
    initiative TEXT NOT NULL,
    operation  TEXT NOT NULL,
    request_id TEXT NOT NULL,
    args_hash  TEXT NOT NULL,
    response   TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (initiative, operation, request_id)
) WITHOUT ROWID;
CREATE INDEX requests_created ON requests (created_at);

CREATE TABLE audit (
    seq           INTEGER PRIMARY KEY,
    at            TEXT NOT NULL,
    operation     TEXT NOT NULL,
    actor         TEXT NOT NULL,
    request_id    TEXT,
    initiative_id INTEGER,
    affected      TEXT NOT NULL,
    changes       TEXT NOT NULL
);
CREATE INDEX audit_initiative ON audit (initiative_id, seq);

CREATE TABLE cursors (
    id         TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    items      TEXT NOT NULL
) WITHOUT ROWID;
