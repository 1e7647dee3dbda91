-- A log of node writes, so that a process's in-memory copies of the ranking's inputs know exactly
-- which rows changed since the snapshot they were read in (issue 16, decisions 16.Q3, 16.C1;
-- `storage/postgres/copies.py`).
--
-- Every write of a node row (a new node, a revision, a forget, a move between initiatives — its
-- memberships are written in the same `put_node`, after the row — and a re-index) adds one row in
-- the writer's own transaction: the node's `seq` and the writer's transaction id. A reader whose
-- copy was taken in snapshot S reads, in its own snapshot, the rows of the transactions S did not
-- see (`xid >= xmin(S)` and either `>= xmax(S)` or in flight at S: the outbox rule), so a row
-- committed late by a transaction that was in flight at S — possibly with a lower `seq` than rows
-- S saw — is never missed. Nothing ranks from the log itself: it only names rows to read again.
CREATE TABLE text_changes (
    xid      XID8 NOT NULL DEFAULT pg_current_xact_id(),
    node_seq BIGINT NOT NULL
);
CREATE INDEX text_changes_xid ON text_changes (xid);

-- The log is pruned (bounded): rows of transactions older than `horizon` may be gone, so a copy
-- taken in a snapshot whose xmin is older than it is read again whole. One row (none: nothing was
-- pruned since the table was emptied).
CREATE TABLE text_change_horizon (
    one     BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    horizon XID8 NOT NULL
);
INSERT INTO text_change_horizon (horizon) VALUES ('0'::xid8);

CREATE FUNCTION kaeru_text_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO text_changes (node_seq) VALUES (NEW.seq);
    RETURN NULL;
END
$$;

CREATE TRIGGER nodes_text_changes AFTER INSERT OR UPDATE ON nodes
    FOR EACH ROW EXECUTE FUNCTION kaeru_text_change();

-- Pruning, by a writer now and then (`textcache.PRUNE_EVERY`): the newest `keep` rows stay, the
-- older ones go and the horizon moves up to them. One pruner at a time: another finding the
-- horizon row locked leaves the work to the first.
CREATE FUNCTION kaeru_prune_text_changes(keep BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    cut XID8;
BEGIN
    INSERT INTO text_change_horizon (horizon) VALUES ('0'::xid8) ON CONFLICT DO NOTHING;  -- (emptied)
    PERFORM 1 FROM text_change_horizon FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT xid INTO cut FROM text_changes ORDER BY xid DESC OFFSET keep LIMIT 1;
    IF cut IS NULL THEN
        RETURN;
    END IF;
    DELETE FROM text_changes WHERE xid < cut;
    UPDATE text_change_horizon SET horizon = cut WHERE horizon < cut;
END
$$;

-- The live supersession edges, few beside the ~100k edges of a 1M-node vault: a search that omits
-- superseded matches reads their targets once (`search._superseded_ids`, `copied._superseded_seqs`),
-- which scanned every edge (~15 ms of server CPU a search at 1M; there is no index on `edge_type`).
-- SQLite's partial index `edges_verdicts` (its migration 007) does the same.
CREATE INDEX edges_supersedes ON edges (dst, src) WHERE edge_type = 'supersedes' AND NOT retracted;
