-- The sizes of `context`'s sections kept as counts (issue 16, decision 16.P1). A section's size was
-- its range of `memberships_facet` counted: ~400k index entries for the benchmark's initiative at a
-- million nodes, 40-100 ms a count. Now each (initiative, facet) has one row per writer's `shard`
-- (its server process, modulo 64, as `term_docs`): the sum over the shards is how many membership
-- rows of that initiative carry that facet (NULL facets, audit events, are not counted).
--
-- A session's node writes add their changes once, before commit, in one statement sorted by key
-- (`PostgresSession.flush_term_stats`), so two writers never wait on each other crosswise; the
-- trigger counts any other write of `memberships` (it is off while `kaeru.bulk_index` is on, which a
-- session's first node write sets).
CREATE TABLE section_counts (
    initiative_id BIGINT NOT NULL,
    facet         TEXT COLLATE "C" NOT NULL,
    shard         SMALLINT NOT NULL,
    members       BIGINT NOT NULL,
    PRIMARY KEY (initiative_id, facet, shard)
);

INSERT INTO section_counts (initiative_id, facet, shard, members)
    SELECT initiative_id, facet, 0, count(*) FROM memberships WHERE facet IS NOT NULL GROUP BY 1, 2;

CREATE FUNCTION kaeru_section_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('kaeru.bulk_index', true) = 'on' THEN
        RETURN NULL;
    END IF;
    INSERT INTO section_counts AS c (initiative_id, facet, shard, members)
    SELECT k.i, k.f, pg_backend_pid() % 64, sum(k.d)
    FROM (
        SELECT NEW.initiative_id AS i, NEW.facet AS f, 1 AS d WHERE TG_OP <> 'DELETE' AND NEW.facet IS NOT NULL
        UNION ALL SELECT OLD.initiative_id, OLD.facet, -1 WHERE TG_OP <> 'INSERT' AND OLD.facet IS NOT NULL
    ) k
    GROUP BY k.i, k.f
    HAVING sum(k.d) <> 0
    ORDER BY k.i, k.f
    ON CONFLICT (initiative_id, facet, shard) DO UPDATE SET members = c.members + excluded.members;
    RETURN NULL;
END
$$;

CREATE TRIGGER memberships_section_counts AFTER INSERT OR DELETE OR UPDATE OF initiative_id, facet ON memberships
    FOR EACH ROW EXECUTE FUNCTION kaeru_section_counts();

-- The live `contradicts` edges by target: `context`'s and `reflect`'s reviews (`GraphQueries.inbound`
-- of that one type, written with the type as a literal so the planner may use this index) probed a
-- sequential scan of every edge (~35 ms at a million nodes' 100k edges) for the usual none.
CREATE INDEX edges_contradicts ON edges (dst) WHERE edge_type = 'contradicts' AND NOT retracted;
