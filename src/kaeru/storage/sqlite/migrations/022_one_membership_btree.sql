-- One b-tree fewer per note (issue 16, decision 16.T1).
--
-- `memberships` (keyed by initiative and node) and its index `memberships_facet` (initiative, facet,
-- node) held the same rows twice, and every membership a note wrote went into both. The table is now
-- keyed by (initiative_id, facet, node_seq) itself: a re-entry section is one range of the key, its
-- size that range counted. The facet is part of the key, so it is never NULL: an audit event's rows
-- carry '' where they carried NULL (no section shows them). `memberships_node` stays (16.W3): the
-- probes from a node into its memberships go through it.
CREATE TABLE memberships_by_facet (
    initiative_id INTEGER NOT NULL,
    facet         TEXT NOT NULL,
    node_seq      INTEGER NOT NULL,
    PRIMARY KEY (initiative_id, facet, node_seq)
) WITHOUT ROWID;
INSERT INTO memberships_by_facet (initiative_id, facet, node_seq)
    SELECT initiative_id, coalesce(facet, ''), node_seq FROM memberships ORDER BY initiative_id, coalesce(facet, ''), node_seq;
DROP TABLE memberships;
ALTER TABLE memberships_by_facet RENAME TO memberships;
CREATE INDEX memberships_node ON memberships (node_seq);
