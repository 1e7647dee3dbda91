-- The rules of `context` (concepts tagged `kind:rule`) through a partial index (decision 16.R1):
-- found through the node-type index they meant testing the tags of every concept in the vault,
-- whose rows sit behind their bodies. The query repeats this condition verbatim
-- (`SqliteDialect.rule`) and tests the decoded tags (the JSON text test is a superset).
CREATE INDEX nodes_rules ON nodes (seq)
    WHERE retracted = 0 AND node_type = 'concept' AND instr(tags, '"kind:rule"') > 0;
