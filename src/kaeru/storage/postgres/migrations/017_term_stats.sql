-- One row of BM25 statistics for a term's literal and stemmed counts (decision 16.L3).
--
-- `term_docs` (migration 009) kept a row per (stemmed, term, fields, shard): a note upserted one
-- row for each literal term and one for each stem, ~140 rows for a 900-character note, which was
-- half the server's time of a `note`. Most words are their own stem ("harbour", "the", "crane"),
-- and then both rows have the same key but for `stemmed`. `term_stats` keys a row by
-- (term, fields, shard) and keeps both counts in it: `literal`, how many live nodes hold the
-- literal term in exactly the fields of the bit set `fields`, and `stemmed`, how many hold the stem.
-- A note now upserts about half as many rows (131 → 71 on the benchmark corpus, 331 → 213 on
-- English prose). Same counts, same sums over the shards; one lock order (term, fields).
-- Written to run again on a database it already changed (a test forgets the migrations after 014 to
-- replay them): the tables are converted only while `term_stats` does not exist yet.
DO $convert$
BEGIN
    IF to_regclass('term_stats') IS NULL THEN
        CREATE TABLE term_stats (
            term    TEXT COLLATE "C" NOT NULL,
            fields  SMALLINT NOT NULL,
            shard   SMALLINT NOT NULL,
            literal BIGINT NOT NULL,
            stemmed BIGINT NOT NULL,
            PRIMARY KEY (term, fields, shard)
        );
        INSERT INTO term_stats (term, fields, shard, literal, stemmed)
        SELECT term, fields, shard, coalesce(sum(docs) FILTER (WHERE NOT stemmed), 0),
               coalesce(sum(docs) FILTER (WHERE stemmed), 0)
        FROM term_docs
        GROUP BY term, fields, shard;
        DROP TABLE term_docs;
        -- The statistics as `term_docs` had them, for reading: one row per variant whose count is not 0.
        CREATE VIEW term_docs AS
            SELECT FALSE AS stemmed, term, fields, shard, literal AS docs FROM term_stats WHERE literal <> 0
            UNION ALL
            SELECT TRUE, term, fields, shard, stemmed FROM term_stats WHERE stemmed <> 0;
    END IF;
END
$convert$;

-- The trigger (any writer but a kaeru session, which counts its own writes: `kaeru.bulk_index`)
-- writes the new rows: each (term, fields) once, with both changes.
CREATE OR REPLACE FUNCTION kaeru_term_stats() RETURNS trigger LANGUAGE plpgsql AS $$
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
        INSERT INTO term_stats AS t (term, fields, shard, literal, stemmed)
        SELECT c.term, c.fields, my_shard, sum(c.l), sum(c.s)
        FROM (
            SELECT key AS term, kaeru_term_fields(value) AS fields, 1 AS l, 0 AS s FROM jsonb_each(new_l)
            UNION ALL SELECT key, kaeru_term_fields(value), 0, 1 FROM jsonb_each(new_s)
            UNION ALL SELECT key, kaeru_term_fields(value), -1, 0 FROM jsonb_each(old_l)
            UNION ALL SELECT key, kaeru_term_fields(value), 0, -1 FROM jsonb_each(old_s)
        ) c
        GROUP BY c.term, c.fields
        HAVING sum(c.l) <> 0 OR sum(c.s) <> 0
        ORDER BY c.term COLLATE "C", c.fields
        ON CONFLICT (term, fields, shard) DO UPDATE
            SET literal = t.literal + excluded.literal, stemmed = t.stemmed + excluded.stemmed;
    END IF;
    IF old_dl IS DISTINCT FROM new_dl THEN
        INSERT INTO text_totals AS t (shard, docs, tokens)
        VALUES (my_shard, (new_dl IS NOT NULL)::int - (old_dl IS NOT NULL)::int, coalesce(new_dl, 0) - coalesce(old_dl, 0))
        ON CONFLICT (shard) DO UPDATE SET docs = t.docs + excluded.docs, tokens = t.tokens + excluded.tokens;
    END IF;
    RETURN NULL;
END
$$;
