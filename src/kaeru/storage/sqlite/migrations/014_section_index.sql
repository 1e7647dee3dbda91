-- Re-entry sections read through indexes (issue 16, decision 16.R1). `context` asked, per section,
-- for an initiative's newest nodes of one tier and layer and how many there are: at 100k nodes each
-- such query walked and counted the whole initiative (~40,000 nodes of the benchmark corpus), and
-- finding reminders parsed every member's properties. Each membership row now carries its node's
-- `facet` (`<tier>:<layer>`; NULL for an audit event), kept by `put_node`, so a section is one range
-- of `memberships_facet`, newest first, and its size that range counted.
ALTER TABLE memberships ADD COLUMN facet TEXT;
UPDATE memberships SET facet = (
    SELECT n.tier || ':' || n.layer FROM nodes n WHERE n.seq = memberships.node_seq AND n.node_type <> 'audit_event'
);
CREATE INDEX memberships_facet ON memberships (initiative_id, facet, node_seq);
-- Nodes with a reminder or a hygiene report (few): the query repeats this condition verbatim
-- (`SqliteDialect.attention`), which is how SQLite knows it may use a partial index.
CREATE INDEX nodes_attention ON nodes (seq)
    WHERE retracted = 0 AND (json_type(properties, '$.reminder') IS NOT NULL OR json_type(properties, '$.hygiene') IS NOT NULL);
