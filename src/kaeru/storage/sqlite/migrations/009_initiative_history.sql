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

-- Renames made before this migration were not recorded: a live initiative's history starts with
-- its current name at its creation.
INSERT INTO initiative_names (initiative_id, name, valid_from, valid_to)
SELECT id, name, created_at, NULL FROM initiatives;

-- Initiatives merged or deleted before this migration: their names are lost ('#<id>' labels them),
-- their end is the last revision that still named them.
INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at)
SELECT CAST(j.value AS INTEGER), '#' || j.value, NULL, max(r.recorded_at)
FROM node_revisions r, json_each(r.initiatives) j
WHERE CAST(j.value AS INTEGER) NOT IN (SELECT id FROM initiatives)
GROUP BY CAST(j.value AS INTEGER);
