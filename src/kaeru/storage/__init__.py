"""Storage: the `Store` protocol and its SQLite (apsw) and PostgreSQL (psycopg) implementations."""
