-- Placeholder on branch h17-vectors only: PostgreSQL 009 belongs to the BM25 term statistics
-- (branch h17-pgbm25, 009_term_stats.sql). The numbering must be 001..N, so this stands in for it
-- until the merge, which deletes this file (and its line in tests/upgrade/migrations.sha256).
SELECT 1;
