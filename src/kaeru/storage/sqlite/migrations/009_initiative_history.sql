-- Initiative names as they were: `initiative_names` holds each name an initiative had and the
-- recorded times it held it ([valid_from, valid_to), valid_to NULL for the current name), so a read
-- as of a past moment names an initiative as it was named then. `initiative_ends` keeps the
-- initiatives merged away or deleted (their row leaves `initiatives`), so past revisions that still
-- hold their ids stay readable, exportable, and their ids are never handed out again.
CREATE TABLE initiative_names (
    initiative_id INTEGER NOT NULL,
    name          TEXT NOT NULL,
    valid_from    TEXT NOT NULL,
    valid_to      TEXT,
    PRIMARY KEY (initiative_id, valid_from)
) WITHOUT ROWID;

CREATE TABLE initiative_ends (
    initiative_id INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    created_at    TEXT,
    ended_at      TEXT NOT NULL
);

-- The history before this migration is rebuilt from the audit: every `initiative` operation
-- recorded a change {"field": "initiative", "before": <old name>, "after": ...} — a rename (after:
-- the new name), a merge (after: the target's name; the row also has a "merged_nodes" change) or a
-- delete (after: null; a "forgotten_nodes" change). Audit rows are taken in their order (seq).
CREATE TEMP TABLE m_event AS
SELECT a.seq AS seq, a.initiative_id AS id, a.at AS at, json_extract(c.value, '$.before') AS before,
       EXISTS (SELECT 1 FROM json_each(a.changes) m
               WHERE json_extract(m.value, '$.field') IN ('merged_nodes', 'forgotten_nodes')) AS ends
FROM audit a, json_each(a.changes) c
WHERE a.operation = 'initiative' AND a.initiative_id IS NOT NULL
  AND json_extract(c.value, '$.field') = 'initiative' AND json_type(c.value, '$.before') = 'text';

-- One generation per initiative that held an id: each end closes one; the id's live initiative, if
-- any, is the last. SQLite used to hand a freed id out again (the largest one, when it was freed
-- last), so one id may have named several initiatives one after another.
CREATE TEMP TABLE m_gen (
    id       INTEGER NOT NULL,
    gen      INTEGER NOT NULL,
    from_seq INTEGER NOT NULL,
    from_at  TEXT,
    end_seq  INTEGER,
    end_at   TEXT,
    end_name TEXT,
    new_id   INTEGER
);
INSERT INTO m_gen (id, gen, from_seq, from_at, end_seq, end_at, end_name)
SELECT id, row_number() OVER w, coalesce(lag(seq) OVER w, 0), lag(at) OVER w, seq, at, before
FROM m_event WHERE ends
WINDOW w AS (PARTITION BY id ORDER BY seq);
INSERT INTO m_gen (id, gen, from_seq, from_at, end_seq, end_at, end_name)
SELECT i.id, coalesce(max(g.gen), 0) + 1, coalesce(max(g.end_seq), 0), max(g.end_at), NULL, NULL, NULL
FROM initiatives i LEFT JOIN m_gen g ON g.id = i.id
GROUP BY i.id;

-- Ids named anywhere; a reused id's earlier initiatives get fresh ids past all of them (as
-- PostgreSQL's identity would have given), so each id names one initiative.
CREATE TEMP TABLE m_top AS
SELECT max(m) AS top FROM (
    SELECT coalesce(max(id), 0) AS m FROM initiatives
    UNION ALL SELECT coalesce(max(initiative_id), 0) FROM audit
    UNION ALL SELECT coalesce(max(initiative_id), 0) FROM slot_revisions
    UNION ALL SELECT coalesce(max(CAST(j.value AS INTEGER)), 0) FROM node_revisions r, json_each(r.initiatives) j
);
UPDATE m_gen SET new_id = id;
UPDATE m_gen SET new_id = (SELECT top FROM m_top) + (
    SELECT count(*) FROM m_gen o
    WHERE EXISTS (SELECT 1 FROM m_gen l WHERE l.id = o.id AND l.gen > o.gen)
      AND (o.end_seq < m_gen.end_seq OR (o.end_seq = m_gen.end_seq AND o.id <= m_gen.id))
)
WHERE EXISTS (SELECT 1 FROM m_gen l WHERE l.id = m_gen.id AND l.gen > m_gen.gen);

-- Rows written while an earlier initiative held a reused id now carry that initiative's new id:
-- node revisions and slot revisions by their time, audit rows by their order. (Memberships and the
-- text index hold live nodes' current initiatives only: no ended id.)
UPDATE node_revisions SET initiatives = (
    SELECT '[' || coalesce(group_concat(v, ', '), '') || ']' FROM (
        SELECT coalesce((
            SELECT g.new_id FROM m_gen g
            WHERE g.id = CAST(j.value AS INTEGER) AND g.new_id <> g.id
              AND (g.from_at IS NULL OR g.from_at < node_revisions.recorded_at)
              AND node_revisions.recorded_at <= g.end_at
        ), CAST(j.value AS INTEGER)) AS v
        FROM json_each(node_revisions.initiatives) j ORDER BY j.key
    )
)
WHERE EXISTS (
    SELECT 1 FROM json_each(node_revisions.initiatives) j JOIN m_gen g
        ON g.id = CAST(j.value AS INTEGER) AND g.new_id <> g.id
       AND (g.from_at IS NULL OR g.from_at < node_revisions.recorded_at) AND node_revisions.recorded_at <= g.end_at
);
-- A node's head too (a forgotten node keeps the ids it had when it was forgotten).
UPDATE nodes SET initiatives = (
    SELECT '[' || coalesce(group_concat(v, ', '), '') || ']' FROM (
        SELECT coalesce((
            SELECT g.new_id FROM m_gen g
            WHERE g.id = CAST(j.value AS INTEGER) AND g.new_id <> g.id
              AND (g.from_at IS NULL OR g.from_at < nodes.recorded_at)
              AND nodes.recorded_at <= g.end_at
        ), CAST(j.value AS INTEGER)) AS v
        FROM json_each(nodes.initiatives) j ORDER BY j.key
    )
)
WHERE EXISTS (
    SELECT 1 FROM json_each(nodes.initiatives) j JOIN m_gen g
        ON g.id = CAST(j.value AS INTEGER) AND g.new_id <> g.id
       AND (g.from_at IS NULL OR g.from_at < nodes.recorded_at) AND nodes.recorded_at <= g.end_at
);
UPDATE slot_revisions SET initiative_id = (
    SELECT g.new_id FROM m_gen g
    WHERE g.id = slot_revisions.initiative_id AND g.new_id <> g.id
      AND (g.from_at IS NULL OR g.from_at < slot_revisions.updated_at) AND slot_revisions.updated_at <= g.end_at
)
WHERE EXISTS (
    SELECT 1 FROM m_gen g
    WHERE g.id = slot_revisions.initiative_id AND g.new_id <> g.id
      AND (g.from_at IS NULL OR g.from_at < slot_revisions.updated_at) AND slot_revisions.updated_at <= g.end_at
);
UPDATE audit SET initiative_id = (
    SELECT g.new_id FROM m_gen g
    WHERE g.id = audit.initiative_id AND g.new_id <> g.id AND g.from_seq < audit.seq AND audit.seq <= g.end_seq
)
WHERE EXISTS (
    SELECT 1 FROM m_gen g
    WHERE g.id = audit.initiative_id AND g.new_id <> g.id AND g.from_seq < audit.seq AND audit.seq <= g.end_seq
);

-- Each generation's names: the name before each rename or end, from the previous one (or the
-- creation: a live initiative's `created_at`, an ended one's first audit row), and a live
-- initiative's current name from its last rename. A live initiative the audit never mentions
-- (nothing to rebuild from) is only known by its name from this migration on.
INSERT OR IGNORE INTO initiative_names (initiative_id, name, valid_from, valid_to)
SELECT id, name, valid_from, valid_to FROM (
    SELECT g.new_id AS id, e.before AS name, e.at AS valid_to,
           coalesce(
               lag(e.at) OVER (PARTITION BY g.id, g.gen ORDER BY e.seq),
               (SELECT created_at FROM initiatives i WHERE i.id = g.id AND g.end_seq IS NULL),
               (SELECT min(a.at) FROM audit a WHERE a.initiative_id = g.new_id)
           ) AS valid_from
    FROM m_event e JOIN m_gen g ON g.id = e.id AND e.seq > g.from_seq AND (g.end_seq IS NULL OR e.seq <= g.end_seq)
    UNION ALL
    SELECT i.id, i.name, NULL,
           CASE WHEN EXISTS (SELECT 1 FROM audit a WHERE a.initiative_id = i.id)
               THEN coalesce((SELECT max(e.at) FROM m_event e WHERE e.id = i.id AND e.seq > g.from_seq), i.created_at)
               ELSE max(i.created_at, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')
           END
    FROM initiatives i JOIN m_gen g ON g.id = i.id AND g.end_seq IS NULL
)
WHERE valid_from IS NOT NULL AND (valid_to IS NULL OR valid_from < valid_to);

INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at)
SELECT g.new_id, g.end_name, (SELECT min(a.at) FROM audit a WHERE a.initiative_id = g.new_id), g.end_at
FROM m_gen g
WHERE g.end_seq IS NOT NULL AND g.new_id NOT IN (SELECT id FROM initiatives);

-- Ids still named by a revision, a slot revision or an audit row, neither live nor ended in the
-- audit (it holds no end for them): '#<id>' labels them, ended at the last node or slot revision
-- naming them (as a version 1 archive's reader ends its `#<n>`), else at their last audit row.
INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at)
SELECT id, '#' || id, NULL, coalesce(max(CASE WHEN revision THEN at END), max(at)) FROM (
    SELECT CAST(j.value AS INTEGER) AS id, r.recorded_at AS at, 1 AS revision
    FROM node_revisions r, json_each(r.initiatives) j
    UNION ALL SELECT initiative_id, updated_at, 1 FROM slot_revisions
    UNION ALL SELECT initiative_id, at, 0 FROM audit WHERE initiative_id IS NOT NULL
)
WHERE id NOT IN (SELECT id FROM initiatives) AND id NOT IN (SELECT initiative_id FROM initiative_ends)
GROUP BY id;

DROP TABLE m_event;
DROP TABLE m_gen;
DROP TABLE m_top;
