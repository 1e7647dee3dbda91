-- One b-tree fewer per note (issue 16, decisions 16.W1, 16.W3).
--
-- Replay rows are kept in the order of their key instead of the order they were written: one
-- WITHOUT ROWID b-tree keyed by (request_id, operation, initiative) replaces the rowid table and
-- its unique key index `requests_key`, which every note with a request id wrote into both (~3 of a
-- note's ~24 WAL pages, ~60 bytes of repeated key a row). The purge (at most once an hour per
-- process) now reads the whole table, which holds only the replay window's writes, instead of
-- the prefix older than the window; it deletes exactly the rows older than its bound.
CREATE TABLE requests_by_key (
    request_id TEXT NOT NULL,
    operation  TEXT NOT NULL,
    initiative TEXT NOT NULL,
    args_hash  BLOB NOT NULL,
    response   BLOB,
    created_at TEXT NOT NULL,
    PRIMARY KEY (request_id, operation, initiative)
) WITHOUT ROWID;
INSERT INTO requests_by_key (request_id, operation, initiative, args_hash, response, created_at)
    SELECT request_id, operation, initiative, args_hash, response, created_at FROM requests ORDER BY seq;
DROP TABLE requests;
ALTER TABLE requests_by_key RENAME TO requests;
