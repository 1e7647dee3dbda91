-- Replay keys in a rowid table, in the order they were written, with a compact response (decision
-- 16.I2). `requests` was WITHOUT ROWID, keyed by (initiative, operation, request_id): each note put
-- its whole row (~450 bytes: the response as JSON text) at a random place of that b-tree, and one
-- more entry into `requests_created`, ~4.7 of a note's ~27 WAL pages and a third of the file after
-- 5,000 short notes. Now the row is appended at the table's right edge (a purge deletes a prefix of
-- it, so `requests_created` is gone), the key is a small unique index, and the response is zlib
-- data (store.py, `_pack_response`); rows copied from before keep their JSON text, read as before.
CREATE TABLE requests_by_row (
    seq        INTEGER PRIMARY KEY,
    initiative TEXT NOT NULL,
    operation  TEXT NOT NULL,
    request_id TEXT NOT NULL,
    args_hash  TEXT NOT NULL,
    response   BLOB,
    created_at TEXT NOT NULL
);
INSERT INTO requests_by_row (initiative, operation, request_id, args_hash, response, created_at)
    SELECT initiative, operation, request_id, args_hash, response, created_at FROM requests ORDER BY created_at;
DROP TABLE requests;
ALTER TABLE requests_by_row RENAME TO requests;
CREATE UNIQUE INDEX requests_key ON requests (request_id, operation, initiative);

-- The current revision of a node lives in `nodes` only (decision 16.I3). Every note wrote its whole
-- row twice, into `nodes` and `node_revisions` (and the latter's key index): ~2.9 WAL pages of a new
-- note and a quarter of the file. `node_revisions` now holds the revisions a node has moved past:
-- `put_node` moves the current row there before it changes it, and every history read takes the
-- current row from `nodes` (which gains the revision's request id and actor).
ALTER TABLE nodes ADD COLUMN request_id TEXT;
ALTER TABLE nodes ADD COLUMN actor TEXT NOT NULL DEFAULT '';
UPDATE nodes SET request_id = r.request_id, actor = r.actor
    FROM node_revisions r WHERE r.node_seq = nodes.seq AND r.rev_no = nodes.rev_no;
DELETE FROM node_revisions
    WHERE EXISTS (SELECT 1 FROM nodes n WHERE n.seq = node_revisions.node_seq AND n.rev_no = node_revisions.rev_no);

-- The table of past revisions gets a new name, so that a server of an older kaeru still running on
-- this vault (it started before the migration) fails loudly on its next statement that touches the
-- history ("no such table") instead of writing revisions where this code no longer reads them: it
-- would store a new current revision in `node_revisions`, overwrite `nodes` and lose the revision
-- it moved past. From now on `PRAGMA user_version` records the newest migration, and a store checks
-- it at every write, so a later migration stops servers started before it (`storage/migrate.py`).
ALTER TABLE node_revisions RENAME TO past_revisions;
