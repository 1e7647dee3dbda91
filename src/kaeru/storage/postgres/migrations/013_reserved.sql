-- Placeholder on branch h16-pghot only: PostgreSQL 013 belongs to helper C's branch (h16-pgcopy).
-- At the merge this file, its pin and its fixture are dropped for C's 013 (decision 16.P1).
SELECT 1;
