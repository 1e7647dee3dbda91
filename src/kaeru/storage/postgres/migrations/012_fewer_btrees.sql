-- Fewer indexes written per note (issue 16, decision 16.W1; SQLite migration 018).
--
-- Replay rows are found by their primary key; the purge (at most once an hour per process) reads
-- the table, which holds only the replay window's writes, instead of an index by time that every
-- request wrote.
DROP INDEX requests_created;

-- A node's memberships are found through the primary key (initiative_id, node_seq): every reader
-- names the initiatives it wants (the shared SQL in storage/sql/), so the index by node alone goes.
DROP INDEX memberships_node;
