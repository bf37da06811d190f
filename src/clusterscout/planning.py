"""Estimate and plan services: scenario/plan input from JSON or CLI, run on the stored catalog."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.catalog.calibration import CalibrationError, parse_calibration
from clusterscout.catalog.filters import FILTER_NAMES, FilterError
from clusterscout.catalog.records import record_price
from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.model.calibration import Calibration
from clusterscout.model.cost import effective_usd_per_gpu_hour
from clusterscout.model.estimate import estimate
from clusterscout.model.inputs import (
    ClusterSpec,
    Parallelism,
    Precision,
    Recompute,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.memory import memory_per_gpu
from clusterscout.model.planner import (
    DEFAULT_MAX_NODES,
    PlanOffer,
    PlanRequest,
    PlanResult,
    best_layout,
    has_figures,
    job_for,
    plan,
)
from clusterscout.model.presets import find_preset
from clusterscout.model.scenario import ScenarioError, parse_scenario, resolve_gpu
from clusterscout.model.training import train_step
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
    "price_tier",
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
    require_finite(result, "scenario")
    return {"kind": scenario.kind, "gpu": gpu.name, **result}


def require_finite(data: Any, field: str, path: str = "") -> None:
    """Refuse an answer holding NaN or an infinity (not JSON; never a real estimate).

    The validators bound every input, so this is a backstop: whatever combination slips
    through is reported as bad input naming ``field`` instead of producing invalid JSON.

    Raises:
        ScenarioError: naming ``field`` and the output that is not finite.
    """
    if isinstance(data, float) and not math.isfinite(data):
        msg = f"the model cannot evaluate these sizes ({path or 'result'} is not finite)"
        raise ScenarioError(field, msg)
    if isinstance(data, Mapping):
        for key, value in data.items():
            require_finite(value, field, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            require_finite(value, field, f"{path}[{i}]")


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


def _chosen_price(
    record: Mapping[str, Any], tiers: Sequence[str] = TIER_PREFERENCE
) -> tuple[float | None, str | None]:
    for tier in tiers:
        price = record_price(record, tier)
        if price is not None:
            return price, tier
    return None, None


def plan_offer(record: Mapping[str, Any], tier: str | None = None) -> PlanOffer:
    """The planner's view of an offer record: reach, fabric and the price a run would pay.

    The price is ``tier``'s when given, else the first tier of ``TIER_PREFERENCE`` it has.
    """
    price, tier = _chosen_price(record, (tier,) if tier else TIER_PREFERENCE)
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
        f, _, page = find_offers(conn, _filter_params(body))
    except FilterError as exc:
        raise ScenarioError(exc.field, exc.message) from None
    tier = f.price_tier.value if f.price_tier else None
    offers = [plan_offer(r, tier) for r in page.records]
    result = plan(request, offers, _rentable_gpus(conn), stored_calibration(conn))
    require_finite(result.to_dict(), "plan")
    return result


def _rentable_gpus(conn: Connection) -> tuple[GpuSpec, ...]:
    """GPU models that some multi-node offer sells; the verdict is about what can be rented.

    Falls back to every known GPU when no offer names one (an empty catalog).
    """
    offered = set(queries.gpu_names(conn))
    specs = gpu_specs(conn)
    return tuple(g for g in specs if g.name in offered) or specs


# --- charts and listings (web) ----------------------------------------------------------------
# Helpers for the plan page's scaling chart and the listings' reference-workload columns. They
# reuse the model package as is; only the I/O (catalog records, stored calibration) is here.

SWEEP_MAX_NODES: Final = 256


@dataclass(frozen=True, slots=True)
class ScalingCurve:
    """Predicted scaling efficiency over node counts on one fabric's representative offer.

    ``points`` pairs a node count with the efficiency of the planner's best layout there,
    or None when the job does not fit in memory on that many nodes.
    """

    fabric: str
    offer: PlanOffer
    points: tuple[tuple[int, float | None], ...]


def sweep_node_counts(max_nodes: int) -> tuple[int, ...]:
    """Powers of two from 1 up to ``max_nodes`` (capped at SWEEP_MAX_NODES), plus the cap."""
    cap = max(1, min(max_nodes, SWEEP_MAX_NODES))
    counts = [1 << i for i in range(cap.bit_length()) if (1 << i) <= cap]
    if counts[-1] != cap:
        counts.append(cap)
    return tuple(counts)


def _representatives(offers: Sequence[PlanOffer], gpu_names: set[str]) -> list[PlanOffer]:
    """Per fabric, the networked offer with the most bandwidth per node (then the largest)."""
    best: dict[str, PlanOffer] = {}
    for o in offers:
        if o.fabric is None or o.per_node_gbps is None or not o.gpus_per_node:
            continue
        if o.gpu not in gpu_names:
            continue
        key = (o.per_node_gbps, o.max_nodes or 0, o.offer_id)
        current = best.get(o.fabric.value)
        if current is None or key > (
            current.per_node_gbps or 0.0,
            current.max_nodes or 0,
            current.offer_id,
        ):
            best[o.fabric.value] = o
    return [best[k] for k in sorted(best)]


def scaling_curves(conn: Connection, body: Any) -> list[ScalingCurve]:
    """Scaling efficiency vs node count for the planned job, one curve per fabric.

    Each fabric is represented by its offer with the most bandwidth per node among the offers
    the plan considers (same filters and GPU choice); node counts are powers of two up to the
    request's ``max_nodes``. Each point uses the planner's own layout search, so the chart and
    the ranked table agree.

    Raises:
        ScenarioError: as :func:`run_plan`.
    """
    if not isinstance(body, Mapping):
        raise ScenarioError("plan", "must be a JSON object")
    request = plan_request(body)
    job = job_for(request)
    try:
        _, _, page = find_offers(conn, _filter_params(body))
    except FilterError as exc:
        raise ScenarioError(exc.field, exc.message) from None
    gpus = gpu_specs(conn)
    calibration = stored_calibration(conn)
    by_name = {g.name: g for g in gpus}
    wanted = resolve_gpu(request.gpu, gpus, field="gpu").name if request.gpu else None
    usable = {
        g.name
        for g in gpus
        if (wanted is None or g.name == wanted) and has_figures(g, request.precision)
    }
    curves = []
    for offer in _representatives([plan_offer(r) for r in page.records], usable):
        gpu = by_name[offer.gpu]
        points: list[tuple[int, float | None]] = []
        for nodes in sweep_node_counts(request.max_nodes):
            cluster = ClusterSpec(
                gpu,
                offer.gpus_per_node or 0,
                nodes,
                offer.fabric,
                offer.per_node_gbps,
                offer.gpudirect_rdma,
            )
            best = best_layout(job, cluster, calibration)
            eff = None
            if best is not None:
                eff = train_step(best.workload, cluster, calibration).scaling_efficiency
            points.append((nodes, eff))
        curves.append(
            ScalingCurve(offer.fabric.value if offer.fabric else "", offer, tuple(points))
        )
    return curves


@dataclass(frozen=True, slots=True)
class ReferenceWorkload:
    """A fixed training job used to compare offers in the listings.

    ``layouts`` lists (tp, pp) pairs tried in order; the first that fits memory (without, then
    with full activation recomputation) is used.
    """

    key: str
    preset: str
    sharding: Sharding
    nodes: int
    layouts: tuple[tuple[int, int], ...]


REFERENCE_WORKLOADS: Final[Mapping[str, ReferenceWorkload]] = {
    w.key: w
    for w in (
        ReferenceWorkload("8b-fsdp-4", "8B", Sharding.FSDP, 4, ((1, 1), (2, 1), (4, 1), (8, 1))),
        ReferenceWorkload(
            "70b-fsdp-16", "70B", Sharding.FSDP, 16, ((1, 1), (2, 1), (4, 1), (8, 1))
        ),
        ReferenceWorkload("70b-3d-32", "70B", Sharding.ZERO1, 32, ((8, 1), (8, 2), (8, 4), (8, 8))),
        ReferenceWorkload("405b-3d-64", "405B", Sharding.ZERO1, 64, ((8, 8), (8, 16), (8, 32))),
    )
}


@dataclass(frozen=True, slots=True)
class ReferenceEstimate:
    """Predicted scaling efficiency and effective price of one offer on a reference workload.

    ``reason`` says why a figure is missing: ``no price`` (efficiency may still be known),
    ``unknown fabric``, ``unknown GPUs per node``, ``unknown GPU figures`` or ``does not fit``.
    ``max_nodes`` is the offer's reach when it is below the workload's node count.
    """

    offer_id: str
    usd_per_gpu_hour: float | None
    scaling_efficiency: float | None
    effective_usd_per_gpu_hour: float | None
    reason: str | None = None
    max_nodes: int | None = None


def _reference_workload(
    ref: ReferenceWorkload, gpu: GpuSpec, gpus_per_node: int, calibration: Calibration
) -> TrainingWorkload | None:
    preset = find_preset(ref.preset)
    if preset is None:  # pragma: no cover - REFERENCE_WORKLOADS names known presets
        return None
    gpus = ref.nodes * gpus_per_node
    global_batch = max(1, preset.batch_tokens // preset.seq_len)
    for tp, pp in ref.layouts:
        if tp > gpus_per_node or gpus % (tp * pp) or preset.shape.heads % tp:
            continue
        dp = gpus // (tp * pp)
        for recompute in (Recompute.NONE, Recompute.FULL):
            w = TrainingWorkload(
                model=preset.shape,
                seq_len=preset.seq_len,
                global_batch=max(dp, round(global_batch / dp) * dp),
                micro_batch=1,
                precision=Precision.BF16,
                parallelism=Parallelism(tp=tp, pp=pp, dp=dp, sharding=ref.sharding),
                recompute=recompute,
            )
            if memory_per_gpu(w, gpu, calibration).fits:
                return w
    return None


def reference_estimate(
    record: Mapping[str, Any],
    ref: ReferenceWorkload,
    gpus: Sequence[GpuSpec],
    calibration: Calibration,
    tier: str | None = None,
) -> ReferenceEstimate:
    """Scaling efficiency and effective price (lowest list price / efficiency) of an offer.

    ``tier`` picks the list price of one tier (default: the lowest of any tier).
    One model call (``train_step``) per offer; layouts are checked for memory only.
    """
    price = record_price(record, tier)
    reach = [n for n in (record.get("max_nodes"), record.get("max_nodes_by_quote")) if n]
    short = max(reach) if reach and max(reach) < ref.nodes else None

    def missing(reason: str) -> ReferenceEstimate:
        return ReferenceEstimate(record["id"], price, None, None, reason, short)

    fabric = record.get("fabric")
    gbps = record.get("per_node_gbps")
    per_node = record.get("gpus_per_node")
    if not fabric:
        return missing("unknown fabric")
    if gbps is None:
        return missing("unknown Gbit/s per node")
    if not per_node:
        return missing("unknown GPUs per node")
    try:
        gpu = resolve_gpu(str(record.get("gpu")), gpus)
    except ScenarioError:
        return missing("unknown GPU figures")
    if not has_figures(gpu, Precision.BF16):
        return missing("unknown GPU figures")
    workload = _reference_workload(ref, gpu, per_node, calibration)
    if workload is None:
        return missing("does not fit")
    cluster = ClusterSpec(
        gpu, per_node, ref.nodes, FabricKind(fabric), gbps, record.get("gpudirect_rdma")
    )
    eff = train_step(workload, cluster, calibration).scaling_efficiency
    effective = effective_usd_per_gpu_hour(price, eff) if price is not None else None
    return ReferenceEstimate(
        record["id"], price, eff, effective, None if price is not None else "no price", short
    )
