"""``clusterscout mcp``: the catalog, planner, quote and launch files as MCP tools for agents."""
