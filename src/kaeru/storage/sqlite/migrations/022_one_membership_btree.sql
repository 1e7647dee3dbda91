-- One b-tree fewer per note (issue 16, decision 16.T1).
--
-- `memberships` (keyed by initiative and node) and its index `memberships_facet` (initiative, facet,
-- node) held the same rows twice, and every membership a note wrote went into both. The table is now
-- keyed by (initiative_id, facet, node_seq) itself: a re-entry section is one range of the key, its
-- size that range counted. The facet is part of the key, so it is never NULL, and it is stored as a
-- small integer (`kaeru.storage.sql.dialect.FACET_CODES`; 0 for an audit event, whose facet was NULL):
-- as text (~16 bytes) it made every entry of the key and of `memberships_node` three times wider,
-- and a membership probe from a node ~20 % slower. `memberships_node` stays (16.W3): the probes
-- from a node into its memberships go through it.
CREATE TABLE memberships_by_facet (
    initiative_id INTEGER NOT NULL,
    facet         INTEGER NOT NULL,
    node_seq      INTEGER NOT NULL,
    PRIMARY KEY (initiative_id, facet, node_seq)
) WITHOUT ROWID;
INSERT INTO memberships_by_facet (initiative_id, facet, node_seq)
    SELECT initiative_id, CASE coalesce(facet, '')
        WHEN '' THEN 0
        WHEN 'operational:core' THEN 1
        WHEN 'operational:hot' THEN 2
        WHEN 'operational:warm' THEN 3
        WHEN 'operational:cold' THEN 4
        WHEN 'operational:frozen' THEN 5
        WHEN 'archival:core' THEN 6
        WHEN 'archival:hot' THEN 7
        WHEN 'archival:warm' THEN 8
        WHEN 'archival:cold' THEN 9
        WHEN 'archival:frozen' THEN 10
    END, node_seq FROM memberships ORDER BY 1, 2, 3;
DROP TABLE memberships;
ALTER TABLE memberships_by_facet RENAME TO memberships;
CREATE INDEX memberships_node ON memberships (node_seq);
