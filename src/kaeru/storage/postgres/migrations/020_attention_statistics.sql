-- Planner statistics for the condition of the partial index `nodes_attention` (issue 16, decision
-- 271; PostgreSQL 14 or newer).
--
-- `context` reads the scope's nodes that hold a reminder or a hygiene report through that index
-- (migration 006), each tested for membership of the scope. The planner had no statistics for
-- `strpos(properties, …) > 0` and guessed a third of the table for each test: on a large vault it
-- expected tens of thousands of such nodes where there were a few dozen, and merge-joined them with
-- every membership of the scope instead of probing the few. Statistics on the two expressions let
-- ANALYZE measure them, so the estimate follows the vault: a probe per node while they are few, a
-- join once they are many. SQLite's planner probes them already.
CREATE STATISTICS nodes_reminder_stats ON (strpos(properties, '"reminder"')) FROM nodes;
CREATE STATISTICS nodes_hygiene_stats ON (strpos(properties, '"hygiene"')) FROM nodes;
ANALYZE nodes;
