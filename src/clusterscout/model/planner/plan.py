"""The plan: "do I need multi-node?" and the offers that can host the job, ranked (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.model.allin import AllInCost, Footprint, all_in_cost, footprint
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import canonical_network
from clusterscout.model.cost import billed_hours, effective_usd_per_gpu_hour, job_cost_usd
from clusterscout.model.goodput import Reliability, goodput_of
from clusterscout.model.inputs import ClusterSpec, JobKind, TrainingWorkload
from clusterscout.model.planner.layouts import (
    LayoutSearch,
    choose_gpus,
    has_figures,
    layout_of,
    node_counts,
)
from clusterscout.model.planner.ranking import pick, rank
from clusterscout.model.planner.reasons import (
    Assumption,
    ExclusionReason,
    finetune_assumptions,
)
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


def _evaluate(
    search: LayoutSearch,
    gpu: GpuSpec,
    per_node: int,
    nodes: int,
    network: tuple[FabricKind | None, float | None, bool | None],
    cache: dict[tuple[Any, ...], _Step],
) -> _Step:
    """The model's answer for one cluster shape, shared by offers with the same network."""
    # Offers with the same GPU, node size and network (as the model reads it: none on one
    # node, GPUDirect only when missing on RDMA) share one model evaluation.
    cluster = canonical_network(ClusterSpec(gpu, per_node, nodes, *network))
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
    return cache[key]


def _networks(
    offer: PlanOffer,
) -> tuple[tuple[FabricKind | None, float | None, bool | None], ...]:
    """The networks an offer is evaluated on: its own, or the two ends of what is assumed."""
    if offer.assumed is None:
        return ((offer.fabric, offer.per_node_gbps, offer.gpudirect_rdma),)
    low, high = offer.assumed.low, offer.assumed.high
    return (
        (low.fabric, low.per_node_gbps, low.gpudirect_rdma),
        (high.fabric, high.per_node_gbps, high.gpudirect_rdma),
    )


def _candidates(
    search: LayoutSearch,
    request: PlanRequest,
    offer: PlanOffer,
    gpu: GpuSpec,
    cache: dict[tuple[Any, ...], _Step],
    reliability: Reliability | None = None,
) -> list[PlanOption]:
    """The best option at every node count the offer reaches (one node without a network).

    Multi-node options of a spot-priced offer are left out unless the request allows spot.
    An offer with an assumed network is evaluated at both ends: the option's time and cost are
    the pessimistic end's (its layout too), ``time_hours_best``/``cost_usd_best`` the other's.
    An offer without a price is costed at one dollar per GPU-hour, so its cost is its GPU-hours
    (the caller shows it as price on request).
    """
    per_node = offer.gpus_per_node or 0
    price = offer.usd_per_gpu_hour if offer.usd_per_gpu_hour is not None else 1.0
    family = search.calibration.family_for(gpu.name)
    networked = offer.assumed is not None or (
        offer.fabric is not None and offer.per_node_gbps is not None
    )
    cap = min(request.max_nodes, offer.max_nodes or request.max_nodes) if networked else 1
    out: list[PlanOption] = []
    for nodes in node_counts(cap):
        if _spot_blocked(offer, nodes, request):
            continue
        ends = [_evaluate(search, gpu, per_node, nodes, n, cache) for n in _networks(offer)]
        entry = ends[0]
        if entry is None:
            continue
        w, step_s, steps, eff, mfu, parts = entry
        hours = job_hours(steps, step_s)
        # A run shorter than the offer's minimum term still pays the minimum, and an hourly
        # bill pays whole hours.
        cost = job_cost_usd(
            price,
            nodes * per_node,
            billed_hours(hours, offer.minimum_hours, offer.billing_increment_hours),
        )
        best_hours = best_cost = None
        if offer.assumed is not None and nodes > 1 and ends[-1] is not None:
            best_hours = job_hours(ends[-1][2], ends[-1][1])
            best_cost = job_cost_usd(
                price,
                nodes * per_node,
                billed_hours(best_hours, offer.minimum_hours, offer.billing_increment_hours),
            )
        out.append(
            PlanOption(
                offer=offer,
                nodes=nodes,
                layout=layout_of(w),
                time_hours=hours,
                cost_usd=cost,
                scaling_efficiency=eff,
                effective_usd_per_gpu_hour=effective_usd_per_gpu_hour(price, eff),
                mfu=mfu,
                steps=steps,
                breakdown=parts,
                calibrated=family.calibrated,
                gpu_family=family.name,
                time_hours_best=best_hours,
                cost_usd_best=best_cost,
                goodput=None
                if reliability is None
                else goodput_of(hours, nodes * per_node, price, reliability, offer.minimum_hours),
            )
        )
    return out


def _all_in(option: PlanOption, fp: Footprint) -> AllInCost | None:
    """The option's all-in cost: its compute with interruptions, where known, plus storage and
    egress; None when interruptions keep the run from ever finishing."""
    compute, hours = option.cost_usd, option.time_hours
    g = option.goodput
    if g is not None:
        if g.cost_usd is None or g.time_hours is None:
            return None
        compute, hours = g.cost_usd, g.time_hours
    offer = option.offer
    return all_in_cost(
        compute, hours, fp, offer.storage_usd_per_gib_month, offer.egress_usd_per_gib
    )


