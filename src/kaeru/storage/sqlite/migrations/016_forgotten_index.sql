-- Forgotten (retracted) nodes by id (decision 16.R2): `reflect` looks for live edges whose other
-- end was forgotten. It scanned every edge and read both endpoints' rows (~0.5 s at 100k nodes);
-- now it starts from the forgotten nodes, usually few. The query repeats `retracted = 1`.
CREATE INDEX nodes_forgotten ON nodes (id) WHERE retracted = 1;
