-- The rules of `context` (concepts tagged `kind:rule`) through a partial index (decision 16.R1);
-- the query repeats this condition (`PostgresDialect.rule`).
CREATE INDEX nodes_rules ON nodes (seq) WHERE NOT retracted AND node_type = 'concept' AND 'kind:rule' = ANY(tags);
