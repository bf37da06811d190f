"""OpenAPI descriptions of the query parameters the API really reads.

Parameters are parsed by the one filter parser (``services.find_offers``), not by FastAPI, so
they are documented here, once, and attached to the operations with ``openapi_extra``.
"""

from __future__ import annotations

from typing import Any, Final

from clusterscout.catalog.filters import FILTER_NAMES, SortKey
from clusterscout.domain.models import (
    FabricKind,
    MultiNode,
    OrchestrationKind,
    PriceTier,
    ProvisioningMode,
)
from clusterscout.web import params
from clusterscout.web.schemas import ErrorOut

_BOOL: Final = {"type": "string", "enum": ["true", "false"]}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


FILTER_PARAMETERS: Final[dict[str, tuple[dict[str, Any], str]]] = {
    "multi_node": (_BOOL, "Only offers of providers with (true) or without (false) multi-node."),
    "gpu": (
        _array({"type": "string"}),
        "GPU model, canonical name or alias (repeatable, e.g. H100-SXM-80GB, H100).",
    ),
    "fabric": (
        _array({"type": "string", "enum": list(FabricKind.values())}),
        "Inter-node fabric (repeatable; any of them matches).",
    ),
    "min_gbps": ({"type": "number", "minimum": 0}, "Minimum inter-node Gbit/s per node."),
    "rdma": (_BOOL, "GPUDirect RDMA supported (true) or not (false)."),
    "orchestration": (
        _array({"type": "string", "enum": list(OrchestrationKind.values())}),
        "Managed scheduler (repeatable; all must hold).",
    ),
    "provisioning": (
        _array({"type": "string", "enum": list(ProvisioningMode.values())}),
        "How the cluster can be obtained (repeatable; any of them matches).",
    ),
    "max_price": (
        {"type": "number", "minimum": 0},
        "Maximum from-price, USD per GPU-hour (of price_tier when given, else of any tier).",
    ),
    "min_nodes": ({"type": "integer", "minimum": 0}, "Cluster size (nodes) the offer can reach."),
    "region": ({"type": "string"}, "Region substring, case-insensitive."),
    "provider": (_array({"type": "string"}), "Provider slug (repeatable)."),
    "price_tier": (
        {"type": "string", "enum": list(PriceTier.values())},
        "Only offers priced in this tier; max_price and sort=price then use that tier's "
        "lowest price. The records' from_usd_per_gpu_hour stays the lowest of any tier.",
    ),
}
assert tuple(sorted(FILTER_PARAMETERS)) == tuple(sorted(FILTER_NAMES))  # noqa: S101


def _param(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }
    if schema.get("type") == "array":
        out["style"] = "form"
        out["explode"] = True
    return out


def offer_parameters(*, paged: bool = True) -> list[dict[str, Any]]:
    """Filters, ``sort``, and optionally ``limit``/``offset``, as OpenAPI parameters."""
    out = [_param(n, s, d) for n, (s, d) in FILTER_PARAMETERS.items()]
    out.append(
        _param(
            "sort",
            {"type": "string", "enum": [k.value for k in SortKey], "default": "price"},
            "Ordering; unknown values sort last.",
        )
    )
    if paged:
        out.append(
            _param(
                "limit",
                {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": params.API_MAX_LIMIT,
                    "default": params.API_DEFAULT_LIMIT,
                },
                "Page size.",
            )
        )
        out.append(
            _param(
                "offset",
                {"type": "integer", "minimum": 0, "maximum": params.MAX_OFFSET, "default": 0},
                "Records to skip.",
            )
        )
    return out


def provider_parameters() -> list[dict[str, Any]]:
    """``multi_node`` for the provider list."""
    return [
        _param(
            "multi_node",
            {"type": "string", "enum": list(MultiNode.values())},
            "Only providers with this multi-node status.",
        )
    ]


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": description}


BAD_INPUT: Final[dict[int | str, dict[str, Any]]] = {
    400: _error("Bad input; ``field`` names the parameter at fault.")
}
NOT_FOUND: Final[dict[int | str, dict[str, Any]]] = {404: _error("No such record.")}
CSV_RESPONSE: Final[dict[int | str, dict[str, Any]]] = {
    200: {"content": {"text/csv": {"schema": {"type": "string"}}}, "description": "CSV"}
}
