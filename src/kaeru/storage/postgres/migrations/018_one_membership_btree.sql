-- One index fewer per note (issue 16, decision 16.T1; SQLite migration 022).
--
-- The primary key of `memberships` (initiative, node) and `memberships_facet` (initiative, facet,
-- node) indexed the same rows twice, and every membership a note wrote went into both. The primary
-- key is now (initiative_id, facet, node_seq): a re-entry section is one range of it. The facet is
-- part of the key, so it is never NULL: an audit event's rows carry '' where they carried NULL, and
-- the section counts (migration 014) skip '' as they skipped NULL. `memberships_node` stays (16.W3).
CREATE OR REPLACE FUNCTION kaeru_section_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('kaeru.bulk_index', true) = 'on' THEN
        RETURN NULL;
    END IF;
    INSERT INTO section_counts AS c (initiative_id, facet, shard, members)
    SELECT k.i, k.f, pg_backend_pid() % 64, sum(k.d)
    FROM (
        SELECT NEW.initiative_id AS i, NEW.facet AS f, 1 AS d WHERE TG_OP <> 'DELETE' AND NEW.facet <> ''
        UNION ALL SELECT OLD.initiative_id, OLD.facet, -1 WHERE TG_OP <> 'INSERT' AND OLD.facet <> ''
    ) k
    GROUP BY k.i, k.f
    HAVING sum(k.d) <> 0
    ORDER BY k.i, k.f
    ON CONFLICT (initiative_id, facet, shard) DO UPDATE SET members = c.members + excluded.members;
    RETURN NULL;
END
$$;

UPDATE memberships SET facet = '' WHERE facet IS NULL;
ALTER TABLE memberships ALTER COLUMN facet SET NOT NULL;
ALTER TABLE memberships DROP CONSTRAINT memberships_pkey;
ALTER TABLE memberships ADD PRIMARY KEY (initiative_id, facet, node_seq);
DROP INDEX memberships_facet;
