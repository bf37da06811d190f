"""The MCP server over stdio (the official ``mcp`` SDK): lists ``tools.TOOLS`` and answers them.

Each call runs its service in a worker thread (the planner is seconds of CPU at most), so the
protocol loop keeps reading; the answer is the API's JSON, both as structured content and as
one JSON text block for clients that read only text. Bad input is a tool error (``is_error``)
whose text names the field, so the agent can correct it.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from sqlalchemy import Engine

from clusterscout.mcp_server.tools import TOOLS, ToolError, call
from clusterscout.settings import Settings
from clusterscout.version import __version__

INSTRUCTIONS = (
    "clusterscout: a sourced catalog of GPU cloud offers for multi-node training, a planner "
    "(cost, time and goodput per offer), commitment quotes and launch files. Unknown facts are "
    "null, never guessed. Answers are the JSON of clusterscout's HTTP API for the same inputs."
)


def build_server(engine: Engine, settings: Settings) -> Server[Any]:
    """The MCP server of ``engine``'s catalog."""

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name, description=t.description, input_schema=dict(t.input_schema)
                )
                for t in TOOLS
            ]
        )

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            answer = await anyio.to_thread.run_sync(
                call, engine, settings, params.name, params.arguments
            )
        except ToolError as exc:
            return types.CallToolResult(
                content=[types.TextContent(text=f"error: {exc}")], is_error=True
            )
        text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=answer
        )

    return Server(
        "clusterscout",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(engine: Engine, settings: Settings) -> None:
    """Serve MCP on stdin/stdout until the client closes the stream."""
    server = build_server(engine, settings)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
