-- Every write of a vector is logged to `text_changes`, whoever writes it, and the log says what
-- changed (`kind`).
--
-- The semantic candidates' codes held in memory (`storage/postgres/vectorcodes.py`) are brought up
-- to date from the log as the search copies are (migration 013). A vector written by a writer that
-- did not log it — an older kaeru sharing the database, an older `kaeru reindex`, direct SQL — was
-- never seen until the codes were read again whole; on a small vault, where every code is a
-- candidate, the missed vector made a wrong answer look exact. A trigger logs each written vector,
-- as `nodes_text_changes` logs each node row; this migration also makes an older kaeru refuse the
-- database, so none writes behind it.
--
-- `kind` tells the two consumers apart: 'node' rows name a node row that changed (the search
-- copies read only these: a re-index of the vectors alone leaves them current), 'vector' rows a
-- vector. The codes read both: a vector written before its node row logs nothing (no seq yet), and
-- is named when the node row is.
ALTER TABLE text_changes ADD COLUMN kind TEXT COLLATE "C" NOT NULL DEFAULT 'node' CHECK (kind IN ('node', 'vector'));

CREATE FUNCTION kaeru_vector_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO text_changes (node_seq, kind) SELECT seq, 'vector' FROM nodes WHERE id = NEW.node_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER node_vectors_text_changes AFTER INSERT OR UPDATE ON node_vectors
    FOR EACH ROW EXECUTE FUNCTION kaeru_vector_change();
