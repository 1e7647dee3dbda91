-- When a bearer token stops being accepted (`kaeru token add NAME --expires 30d`, `kaeru token
-- renew`): a UTC instant in the canonical text form of `created_at`. NULL, as every token made
-- before this migration has, never expires: an upgraded vault's tokens go on working.
ALTER TABLE tokens ADD COLUMN expires_at TEXT;

-- Who made each edge revision: the write's actor and request id, as a node's revision keeps them
-- (`WriteContext.put_edge`). A history page names a link event's actor from its own row; before
-- this, only the write's audit record named it, and no index reaches an audit record by the links
-- it names, so every page with link events read the whole audit log. NULL, as every revision
-- written before this migration (or imported from an archive that does not carry them) has: a
-- history page then falls back to matching the audit record, for those rows only. The live
-- `edges` table does not gain them: no history reads it.
ALTER TABLE edge_revisions ADD COLUMN actor TEXT;
ALTER TABLE edge_revisions ADD COLUMN request_id TEXT;
