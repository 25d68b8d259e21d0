"""Alembic's entry point: runs on the connection app.storage.Database hands over (never reads an ini file)."""

from alembic import context

from app.storage.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection, target_metadata=metadata, render_as_batch=connection.dialect.name == "sqlite"
)  # SQLite alters tables by copying them
with context.begin_transaction():
    context.run_migrations()
