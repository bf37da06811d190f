"""The plan: "do I need multi-node?" and the offers that can host the job, ranked (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from clusterscout.domain.models import GpuSpec
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import canonical_network
from clusterscout.model.cost import billed_hours, effective_usd_per_gpu_hour, job_cost_usd
from clusterscout.model.inputs import ClusterSpec, JobKind, TrainingWorkload
from clusterscout.model.planner.layouts import (
    LayoutSearch,
    choose_gpus,
    has_figures,
    layout_of,
    node_counts,
)
from clusterscout.model.planner.ranking import pick, rank
from clusterscout.model.planner.reasons import ExclusionReason, finetune_assumptions
from clusterscout.model.planner.request import Job, PlanRequest, job_for
from clusterscout.model.planner.results import Exclusion, PlanOffer, PlanOption, PlanResult
from clusterscout.model.planner.serving import plan_serving
from clusterscout.model.planner.verdict import gpu_verdict, job_hours, memory_arithmetic

_Step = tuple[TrainingWorkload, float, int, float, float, Mapping[str, float]] | None
"""Cached model answer per cluster shape: (workload, step time s, steps, efficiency, MFU)."""

SPOT_TIER = "spot"


def _spot_blocked(offer: PlanOffer, nodes: int, request: PlanRequest) -> bool:
    """True when a multi-node option would pay a spot price the request did not allow.

    One pre-empted node stalls a synchronous training job, so spot capacity is only used
    across nodes when the buyer opts in (``allow_spot``).
    """
    return offer.price_tier == SPOT_TIER and nodes > 1 and not request.allow_spot


def _candidates(
    search: LayoutSearch,
    request: PlanRequest,
    offer: PlanOffer,
    gpu: GpuSpec,
    cache: dict[tuple[Any, ...], _Step],
) -> list[PlanOption]:
    """The best option at every node count the offer reaches (one node without a network).

    Multi-node options of a spot-priced offer are left out unless the request allows spot.
    """
    per_node = offer.gpus_per_node or 0
    price = offer.usd_per_gpu_hour or 0.0
    family = search.calibration.family_for(gpu.name)
    networked = offer.fabric is not None and offer.per_node_gbps is not None
    cap = min(request.max_nodes, offer.max_nodes or request.max_nodes) if networked else 1
    out: list[PlanOption] = []
    for nodes in node_counts(cap):
        if _spot_blocked(offer, nodes, request):
            continue
        # Offers with the same GPU, node size and network (as the model reads it: none on one
        # node, GPUDirect only when missing on RDMA) share one model evaluation.
        cluster = canonical_network(
            ClusterSpec(
                gpu, per_node, nodes, offer.fabric, offer.per_node_gbps, offer.gpudirect_rdma
            )
        )
        net = (cluster.fabric, cluster.per_node_gbps, cluster.gpudirect_rdma)
        key = (gpu.name, per_node, *net, nodes)
        if key not in cache:
            best = search.best(cluster)
            if best is None:
                cache[key] = None
            else:
                res = search.memo.result(best.workload, cluster)
                cache[key] = (
                    best.workload,
                    res.step_time_s,
                    best.steps,
                    res.scaling_efficiency,
                    res.mfu,
                    res.breakdown.as_dict(),
                )
        entry = cache[key]
        if entry is None:
            continue
        w, step_s, steps, eff, mfu, parts = entry
        hours = job_hours(steps, step_s)
        out.append(
            PlanOption(
                offer=offer,
                nodes=nodes,
                layout=layout_of(w),
                time_hours=hours,
                # A run shorter than the offer's minimum term still pays the minimum.
                cost_usd=job_cost_usd(
                    price, nodes * per_node, billed_hours(hours, offer.minimum_hours)
                ),
                scaling_efficiency=eff,
                effective_usd_per_gpu_hour=effective_usd_per_gpu_hour(price, eff),
                mfu=mfu,
                steps=steps,
                breakdown=parts,
                calibrated=family.calibrated,
                gpu_family=family.name,
            )
        )
    return out


def _unusable(offer: PlanOffer, gpu: GpuSpec | None, job: Job) -> ExclusionReason | None:
    """Why the offer cannot be evaluated at all, checked in this order, or None."""
    if gpu is None:
        return ExclusionReason.UNKNOWN_GPU
    if not has_figures(gpu, job.precision):
        return ExclusionReason.no_figure(job.precision)
    if offer.usd_per_gpu_hour is None:
        return ExclusionReason.NO_PRICE
    if offer.gpus_per_node is None:
        return ExclusionReason.UNKNOWN_GPUS_PER_NODE
    return None


def _no_candidate_reason(offer: PlanOffer, request: PlanRequest) -> ExclusionReason:
    # An unknown network rules out several nodes whatever the price, so it is said first.
    if offer.fabric is None:
        return ExclusionReason.UNKNOWN_FABRIC
    if offer.per_node_gbps is None:
        return ExclusionReason.UNKNOWN_GBPS
    if offer.price_tier == SPOT_TIER and not request.allow_spot:
        return ExclusionReason.SPOT_MULTI_NODE
    return ExclusionReason.TOO_SMALL


def plan(
    request: PlanRequest,
    offers: Sequence[PlanOffer],
    gpus: Sequence[GpuSpec],
    calibration: Calibration,
) -> PlanResult:
    """Answer "do I need multi-node?" and rank the offers that can host the job.

    For each priced offer, every power-of-two node count up to the offer's (or the
    request's) maximum is tried with the layout that trains the job's tokens fastest and fits
    memory (TP inside the node, the smallest pipeline depth, FSDP vs ZeRO-1, no vs full
    recomputation); the offer contributes its cheapest option and, when different, its
    fastest one, both within budget and deadline (the request's, else 90 days). Spot prices
    are not used across nodes unless the request allows them. Options are sorted by cost,
    with their rank by time and the Pareto front (no other option both cheaper and faster)
    marked; options on a GPU whose family is not calibrated come after every calibrated one
    and carry ``calibrated = False`` (``ranking.rank``). The verdict needs multi-node unless
    one 8-GPU node both holds the job and meets the deadline; it names the fewest nodes that
    meet it, per GPU model and overall.

    Raises:
        InputError: for an invalid request (field named) or an unknown GPU filter.
    """
    if request.job is JobKind.INFERENCE:
        return plan_serving(request, offers, gpus, calibration)
    job = job_for(request)
    choice = choose_gpus(gpus, request.gpu, job.precision, has_figures)
    # One search for the whole plan: the verdicts and every offer share its memory-fit answers.
    search = LayoutSearch(job, calibration)
    verdicts = tuple(gpu_verdict(search, g) for g in choice.considered)
    cache: dict[tuple[Any, ...], _Step] = {}
    options: list[PlanOption] = []
    excluded: list[Exclusion] = []
    timely_nodes: dict[str, int] = {}
    priced: set[str] = set()
    for offer in offers:
        gpu = choice.index.spec(offer.gpu)
        if choice.excludes(gpu):
            continue
        reason = _unusable(offer, gpu, job)
        if gpu is not None and offer.usd_per_gpu_hour is not None:
            priced.add(gpu.name)
        if reason is not None or gpu is None:
            excluded.append(Exclusion(offer, reason or ExclusionReason.UNKNOWN_GPU))
            continue
        candidates = _candidates(search, request, offer, gpu, cache)
        if not candidates:
            excluded.append(Exclusion(offer, _no_candidate_reason(offer, request)))
            continue
        for c in candidates:
            if c.time_hours <= job.deadline_hours:
                timely_nodes[gpu.name] = min(c.nodes, timely_nodes.get(gpu.name, c.nodes))
        chosen = pick(candidates, request.budget_usd, job.deadline_hours)
        if isinstance(chosen, ExclusionReason):
            excluded.append(Exclusion(offer, chosen))
            continue
        options.extend(chosen)
    verdicts = tuple(
        replace(v, nodes_for_deadline=timely_nodes.get(v.gpu), priced=v.gpu in priced)
        for v in verdicts
    )
    one_node_ok = [
        v
        for v in verdicts
        if v.one_node_fits
        and v.one_node_time_hours is not None
        and v.one_node_time_hours <= job.deadline_hours
    ]
    fits = [v.min_gpus_to_fit for v in verdicts if v.min_gpus_to_fit is not None]
    return PlanResult(
        model=job.model,
        seq_len=job.seq_len,
        tokens=job.tokens,
        steps=job.steps,
        needs_multi_node=not one_node_ok,
        min_gpus_to_fit=min(fits) if fits else None,
        memory=memory_arithmetic(job.model, job.kind, job.lora_rank),
        per_gpu=verdicts,
        options=rank(options),
        excluded=tuple(excluded),
        error_band_pct=calibration.band_for(job.model.is_moe),
        assumptions=finetune_assumptions(job.kind.adapters, job.kind is JobKind.QLORA),
        deadline_hours=job.deadline_hours,
        deadline_is_default=job.deadline_is_default,
        nodes_for_deadline=min(timely_nodes.values()) if timely_nodes else None,
        stack=job.stack,
        allow_spot=request.allow_spot,
        job=job.kind,
        lora_rank=job.lora_rank if job.kind.adapters else None,
    )
