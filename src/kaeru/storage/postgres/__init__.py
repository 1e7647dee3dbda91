"""The PostgreSQL backend (psycopg 3): many stateless servers over one database."""
