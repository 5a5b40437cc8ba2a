"""Spend ledgers: the store protocol, SQLite (one host) and Redis (many machines)."""
