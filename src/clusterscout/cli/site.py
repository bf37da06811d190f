"""``clusterscout serve``: the web site and the JSON API."""

from __future__ import annotations

import os
from pathlib import Path

import click

from clusterscout.cli.options import database_url_option, engine_for, fail, settings_for
from clusterscout.cli.output import out
from clusterscout.settings import LOOPBACK_HOSTS, Settings

KEEP_ALIVE_S = 5
"""Seconds an idle keep-alive connection stays open."""
CONNECTION_LIMIT = 512
"""Connections and requests one server process takes at once; past it, a quick 503."""


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
    # Plans run in a worker process beside each server process unless configured otherwise:
    # a plan's CPU would otherwise hold the interpreter lock from every other request.
    os.environ.setdefault("CLUSTERSCOUT_PLAN_WORKERS", "1")
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
        # Slow clients: request heads have a deadline (web.serving), idle keep-alive
        # connections close after 5 s (uvicorn's default, said here so it stays bounded),
        # and past CONNECTION_LIMIT connections at once new ones get a 503.
        http="clusterscout.web.serving:HeadDeadlineProtocol",
        timeout_keep_alive=KEEP_ALIVE_S,
        limit_concurrency=CONNECTION_LIMIT,
    )


@click.command("export-site")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--public-url",
    help="Scheme and host the site will be served at (canonical and sitemap links); "
    "default CLUSTERSCOUT_PUBLIC_URL.",
)
@click.option("--overwrite", is_flag=True, help="Write into DIRECTORY even if it is not empty.")
@database_url_option
def export_site(
    directory: Path, public_url: str | None, overwrite: bool, database_url: str | None
) -> None:
    """Write every page in every language and the API's GET answers as static files."""
    from clusterscout.web import export  # noqa: PLC0415 - only this command renders pages

    if directory.is_dir() and any(directory.iterdir()) and not overwrite:
        raise fail(f"{directory}: not empty (pass --overwrite to write into it)")
    settings = settings_for(database_url)
    if public_url:
        try:
            settings = settings.model_copy(
                update={"public_url": Settings(public_url=public_url).public_url}
            )
        except ValueError as exc:
            raise fail(f"--public-url: {exc}") from None
    engine_for(database_url).dispose()  # builds when missing; fails early with a clear message
    try:
        report = export.export_site(settings, directory)
    except (export.ExportError, OSError) as exc:
        raise fail(str(exc)) from None
    langs = ", ".join(f"{k} {v}" for k, v in sorted(report.pages_by_language.items()))
    out.print(
        f"exported {report.pages} pages ({langs}), {report.api_answers} API answers and "
        f"{report.other_files} other files to {directory}",
        highlight=False,
    )


COMMANDS: tuple[click.Command, ...] = (serve, export_site)
