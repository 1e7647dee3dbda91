-- Initiative names as they were: `initiative_names` holds each name an initiative had and the
-- recorded times it held it ([valid_from, valid_to), valid_to NULL for the current name), so a read
-- as of a past moment names an initiative as it was named then. `initiative_ends` keeps the
-- initiatives merged away or deleted (their row leaves `initiatives`), so past revisions that still
-- hold their ids stay readable and exportable. (SQLite migration 009.)
CREATE TABLE initiative_names (
    initiative_id BIGINT NOT NULL,
    name          TEXT COLLATE "C" NOT NULL,
    valid_from    TEXT COLLATE "C" NOT NULL,
    valid_to      TEXT COLLATE "C",
    PRIMARY KEY (initiative_id, valid_from)
);

CREATE TABLE initiative_ends (
    initiative_id BIGINT PRIMARY KEY,
    name          TEXT COLLATE "C" NOT NULL,
    created_at    TEXT COLLATE "C",
    ended_at      TEXT COLLATE "C" NOT NULL
);

-- The history before this migration is rebuilt from the audit: every `initiative` operation
-- recorded a change {"field": "initiative", "before": <old name>, "after": ...} — a rename (after:
-- the new name), a merge (after: the target's name; the row also has a "merged_nodes" change) or a
-- delete (after: null; a "forgotten_nodes" change). Audit rows are taken in their order (seq).
-- PostgreSQL's identity never hands an id out twice (SQLite's migration 009 also renumbers the
-- initiatives that shared a reused id), so each id names one initiative.
CREATE TEMP TABLE m_event AS
SELECT a.seq AS seq, a.initiative_id AS id, a.at AS at, (c.value ->> 'before') COLLATE "C" AS before,
       EXISTS (SELECT 1 FROM jsonb_array_elements(a.changes::jsonb) m
               WHERE m.value ->> 'field' IN ('merged_nodes', 'forgotten_nodes')) AS ends
FROM audit a, jsonb_array_elements(a.changes::jsonb) c
WHERE a.operation = 'initiative' AND a.initiative_id IS NOT NULL
  AND jsonb_typeof(c.value) = 'object' AND c.value ->> 'field' = 'initiative'
  AND jsonb_typeof(c.value -> 'before') = 'string';

-- One generation per initiative that held an id: its end closes it; a live initiative's is the last.
CREATE TEMP TABLE m_gen AS
SELECT id, row_number() OVER w AS gen, coalesce(lag(seq) OVER w, 0) AS from_seq, lag(at) OVER w AS from_at,
       seq AS end_seq, at AS end_at, before AS end_name
FROM m_event WHERE ends
WINDOW w AS (PARTITION BY id ORDER BY seq);
INSERT INTO m_gen (id, gen, from_seq, from_at, end_seq, end_at, end_name)
SELECT i.id, coalesce(max(g.gen), 0) + 1, coalesce(max(g.end_seq), 0), max(g.end_at), NULL, NULL, NULL
FROM initiatives i LEFT JOIN m_gen g ON g.id = i.id
GROUP BY i.id;

-- Each initiative's names: the name before each rename or end, from the previous one (or the
-- creation: a live initiative's `created_at`, an ended one's first audit row), and a live
-- initiative's current name from its last rename. A live initiative the audit never mentions
-- (nothing to rebuild from) is only known by its name from this migration on.
INSERT INTO initiative_names (initiative_id, name, valid_from, valid_to)
SELECT id, name, valid_from, valid_to FROM (
    SELECT g.id AS id, e.before AS name, e.at AS valid_to,
           coalesce(
               lag(e.at) OVER (PARTITION BY g.id, g.gen ORDER BY e.seq),
               (SELECT created_at FROM initiatives i WHERE i.id = g.id AND g.end_seq IS NULL),
               (SELECT min(a.at) FROM audit a WHERE a.initiative_id = g.id)
           ) AS valid_from
    FROM m_event e JOIN m_gen g ON g.id = e.id AND e.seq > g.from_seq AND (g.end_seq IS NULL OR e.seq <= g.end_seq)
    UNION ALL
    SELECT i.id, i.name, NULL,
           CASE WHEN EXISTS (SELECT 1 FROM audit a WHERE a.initiative_id = i.id)
               THEN coalesce((SELECT max(e.at) FROM m_event e WHERE e.id = i.id AND e.seq > g.from_seq), i.created_at)
               ELSE greatest(i.created_at,
                             to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') COLLATE "C")
           END
    FROM initiatives i JOIN m_gen g ON g.id = i.id AND g.end_seq IS NULL
) spans
WHERE valid_from IS NOT NULL AND (valid_to IS NULL OR valid_from < valid_to)
ON CONFLICT DO NOTHING;

INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at)
SELECT g.id, g.end_name, (SELECT min(a.at) FROM audit a WHERE a.initiative_id = g.id), g.end_at
FROM m_gen g
WHERE g.end_seq IS NOT NULL AND g.id NOT IN (SELECT id FROM initiatives)
ORDER BY g.end_seq DESC
ON CONFLICT DO NOTHING;

-- Ids still named by a revision, a slot revision or an audit row, neither live nor ended in the
-- audit (it holds no end for them): '#<id>' labels them, ended at the last node or slot revision
-- naming them (as a version 1 archive's reader ends its `#<n>`), else at their last audit row.
INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at)
SELECT id, '#' || id::text, NULL, coalesce(max(CASE WHEN revision THEN at END), max(at)) FROM (
    SELECT i.id AS id, r.recorded_at AS at, TRUE AS revision FROM node_revisions r, unnest(r.initiatives) AS i(id)
    UNION ALL SELECT initiative_id, updated_at, TRUE FROM slot_revisions
    UNION ALL SELECT initiative_id, at, FALSE FROM audit WHERE initiative_id IS NOT NULL
) named
WHERE id NOT IN (SELECT id FROM initiatives) AND id NOT IN (SELECT initiative_id FROM initiative_ends)
GROUP BY id;

DROP TABLE m_event;
DROP TABLE m_gen;
