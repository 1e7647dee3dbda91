-- One revision layout on both engines (SQLite migration 010, decisions 16.I3, 14.S8): the current
-- revision of a node lives in `nodes` only, which gains its request id and actor; the table of
-- revisions keeps only those a node has moved past (`put_node` copies the current row there before
-- it changes it) and every history read takes the current one from `nodes`. The revision queries
-- are then written once for both engines (`storage/sql/revisions.py`).
ALTER TABLE nodes ADD COLUMN request_id TEXT COLLATE "C";
ALTER TABLE nodes ADD COLUMN actor TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE nodes n SET request_id = r.request_id, actor = r.actor
    FROM node_revisions r WHERE r.node_seq = n.seq AND r.rev_no = n.rev_no;
DELETE FROM node_revisions r USING nodes n WHERE n.seq = r.node_seq AND n.rev_no = r.rev_no;

-- The new name stops a server of an older kaeru still running on this database (it started before
-- this migration): its next write fails on "relation node_revisions does not exist" and rolls back,
-- instead of writing a current revision where this code no longer reads it and losing the one it
-- moved past (SQLite's 010 does the same; the schema level each pooled connection reads, 14.S6,
-- then stops it within minutes for everything else).
ALTER TABLE node_revisions RENAME TO past_revisions;
