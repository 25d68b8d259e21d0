"""The relational store: one schema (app/storage/schema.py), two engines (SQLite embedded, Postgres in
server mode), Alembic migrations (app/storage/migrations) run at start-up and by `deskmate db upgrade`."""

from app.storage.database import Database, DatabaseUnavailable, SessionBusy, TurnsBusy, database_url_for

__all__ = ["Database", "DatabaseUnavailable", "SessionBusy", "TurnsBusy", "database_url_for"]
