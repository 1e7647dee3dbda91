-- BM25 by SQLite's formula (issue 17, decision 17.G1; `storage/postgres/bm25.py`). `ts_rank` has no
-- inverse document frequency, so PostgreSQL ranked a rare word no higher than a common one.
--
-- Each live node keeps each term's occurrences per field (`ltf` literal terms, `stf` stems, as
-- {"term": [name, description, body, tags]}) and its length `dl` in the tokens FTS5 counts for the
-- row; all three are NULL while retracted (out of the index, like `tsv`).
ALTER TABLE nodes ADD COLUMN ltf JSONB, ADD COLUMN stf JSONB, ADD COLUMN dl INTEGER;

-- The vault's statistics: how many live nodes hold a term in exactly the fields of the bit set
-- `fields` (1 name, 2 description, 4 body, 8 tags), and how many live nodes there are and how many
-- tokens they hold. A writer adds to the rows of its `shard` (its server process, modulo 64): the
-- sum over shards is the count, and concurrent writers rarely wait on one another's rows.
CREATE TABLE term_docs (
    stemmed BOOLEAN NOT NULL,
    term    TEXT COLLATE "C" NOT NULL,
    fields  SMALLINT NOT NULL,
    shard   SMALLINT NOT NULL,
    docs    BIGINT NOT NULL,
    PRIMARY KEY (stemmed, term, fields, shard)
);

CREATE TABLE text_totals (
    shard  SMALLINT PRIMARY KEY,
    docs   BIGINT NOT NULL,
    tokens BIGINT NOT NULL
);

-- The fields bit set of one term's counts.
CREATE FUNCTION kaeru_term_fields(counts JSONB) RETURNS SMALLINT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (((counts ->> 0)::int > 0)::int | (((counts ->> 1)::int > 0)::int << 1)
            | (((counts ->> 2)::int > 0)::int << 2) | (((counts ->> 3)::int > 0)::int << 3))::smallint
$$;

-- Kept in the transaction of every write of a node: a new, revised, forgotten or deleted node
-- changes the counts by the difference between its old and new terms (only the terms that changed
-- are touched, in one order, so two writers never wait on each other crosswise within a statement).
-- A bulk re-index (`rebuild_text_index`) sets `kaeru.bulk_index` and recounts everything once.
CREATE FUNCTION kaeru_term_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    my_shard SMALLINT := pg_backend_pid() % 64;
    old_l  JSONB;
    old_s  JSONB;
    old_dl INTEGER;
    new_l  JSONB;
    new_s  JSONB;
    new_dl INTEGER;
BEGIN
    IF current_setting('kaeru.bulk_index', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        old_l := OLD.ltf; old_s := OLD.stf; old_dl := OLD.dl;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        new_l := NEW.ltf; new_s := NEW.stf; new_dl := NEW.dl;
    END IF;
    IF old_l IS DISTINCT FROM new_l OR old_s IS DISTINCT FROM new_s THEN
        INSERT INTO term_docs AS t (stemmed, term, fields, shard, docs)
        SELECT c.stemmed, c.term, c.fields, my_shard, sum(c.d)
        FROM (
            SELECT FALSE AS stemmed, key AS term, kaeru_term_fields(value) AS fields, 1 AS d FROM jsonb_each(new_l)
            UNION ALL SELECT TRUE, key, kaeru_term_fields(value), 1 FROM jsonb_each(new_s)
            UNION ALL SELECT FALSE, key, kaeru_term_fields(value), -1 FROM jsonb_each(old_l)
            UNION ALL SELECT TRUE, key, kaeru_term_fields(value), -1 FROM jsonb_each(old_s)
        ) c
        GROUP BY c.stemmed, c.term, c.fields
        HAVING sum(c.d) <> 0
        ORDER BY c.stemmed, c.term, c.fields
        ON CONFLICT (stemmed, term, fields, shard) DO UPDATE SET docs = t.docs + excluded.docs;
    END IF;
    IF old_dl IS DISTINCT FROM new_dl THEN
        INSERT INTO text_totals AS t (shard, docs, tokens)
        VALUES (my_shard, (new_dl IS NOT NULL)::int - (old_dl IS NOT NULL)::int, coalesce(new_dl, 0) - coalesce(old_dl, 0))
        ON CONFLICT (shard) DO UPDATE SET docs = t.docs + excluded.docs, tokens = t.tokens + excluded.tokens;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER nodes_term_stats AFTER INSERT OR DELETE OR UPDATE OF ltf, stf, dl ON nodes
    FOR EACH ROW EXECUTE FUNCTION kaeru_term_stats();

-- Existing nodes get their terms when the store opens (the tokenisers are Python), which then
-- counts the statistics once (`PostgresSession.rebuild_text_index`).
INSERT INTO meta (key, value) VALUES ('stem_index_pending', '1')
    ON CONFLICT (key) DO UPDATE SET value = '1';
