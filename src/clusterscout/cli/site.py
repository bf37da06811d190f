"""``clusterscout serve``: the web site and the JSON API."""

from __future__ import annotations

import os

import click

from clusterscout.cli.options import database_url_option, engine_for, settings_for
from clusterscout.cli.output import out
from clusterscout.settings import LOOPBACK_HOSTS


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
    if settings.public_url is None:
        # Absolute links (canonical, sitemap) are never built from the request's Host header.
        wildcard = host in {"0.0.0.0", "::", ""}  # noqa: S104 - we only compare with it
        shown = "127.0.0.1" if wildcard else (f"[{host}]" if ":" in host else host)
        os.environ["CLUSTERSCOUT_PUBLIC_URL"] = f"http://{shown}:{port}"
        if wildcard or shown not in LOOPBACK_HOSTS:
            out.print(
                f"warning: CLUSTERSCOUT_PUBLIC_URL is unset: links use http://{shown}:{port} "
                "and only that host name is answered; set it to the site's public address",
                highlight=False,
            )
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
