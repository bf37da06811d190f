"""Estimate and plan services: scenario/plan input from JSON or CLI, run on the stored catalog."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.catalog.calibration import CalibrationError, parse_calibration
from clusterscout.catalog.filters import FILTER_NAMES, FilterError
from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.estimate import estimate
from clusterscout.model.inputs import Precision
from clusterscout.model.planner import DEFAULT_MAX_NODES, PlanOffer, PlanRequest, PlanResult, plan
from clusterscout.model.scenario import ScenarioError, parse_scenario, resolve_gpu
from clusterscout.services import find_offers, gpu_specs
from clusterscout.store import queries

# Which price the planner uses: what a buyer can actually pay for a multi-week run, in order.
TIER_PREFERENCE: Final = ("on_demand", "reserved", "capacity_block", "spot")

PLAN_FIELDS: Final = (
    "model",
    "params",
    "tokens",
    "steps",
    "precision",
    "gpu",
    "max_nodes",
    "budget_usd",
    "deadline_hours",
    "seq_len",
    "batch_tokens",
    "provider",
    "fabric",
    "rdma",
    "min_gbps",
    "provisioning",
    "orchestration",
    "region",
)


def stored_calibration(conn: Connection) -> Calibration:
    """Calibration constants saved with the build.

    Raises:
        CalibrationError: when the database was built without them.
    """
    text = queries.read_meta(conn).get("calibration_toml")
    if not text:
        msg = "the database has no calibration; rebuild it with clusterscout build-db"
        raise CalibrationError(msg)
    return parse_calibration(text, "stored calibration")


def run_estimate(conn: Connection, body: Any) -> dict[str, Any]:
    """Validate a scenario and run the model.

    Raises:
        ScenarioError: naming the field at fault.
    """
    if not isinstance(body, Mapping):
        raise ScenarioError("scenario", "must be a JSON object")
    scenario = parse_scenario(body)
    gpu = resolve_gpu(scenario.cluster.gpu, gpu_specs(conn))
    result = estimate(scenario, gpu, stored_calibration(conn)).to_dict()
    return {"kind": scenario.kind, "gpu": gpu.name, **result}


def _number(body: Mapping[str, Any], key: str, *, integer: bool = False) -> Any:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ScenarioError(key, f"{value!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ScenarioError(key, "must be a finite number")
    if integer:
        if value != int(value):
            raise ScenarioError(key, "must be a whole number")
        return int(value)
    return float(value)


def plan_request(body: Mapping[str, Any]) -> PlanRequest:
    """A PlanRequest from JSON-like input (API body or CLI flags).

    Raises:
        ScenarioError: naming the field at fault.
    """
    unknown = sorted(set(body) - set(PLAN_FIELDS))
    if unknown:
        raise ScenarioError(unknown[0], f"unknown field (known: {', '.join(PLAN_FIELDS)})")
    preset = body.get("model")
    if preset is not None and not isinstance(preset, str):
        raise ScenarioError("model", "must be a preset name such as 70B")
    precision_raw = body.get("precision", "bf16")
    try:
        precision = Precision(str(precision_raw).lower())
    except ValueError:
        raise ScenarioError("precision", "must be bf16 or fp8") from None
    gpu = body.get("gpu")
    if gpu is not None and not isinstance(gpu, str):
        raise ScenarioError("gpu", "must be a GPU name")
    max_nodes = _number(body, "max_nodes", integer=True)
    steps = _number(body, "steps", integer=True)
    seq_len = _number(body, "seq_len", integer=True)
    batch_tokens = _number(body, "batch_tokens", integer=True)
    return PlanRequest(
        params=_number(body, "params"),
        preset=preset,
        tokens=_number(body, "tokens"),
        steps=steps,
        precision=precision,
        gpu=gpu or None,
        max_nodes=max_nodes if max_nodes is not None else DEFAULT_MAX_NODES,
        budget_usd=_number(body, "budget_usd"),
        deadline_hours=_number(body, "deadline_hours"),
        seq_len=seq_len,
        batch_tokens=batch_tokens,
    )


def _chosen_price(record: Mapping[str, Any]) -> tuple[float | None, str | None]:
    prices = record.get("prices") or []
    for tier in TIER_PREFERENCE:
        values = [p["usd_per_gpu_hour"] for p in prices if p["tier"] == tier]
        if values:
            return min(values), tier
    return None, None


def plan_offer(record: Mapping[str, Any]) -> PlanOffer:
    """The planner's view of an offer record: reach, fabric and the price a run would pay."""
    price, tier = _chosen_price(record)
    reach = [n for n in (record.get("max_nodes"), record.get("max_nodes_by_quote")) if n]
    fabric = record.get("fabric")
    return PlanOffer(
        offer_id=record["id"],
        provider=record["provider"],
        gpu=record["gpu"],
        gpus_per_node=record.get("gpus_per_node"),
        fabric=FabricKind(fabric) if fabric else None,
        per_node_gbps=record.get("per_node_gbps"),
        gpudirect_rdma=record.get("gpudirect_rdma"),
        max_nodes=max(reach) if reach else None,
        usd_per_gpu_hour=price,
        price_tier=tier,
    )


def _filter_params(body: Mapping[str, Any]) -> dict[str, list[str]]:
    params: dict[str, list[str]] = {"multi_node": ["true"]}
    for key in FILTER_NAMES:
        if key in {"gpu", "multi_node"} or body.get(key) in (None, "", []):
            continue
        value = body[key]
        values: Sequence[Any] = value if isinstance(value, list) else [value]
        params[key] = [
            ("true" if v else "false") if isinstance(v, bool) else str(v) for v in values
        ]
    return params


def run_plan(conn: Connection, body: Any) -> PlanResult:
    """Plan a training job over the catalog's multi-node offers.

    Raises:
        ScenarioError: naming the field at fault (filter errors are converted).
    """
    if not isinstance(body, Mapping):
        raise ScenarioError("plan", "must be a JSON object")
    request = plan_request(body)
    try:
        _, _, page = find_offers(conn, _filter_params(body))
    except FilterError as exc:
        raise ScenarioError(exc.field, exc.message) from None
    offers = [plan_offer(r) for r in page.records]
    return plan(request, offers, gpu_specs(conn), stored_calibration(conn))
