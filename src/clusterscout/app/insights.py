"""Insights for pages: the plan's scaling curves and the listings' reference-workload figures.

They reuse the planner's parts as they are (layout search, node sweep, reasons); only the I/O
(catalog records, stored calibration) is here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.app.estimates import stored_calibration
from clusterscout.app.offers import gpu_specs
from clusterscout.app.plans import plan_inputs, plan_offer, reach
from clusterscout.catalog.records import record_price
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.model.calibration import Calibration
from clusterscout.model.cost import effective_usd_per_gpu_hour
from clusterscout.model.inputs import (
    ClusterSpec,
    JobKind,
    Parallelism,
    Precision,
    Recompute,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.memory import memory_per_gpu
from clusterscout.model.planner.layouts import best_layout, has_figures, node_counts
from clusterscout.model.planner.reasons import ExclusionReason
from clusterscout.model.planner.request import job_for
from clusterscout.model.planner.results import PlanOffer
from clusterscout.model.presets import find_preset
from clusterscout.model.training import train_step

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
    """The planner's node counts up to ``max_nodes``, capped at SWEEP_MAX_NODES."""
    return node_counts(max(1, min(max_nodes, SWEEP_MAX_NODES)))


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
        InputError: as ``plans.run_plan``.
    """
    request, _, records = plan_inputs(conn, body)
    if request.job is JobKind.INFERENCE:
        return []  # serving has no training steps to scale
    job = job_for(request)
    gpus = gpu_specs(conn)
    calibration = stored_calibration(conn)
    by_name = {g.name: g for g in gpus}
    wanted = GpuIndex.of(gpus).require(request.gpu, "gpu").name if request.gpu else None
    usable = {
        g.name
        for g in gpus
        if (wanted is None or g.name == wanted) and has_figures(g, request.precision)
    }
    curves = []
    for offer in _representatives([plan_offer(r) for r in records], usable):
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

    ``reason`` says why a figure is missing (``NO_PRICE`` leaves the efficiency known).
    ``max_nodes`` is the offer's reach when it is below the workload's node count.
    """

    offer_id: str
    usd_per_gpu_hour: float | None
    scaling_efficiency: float | None
    effective_usd_per_gpu_hour: float | None
    reason: ExclusionReason | None = None
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
    most = reach(record)
    short = most if most is not None and most < ref.nodes else None

    def missing(reason: ExclusionReason) -> ReferenceEstimate:
        return ReferenceEstimate(record["id"], price, None, None, reason, short)

    fabric = record.get("fabric")
    gbps = record.get("per_node_gbps")
    per_node = record.get("gpus_per_node")
    if not fabric:
        return missing(ExclusionReason.UNKNOWN_FABRIC)
    if gbps is None:
        return missing(ExclusionReason.UNKNOWN_GBPS)
    if not per_node:
        return missing(ExclusionReason.UNKNOWN_GPUS_PER_NODE)
    gpu = GpuIndex.of(gpus).spec(str(record.get("gpu")))
    if gpu is None or not has_figures(gpu, Precision.BF16):
        return missing(ExclusionReason.UNKNOWN_GPU_FIGURES)
    workload = _reference_workload(ref, gpu, per_node, calibration)
    if workload is None:
        return missing(ExclusionReason.DOES_NOT_FIT)
    cluster = ClusterSpec(
        gpu, per_node, ref.nodes, FabricKind(fabric), gbps, record.get("gpudirect_rdma")
    )
    eff = train_step(workload, cluster, calibration).scaling_efficiency
    effective = effective_usd_per_gpu_hour(price, eff) if price is not None else None
    reason = None if price is not None else ExclusionReason.NO_PRICE
    return ReferenceEstimate(record["id"], price, eff, effective, reason, short)


def reference_inputs(conn: Connection) -> tuple[tuple[GpuSpec, ...], Calibration]:
    """GPU figures and calibration for reference estimates.

    Raises:
        CalibrationError: when the database has no calibration.
    """
    return gpu_specs(conn), stored_calibration(conn)
