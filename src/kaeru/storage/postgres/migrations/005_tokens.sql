-- HTTP bearer tokens, one per person or agent (issue 15, decision 15.K1; SQLite migration 011).
-- Only the sha256 of a token is kept (`digest`, hex); the token itself is shown once.
-- `initiatives` is a JSON list of initiative names (NULL: all); `read_only` refuses every mutation.
CREATE TABLE tokens (
    name        TEXT COLLATE "C" PRIMARY KEY,
    digest      TEXT COLLATE "C" NOT NULL UNIQUE,
    initiatives TEXT,
    read_only   BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  TEXT COLLATE "C" NOT NULL,
    last_used   TEXT COLLATE "C"
);
