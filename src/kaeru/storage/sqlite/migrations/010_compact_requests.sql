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
