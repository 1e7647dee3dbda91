"""The embedded backend: one SQLite file (WAL) through apsw."""
