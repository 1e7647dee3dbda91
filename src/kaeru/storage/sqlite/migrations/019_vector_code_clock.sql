-- A clock for the codes of semantic recall's candidates (decision 17.Y1). A process keeps the codes
-- of `vector_codes` in memory to scan them (storage/sqlite/vectors.py, `CodeCache`) and must never
-- scan a stale one: every change to the table moves `vector_code_clock.version` on, in the writing
-- transaction itself (these triggers), and stamps the changed row with it, so a reader compares one
-- number against its copy's and reads back only the rows stamped after it. Deleted rows (nothing
-- deletes them today) and rows whose id or model change count in `removed`: a copy reloads whole.
ALTER TABLE vector_codes ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
CREATE INDEX vector_codes_version ON vector_codes (version);
CREATE TABLE vector_code_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL,
    removed INTEGER NOT NULL
);
INSERT INTO vector_code_clock (id, version, removed) VALUES (1, 0, 0);
CREATE TRIGGER vector_codes_inserted AFTER INSERT ON vector_codes BEGIN
    UPDATE vector_code_clock SET version = version + 1 WHERE id = 1;
    UPDATE vector_codes SET version = (SELECT version FROM vector_code_clock WHERE id = 1) WHERE id = NEW.id;
END;
CREATE TRIGGER vector_codes_recoded AFTER UPDATE OF code ON vector_codes BEGIN
    UPDATE vector_code_clock SET version = version + 1 WHERE id = 1;
    UPDATE vector_codes SET version = (SELECT version FROM vector_code_clock WHERE id = 1) WHERE id = NEW.id;
END;
CREATE TRIGGER vector_codes_moved AFTER UPDATE OF id, model ON vector_codes BEGIN
    UPDATE vector_code_clock SET version = version + 1, removed = removed + 1 WHERE id = 1;
    UPDATE vector_codes SET version = (SELECT version FROM vector_code_clock WHERE id = 1) WHERE id = NEW.id;
END;
CREATE TRIGGER vector_codes_deleted AFTER DELETE ON vector_codes BEGIN
    UPDATE vector_code_clock SET version = version + 1, removed = removed + 1 WHERE id = 1;
END;