def _unusable(offer: PlanOffer, gpu: GpuSpec | None, job: Job) -> ExclusionReason | None:
    """Why the offer cannot be evaluated at all, checked in this order, or None."""
    if gpu is None:
        return ExclusionReason.UNKNOWN_GPU
    if not has_figures(gpu, job.precision):
        return ExclusionReason.no_figure(job.precision)
    if offer.gpus_per_node is None:
        return ExclusionReason.UNKNOWN_GPUS_PER_NODE
    return None


def _no_candidate_reason(offer: PlanOffer, request: PlanRequest) -> ExclusionReason:
    # An unknown network rules out several nodes whatever the price, so it is said first.
    if offer.fabric is None and offer.assumed is None:
        return ExclusionReason.UNKNOWN_FABRIC
    if offer.per_node_gbps is None and offer.assumed is None:
        return ExclusionReason.UNKNOWN_GBPS
    if offer.price_tier == SPOT_TIER and not request.allow_spot:
        return ExclusionReason.SPOT_MULTI_NODE
    return ExclusionReason.TOO_SMALL


def _data_assumptions(
    options: Sequence[PlanOption], on_request: Sequence[PlanOption]
) -> tuple[Assumption, ...]:
    """The assumptions about missing catalog facts that some option of the answer rests on."""
    every = [*options, *on_request]
    out = []
    if any(o.offer.assumed is not None for o in every):
        out.append(Assumption.NETWORK_BRACKET)
    if on_request:
        out.append(Assumption.PRICE_ON_REQUEST)
    if any(o.offer.price_source == "buyer" for o in every):
        out.append(Assumption.BUYER_PRICE)
    return tuple(out)


def plan(
    request: PlanRequest,
    offers: Sequence[PlanOffer],
    gpus: Sequence[GpuSpec],
    calibration: Calibration,
    reliability: Reliability | None = None,
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
    meet it, per GPU model and overall. Given ``reliability`` (the request's own figures
    replace its defaults), every option also carries its goodput: the interruptions expected
    and the time and cost they add; ranking, budget and deadline stay on failure-free figures.

    Raises:
        InputError: for an invalid request (field named) or an unknown GPU filter.
    """
    if request.job is JobKind.INFERENCE:
        return plan_serving(request, offers, gpus, calibration)
    job = job_for(request)
    if reliability is not None:
        reliability = reliability.overridden(
            request.failures_per_million_gpu_hours,
            request.checkpoint_minutes,
            request.restart_minutes,
        )
    choice = choose_gpus(gpus, request.gpu, job.precision, has_figures)
    # One search for the whole plan: the verdicts and every offer share its memory-fit answers.
    search = LayoutSearch(job, calibration)
    verdicts = tuple(gpu_verdict(search, g) for g in choice.considered)
    cache: dict[tuple[Any, ...], _Step] = {}
    options: list[PlanOption] = []
    on_request: list[PlanOption] = []
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
        candidates = _candidates(search, request, offer, gpu, cache, reliability)
        if not candidates:
            excluded.append(Exclusion(offer, _no_candidate_reason(offer, request)))
            continue
        unpriced = offer.usd_per_gpu_hour is None
        for c in candidates:
            if c.time_hours <= job.deadline_hours and not unpriced:
                timely_nodes[gpu.name] = min(c.nodes, timely_nodes.get(gpu.name, c.nodes))
        # Without a price no budget can be checked: GPU-hours stand in for cost.
        budget = None if unpriced else request.budget_usd
        chosen = pick(candidates, budget, job.deadline_hours)
        if isinstance(chosen, ExclusionReason):
            excluded.append(Exclusion(offer, chosen))
            continue
        (on_request if unpriced else options).extend(chosen)
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
    memory = memory_arithmetic(job.model, job.kind, job.lora_rank)
    fp = footprint(memory.weights_gib, memory.optimizer_gib, job.tokens, job.model.vocab)
    return PlanResult(
        model=job.model,
        seq_len=job.seq_len,
        tokens=job.tokens,
        steps=job.steps,
        needs_multi_node=not one_node_ok,
        min_gpus_to_fit=min(fits) if fits else None,
        memory=memory,
        per_gpu=verdicts,
        options=tuple(replace(o, all_in=_all_in(o, fp)) for o in rank(options)),
        excluded=tuple(excluded),
        on_request=tuple(sorted(on_request, key=lambda o: (o.cost_usd, o.offer.offer_id))),
        error_band_pct=calibration.band_for(job.model.is_moe),
        assumptions=finetune_assumptions(job.kind.adapters, job.kind is JobKind.QLORA)
        + _data_assumptions(options, on_request),
        deadline_hours=job.deadline_hours,
        deadline_is_default=job.deadline_is_default,
        nodes_for_deadline=min(timely_nodes.values()) if timely_nodes else None,
        stack=job.stack,
        allow_spot=request.allow_spot,
        job=job.kind,
        lora_rank=job.lora_rank if job.kind.adapters else None,
        reliability=reliability,
        footprint=fp,
    )
