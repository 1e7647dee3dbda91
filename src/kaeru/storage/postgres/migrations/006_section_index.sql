-- Re-entry sections read through indexes (issue 16, decision 16.R1): each membership row carries
-- its node's `facet` (`<tier>:<layer>`; NULL for an audit event), kept by `put_node`, so a section
-- of `context` is one range of `memberships_facet`, newest first, and its size that range counted.
ALTER TABLE memberships ADD COLUMN facet TEXT COLLATE "C";
UPDATE memberships m SET facet = n.tier || ':' || n.layer
    FROM nodes n WHERE n.seq = m.node_seq AND n.node_type <> 'audit_event';
CREATE INDEX memberships_facet ON memberships (initiative_id, facet, node_seq);
-- Nodes with a reminder or a hygiene report (few); the query repeats this condition
-- (`PostgresDialect.attention`). Properties are the JSON text json.dumps wrote.
CREATE INDEX nodes_attention ON nodes (seq)
    WHERE NOT retracted AND (strpos(properties, '"reminder"') > 0 OR strpos(properties, '"hygiene"') > 0);
