"""``clusterscout mcp``: serve the catalog, planner, quote and launch files to agents over MCP."""

from __future__ import annotations

import click

from clusterscout.cli.options import database_url_option, engine_for, settings_for
from clusterscout.mcp_server.server import serve


@click.command("mcp")
@database_url_option
def mcp(database_url: str | None) -> None:
    """Serve MCP over stdin/stdout: tools providers, offers, plan, quote, estimate and launch.

    Start it from an MCP client (its configuration names this command); the answers are the
    JSON API's for the same inputs. See docs/mcp.md.
    """
    serve(engine_for(database_url), settings_for(database_url))


COMMANDS: tuple[click.Command, ...] = (mcp,)
