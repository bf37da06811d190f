"""Pure performance and cost model: memory, collectives, step time, cost, planner (no I/O)."""
