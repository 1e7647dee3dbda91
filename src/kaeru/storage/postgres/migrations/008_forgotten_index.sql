-- Forgotten (retracted) nodes by id (decision 16.R2): `reflect`'s dangling edges start from them.
CREATE INDEX nodes_forgotten ON nodes (id) WHERE retracted;
