"""Database storage of the catalog: SQLite by default, PostgreSQL optionally."""
