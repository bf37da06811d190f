"""Shared CLI plumbing: consoles, the --database-url option, settings, engines and errors."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from sqlalchemy import Engine

from clusterscout.services import CatalogInvalidError, open_engine
from clusterscout.settings import Settings
from clusterscout.store.db import DatabaseURLError

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

DatabaseOpt = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="SQLAlchemy URL (default: $CLUSTERSCOUT_DATABASE_URL, else the SQLite file).",
    ),
]


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line error and return the Exit to raise (2: bad input, 1: failure)."""
    err.print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(code)


def settings_for(database_url: str | None) -> Settings:
    """Settings from the environment, with --database-url taking precedence."""
    settings = Settings()
    if database_url:
        settings = settings.model_copy(update={"database_url": database_url})
    return settings


def engine_for(database_url: str | None) -> Engine:
    """Open the database (building it from data/ when empty), or exit with a clear message."""
    try:
        return open_engine(settings_for(database_url))
    except DatabaseURLError as exc:
        raise fail(f"--database-url: {exc}") from None
    except CatalogInvalidError as exc:
        for p in exc.problems:
            err.print(str(p), highlight=False, markup=False)
        raise fail("the database is empty and data/ does not validate", 1) from None
