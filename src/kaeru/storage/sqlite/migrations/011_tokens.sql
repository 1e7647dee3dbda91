-- HTTP bearer tokens, one per person or agent (issue 15, decision 15.K1). Only the sha256 of a
-- token is kept (`digest`, hex); the token itself is shown once, by `kaeru token add`.
-- `initiatives` is a JSON list of the initiative names the token may see (NULL: all of them);
-- `read_only` 1 refuses every mutation. A revoked token's row is deleted (the audit keeps the act).
CREATE TABLE tokens (
    name        TEXT PRIMARY KEY,
    digest      TEXT NOT NULL UNIQUE,
    initiatives TEXT,
    read_only   INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    last_used   TEXT
);
