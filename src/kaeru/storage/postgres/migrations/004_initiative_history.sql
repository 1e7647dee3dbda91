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

-- Renames made before this migration were not recorded: a live initiative's history starts with
-- its current name at its creation.
INSERT INTO initiative_names (initiative_id, name, valid_from, valid_to)
SELECT id, name, created_at, NULL FROM initiatives;

-- Initiatives merged or deleted before this migration: their names are lost ('#<id>' labels them),
-- their end is the last revision that still named them.
INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at)
SELECT i.id, '#' || i.id::text, NULL, max(r.recorded_at)
FROM node_revisions r, unnest(r.initiatives) AS i(id)
WHERE i.id NOT IN (SELECT id FROM initiatives)
GROUP BY i.id;
