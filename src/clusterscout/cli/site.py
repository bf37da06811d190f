"""``clusterscout serve``: the web site and the JSON API."""

from __future__ import annotations

import os

import click

from clusterscout.cli.options import database_url_option, engine_for, settings_for
from clusterscout.cli.output import out


@click.command()
@click.option("--host", envvar="HOST", default="127.0.0.1", show_default=True)
@click.option("--port", envvar="PORT", default=8000, show_default=True, type=int)
@click.option("--workers", default=1, type=click.IntRange(min=1), help="Worker processes.")
@database_url_option
def serve(host: str, port: int, workers: int, database_url: str | None) -> None:
    """Run the web site and the JSON API (builds the SQLite database first if missing)."""
    import uvicorn  # noqa: PLC0415 - only this command needs the server

    settings = settings_for(database_url)
    engine_for(database_url).dispose()  # builds when missing; fails early with a clear message
    if settings.database_url:
        os.environ["CLUSTERSCOUT_DATABASE_URL"] = settings.database_url
    out.print(f"serving on http://{host}:{port}/", highlight=False)
    # The app is named by import string: the CLI never imports the web layer, and
    # uvicorn can start several workers from it.
    uvicorn.run(
        "clusterscout.web.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
    )


COMMANDS: tuple[click.Command, ...] = (serve,)
