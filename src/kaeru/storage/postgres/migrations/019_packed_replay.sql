-- Replay rows as SQLite keeps them (issue 16, decision 224; SQLite migrations 010 and 013): the
-- argument digest as its 32 bytes instead of 64 hex characters, the response as deflated compact
-- JSON (`storage/sql/replay.py`) instead of JSON text. Every write with a request id writes one, and
-- the window's rows stay (7 days by default): ~600 bytes a note here against ~200 on SQLite. Rows
-- already stored keep their JSON, as its UTF-8 bytes, which the session reads as before. The schema
-- level this raises stops a server of an older kaeru on the same database, which would read bytes
-- where it expects text.
ALTER TABLE requests
    ALTER COLUMN args_hash TYPE bytea USING (
        CASE WHEN args_hash ~ '^[0-9a-f]{64}$' THEN decode(args_hash, 'hex') ELSE convert_to(args_hash, 'UTF8') END
    ),
    ALTER COLUMN response TYPE bytea USING convert_to(response, 'UTF8');
