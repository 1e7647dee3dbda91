-- Fewer indexes written per note (issue 16, decisions 16.W1, 16.W3; SQLite migration 018).
--
-- Replay rows are found by their primary key; the purge (at most once an hour per process) reads
-- the table, which holds only the replay window's writes, instead of an index by time that every
-- request wrote.
DROP INDEX requests_created;
