"""Bring a database schema to the newest Alembic revision."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def _config(connection: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = connection
    return cfg


def upgrade(connection: Connection, revision: str = "head") -> None:
    """Apply every pending migration up to ``revision`` (inside the caller's transaction)."""
    command.upgrade(_config(connection), revision)


def downgrade(connection: Connection, revision: str) -> None:
    """Undo migrations down to ``revision``, e.g. to go back to an older release."""
    command.downgrade(_config(connection), revision)


def current_revision(connection: Connection) -> str | None:
    """The revision the database is at, or None for an empty database."""
    return MigrationContext.configure(connection).get_current_revision()


def _scripts() -> ScriptDirectory:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return ScriptDirectory.from_config(cfg)


def head_revision() -> str | None:
    """The newest revision shipped with the code."""
    return _scripts().get_current_head()


def is_known(revision: str | None) -> bool:
    """True when ``revision`` is one this code ships (None, an empty database, counts)."""
    return revision is None or revision in {s.revision for s in _scripts().walk_revisions()}
