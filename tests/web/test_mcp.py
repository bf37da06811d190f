"""``clusterscout mcp`` as an agent meets it: a subprocess spoken to with the MCP SDK's client.

The plan and quote it answers must be the JSON API's for the same inputs, and bad input must
come back as a tool error naming the field.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from web_support import TestClient

from clusterscout.settings import Settings

PLAN: dict[str, Any] = {"model": "70B", "tokens": 1e11, "max_nodes": 8}
QUOTE: dict[str, Any] = {"gpus": 64, "months": 2, "start": "2026-01-05"}


async def _session_calls(
    settings: Settings, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[types.Tool], list[types.CallToolResult]]:
    env = {
        **os.environ,
        "CLUSTERSCOUT_DATABASE_URL": settings.resolved_database_url(),
        "CLUSTERSCOUT_DATA_DIR": str(settings.data_dir),
    }
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "clusterscout", "mcp"], env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        results = [await session.call_tool(name, args) for name, args in calls]
    return tools, results


def _run(settings: Settings, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    # A thread of its own: a browser test on the same worker may hold a running event loop in
    # this one (Playwright's sync API), and anyio refuses to start a second.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, _session_calls, settings, calls).result()


def _json(result: types.CallToolResult) -> Any:
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    return json.loads(text.text)


def test_the_server_lists_typed_tools_and_answers_as_the_api(
    fixture_settings: Settings, client: TestClient
) -> None:
    bad_plan = {**PLAN, "checkpoint_minutes": -5}
    tools, (plan, quote, bad, unknown) = _run(
        fixture_settings,
        [("plan", PLAN), ("quote", QUOTE), ("plan", bad_plan), ("plan", {**PLAN, "colour": 1})],
    )
    by_name = {t.name: t for t in tools}
    assert {"providers", "offers", "plan", "quote", "launch"} <= set(by_name)
    plan_props = by_name["plan"].input_schema["properties"]
    # Typed inputs: the plan's fields with their JSON types and bounds, goodput inputs included.
    assert {"model", "tokens", "gpu", "checkpoint_minutes", "restart_minutes"} <= set(plan_props)
    assert by_name["quote"].input_schema["required"] == ["gpus", "months"]

    api_plan = client.post("/api/v1/plan", json=PLAN)
    assert api_plan.status_code == 200
    assert not plan.is_error
    assert _json(plan) == api_plan.json()
    assert plan.structured_content == api_plan.json()
    assert api_plan.json()["options"], "the fixture plan should have options to compare"

    api_quote = client.get("/api/v1/quote", params=QUOTE).json()
    answer = _json(quote)
    # The API adds the data version to meta; everything the quote computes must be equal.
    assert answer["data"] == api_quote["data"]
    assert {k: v for k, v in api_quote["meta"].items() if k in answer["meta"]} == answer["meta"]

    for result, field in ((bad, "checkpoint_minutes"), (unknown, "colour")):
        assert result.is_error
        text = result.content[0]
        assert isinstance(text, types.TextContent)
        assert text.text.startswith(f"error: {field}:"), text.text


def test_each_tool_in_process_answers_as_its_api_route(
    fixture_settings: Settings, fixture_engine: Any, client: TestClient
) -> None:
    from clusterscout.mcp_server.tools import ToolError, call

    def tool(name: str, args: dict[str, Any]) -> Any:
        return call(fixture_engine, fixture_settings, name, args)

    providers = tool("providers", {"multi_node": "yes"})
    api = client.get("/api/v1/providers", params={"multi_node": "yes"}).json()
    assert providers["data"] == api["data"] and providers["count"] == api["count"]

    offers = tool("offers", {"fabric": ["infiniband"], "limit": 5})
    api = client.get("/api/v1/offers", params={"fabric": "infiniband", "limit": 5}).json()
    assert offers["data"] == api["data"] and offers["count"] == api["count"]
    assert offers["meta"]["filters"] == api["meta"]["filters"]

    launch = tool("launch", {"offer_id": offers["data"][0]["id"], "nodes": 2})
    api_launch = client.post(
        "/api/v1/launch", json={"offer_id": offers["data"][0]["id"], "nodes": 2}
    )
    assert launch == api_launch.json()

    for name, args, field in (
        ("providers", {"multi_node": "maybe"}, "multi_node"),
        ("offers", {"min_gbps": "fast"}, "min_gbps"),
        ("offers", {"limit": -1}, "limit"),
        ("quote", {"gpus": 0, "months": 1}, "gpus"),
        ("launch", {"offer_id": "no-such-offer"}, "offer_id"),
    ):
        try:
            tool(name, args)
        except ToolError as exc:
            assert str(exc).startswith(f"{field}:"), (name, str(exc))
        else:
            raise AssertionError(f"{name} accepted {args}")
    try:
        tool("teleport", {})
    except ToolError as exc:
        assert "unknown tool" in str(exc)
    else:
        raise AssertionError("an unknown tool was answered")
