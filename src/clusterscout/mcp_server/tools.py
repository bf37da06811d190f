"""The MCP tools: their names, typed inputs (JSON schema from the fields table) and answers.

Each tool calls the same application service as the JSON API and returns the API's JSON for
the same inputs, so an agent and an HTTP client read one shape. Independent of the MCP SDK
(``server.py`` wires these to it), so the answers are testable without a protocol session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Connection, Engine

from clusterscout.app import directory, estimates, offers, plans, quote_service
from clusterscout.app import launch as launching
from clusterscout.app.errors import Operation, failure_of
from clusterscout.domain.errors import InputError
from clusterscout.settings import Settings
from clusterscout.web.api_docs import (
    ESTIMATE_BODY,
    FILTER_PARAMETERS,
    plan_body_schema,
    provider_parameters,
)
from clusterscout.web.schemas import estimate_json, launch_json, plan_json
from clusterscout.web.viewmodels import today

MAX_LIMIT: Final = 200
"""Most offers one call returns (the API's page limit)."""


class ToolError(Exception):
    """A failure the agent sees as the tool's error: ``field: what is wrong``."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: what it does, its input schema, and the service that answers it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    run: Callable[[Connection, Settings, dict[str, Any]], dict[str, Any]]
    operation: Operation = Operation.MODEL


def _only(args: Mapping[str, Any], known: set[str]) -> None:
    unknown = sorted(set(args) - known)
    if unknown:
        raise InputError(unknown[0], f"unknown argument (known: {', '.join(sorted(known))})")


def _providers(conn: Connection, _settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    # The directory the API serves: multi-node status, every offer filter and the sort.
    _only(args, {p["name"] for p in provider_parameters()} - {"lang"})
    params = {k: _as_values(v) for k, v in args.items() if v is not None}
    found = directory.directory(conn, params)
    return {"data": found.rows, "count": len(found.rows)}


def _as_values(value: Any) -> list[str]:
    items = value if isinstance(value, list | tuple) else [value]
    return [("true" if v else "false") if isinstance(v, bool) else str(v) for v in items]


def _int_arg(args: Mapping[str, Any], name: str, default: int, top: int) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise InputError(name, f"must be a whole number between 0 and {top}")
    return value


def _offers(conn: Connection, settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    _only(args, {*FILTER_PARAMETERS, "sort", "limit", "offset"})
    limit = _int_arg(args, "limit", 50, MAX_LIMIT) or 1
    offset = _int_arg(args, "offset", 0, 10**9)
    params = {
        k: _as_values(v) for k, v in args.items() if k not in {"limit", "offset"} and v is not None
    }
    f, sort, page = offers.find_offers(conn, params, limit, offset)
    records = offers.mark_freshness(page.records, settings.stale_after_days, today())
    filters: dict[str, list[str]] = {}
    for key, value in f.to_params():
        filters.setdefault(key, []).append(value)
    meta = {"filters": filters, "sort": sort.value, "limit": limit, "offset": offset}
    return {"data": records, "count": page.count, "meta": meta}


def _plan(conn: Connection, _settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    return plan_json(plans.run_plan(conn, args))


def _estimate(conn: Connection, _settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    return estimate_json(estimates.run_estimate(conn, args))


def _quote(conn: Connection, settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    _only(args, set(quote_service.PARAMS))
    raw = {k: None if args.get(k) is None else str(args[k]) for k in quote_service.PARAMS}
    asked = quote_service.parse_request(conn, raw, today())
    return quote_service.quote(
        conn,
        asked,
        quote_service.rates_of(settings.data_dir),
        today=today(),
        stale_after_days=settings.stale_after_days,
    )


def _launch(conn: Connection, settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    data = launching.launch_data(settings.data_dir)
    answer = launching.run_launch(data, args, lambda plan, k: launching.plan_option(conn, plan, k))
    return launch_json(answer)


_BOOL_OR_WORD: Final = {"anyOf": [{"type": "boolean"}, {"type": "string"}]}


def _provider_schema() -> dict[str, Any]:
    props = {
        p["name"]: {**p["schema"], "description": p["description"]}
        for p in provider_parameters()
        if p["name"] != "lang"
    }
    return {"type": "object", "properties": props, "additionalProperties": False}


def _offer_schema() -> dict[str, Any]:
    props: dict[str, Any] = {}
    for name, (schema, help_text) in FILTER_PARAMETERS.items():
        props[name] = {**schema, "description": help_text}
    props["sort"] = {"type": "string", "description": "price (default), gbps, gpu, provider..."}
    props["limit"] = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 50}
    props["offset"] = {"type": "integer", "minimum": 0, "default": 0}
    return {"type": "object", "properties": props, "additionalProperties": False}


def _plan_schema() -> dict[str, Any]:
    # The API's body schema; its top-level allOf/oneOf is kept out of the tool's schema (some
    # clients accept only plain object schemas) and said in words instead.
    schema = plan_body_schema()
    return {
        "type": "object",
        "properties": schema["properties"],
        "additionalProperties": False,
        "description": "Give model (a preset such as 70B) or params, and tokens or steps.",
    }


TOOLS: Final[tuple[Tool, ...]] = (
    Tool(
        "providers",
        "The provider directory: every GPU cloud provider of the catalog, filtered by multi-node "
        "status (yes, no, unknown) and by the offer filters (a provider passes when one of its "
        "offers does), with fabrics, ClusterMAX tier, cheapest price and checklist facts "
        "known. Same JSON as GET /api/v1/providers.",
        _provider_schema(),
        _providers,
        Operation.LISTING,
    ),
    Tool(
        "offers",
        "GPU offers matching every filter (GPU, fabric, bandwidth, RDMA, price, region...), "
        "sorted and paged. Same JSON as GET /api/v1/offers.",
        _offer_schema(),
        _offers,
        Operation.LISTING,
    ),
    Tool(
        "plan",
        "Plan a training (or inference) job over the multi-node offers: do I need multi-node, "
        "options ranked by cost with time, goodput under interruptions, and exclusions with "
        "reasons. Same JSON as POST /api/v1/plan.",
        _plan_schema(),
        _plan,
    ),
    Tool(
        "quote",
        "Commitment quote: N GPUs for M months, totalled per provider for every published "
        "term, in USD, EUR and BRL. Same JSON as GET /api/v1/quote.",
        {
            "type": "object",
            "properties": {
                "gpus": {"type": "integer", "minimum": 1, "description": "GPUs to rent."},
                "months": {"type": "number", "exclusiveMinimum": 0, "description": "Months."},
                "start": {"type": "string", "description": "First day, YYYY-MM-DD (today)."},
                "gpu": {"type": "string", "description": "Only this GPU model (name or alias)."},
            },
            "required": ["gpus", "months"],
            "additionalProperties": False,
        },
        _quote,
        Operation.LISTING,
    ),
    Tool(
        "estimate",
        "Run the performance model on one scenario (a collective or a training step on a "
        "cluster). Same JSON as POST /api/v1/estimate.",
        dict(ESTIMATE_BODY),
        _estimate,
    ),
    Tool(
        "launch",
        "Launch files (SkyPilot, dstack, Slurm) and an nccl-tests fabric check for an offer, "
        "or for option K of a plan. Same JSON as POST /api/v1/launch.",
        {
            "type": "object",
            "required": ["offer_id"],
            "properties": {
                "offer_id": {"type": "string"},
                "nodes": {"type": "integer", "minimum": 1},
                "format": {"type": "string", "enum": ["skypilot", "dstack", "slurm"]},
                "layout": {"type": "object"},
                "plan": {"type": "object", "description": "a plan tool's arguments"},
                "plan_option": {"type": "integer", "minimum": 1},
            },
            "additionalProperties": False,
        },
        _launch,
        Operation.LAUNCH,
    ),
)
TOOLS_BY_NAME: Final = {t.name: t for t in TOOLS}


def call(engine: Engine, settings: Settings, name: str, args: Mapping[str, Any] | None) -> Any:
    """The answer of tool ``name`` for ``args``.

    Raises:
        ToolError: for an unknown tool or bad input (the message names the field), or any
            failure a user should see; other exceptions are bugs and propagate.
    """
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise ToolError(f"unknown tool {name[:60]!r} (known: {', '.join(TOOLS_BY_NAME)})")
    try:
        with engine.connect() as conn:
            return tool.run(conn, settings, dict(args or {}))
    except Exception as exc:
        failure = failure_of(exc, tool.operation)
        if failure is None:
            raise
        raise ToolError(failure.message) from None
