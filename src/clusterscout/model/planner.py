"""The planner: "do I need multi-node?" and offers ranked by job cost and time (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.domain.units import GIB, SECONDS_PER_HOUR
from clusterscout.model.calibration import Calibration
from clusterscout.model.compute import peak_tflops
from clusterscout.model.cost import effective_usd_per_gpu_hour, job_cost_usd
from clusterscout.model.defaults import complete_shape
from clusterscout.model.inputs import (
    ClusterSpec,
    ModelShape,
    Parallelism,
    Precision,
    Recompute,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.memory import (
    GRAD_BYTES_PER_PARAM,
    OPTIMIZER_BYTES_PER_PARAM,
    WEIGHT_BYTES_PER_PARAM,
    memory_per_gpu,
)
from clusterscout.model.presets import PRESETS, find_preset
from clusterscout.model.scenario import MAX_NODES, ScenarioError, resolve_gpu
from clusterscout.model.training import step_breakdown, train_step

DEFAULT_MAX_NODES = 64
DEFAULT_SEQ_LEN = 4096
SMALL_BATCH_TOKENS = 2**22
"""4M tokens per step (Llama 1/2/3 up to 70B)."""
LARGE_BATCH_TOKENS = 2**24
"""16M tokens per step (Llama 3 405B)."""
LARGE_MODEL_PARAMS = 100e9
REFERENCE_NODE_GPUS = 8
_TP_CHOICES = (1, 2, 4, 8)
_PP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
_VP_CHOICES = (4, 2, 1)
_MAX_GPUS_SEARCH = 1 << 20
MAX_SEQ_LEN = 10_000_000
"""Longest sequence a plan accepts (as the scenario's ``seq_len``)."""
MAX_BATCH_TOKENS = 1 << 40
"""Most tokens per optimizer step a plan accepts; keeps every derived figure finite."""


@dataclass(frozen=True, slots=True)
class PlanOffer:
    """An offer as the planner sees it (built by the caller from the catalog)."""

    offer_id: str
    provider: str
    gpu: str
    gpus_per_node: int | None
    fabric: FabricKind | None
    per_node_gbps: float | None
    gpudirect_rdma: bool | None
    max_nodes: int | None
    usd_per_gpu_hour: float | None
    price_tier: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            # "id" matches the offer records of the API and CLI; "offer_id" is kept as well.
            "id": self.offer_id,
            "offer_id": self.offer_id,
            "provider": self.provider,
            "gpu": self.gpu,
            "gpus_per_node": self.gpus_per_node,
            "fabric": self.fabric.value if self.fabric else None,
            "per_node_gbps": self.per_node_gbps,
            "gpudirect_rdma": self.gpudirect_rdma,
            "max_nodes": self.max_nodes,
            "usd_per_gpu_hour": self.usd_per_gpu_hour,
            "price_tier": self.price_tier,
        }


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """What to train and the constraints.

    Exactly one of ``params`` / ``preset``, and of ``tokens`` / ``steps``.
    """

    params: float | None = None
    preset: str | None = None
    tokens: float | None = None
    steps: int | None = None
    precision: Precision = Precision.BF16
    gpu: str | None = None
    max_nodes: int = DEFAULT_MAX_NODES
    budget_usd: float | None = None
    deadline_hours: float | None = None
    seq_len: int | None = None
    batch_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Layout:
    """A parallel layout chosen by the planner."""

    tp: int
    pp: int
    dp: int
    vp: int
    sharding: Sharding
    recompute: Recompute
    micro_batch: int
    global_batch: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tp": self.tp,
            "pp": self.pp,
            "cp": 1,
            "dp": self.dp,
            "vp": self.vp,
            "sharding": self.sharding.value,
            "recompute": self.recompute.value,
            "micro_batch": self.micro_batch,
            "global_batch": self.global_batch,
        }


@dataclass(frozen=True, slots=True)
class MemoryArithmetic:
    """The memory sum behind "do I need multi-node?" (whole model, unsharded)."""

    params: float
    weights_gib: float
    grads_gib: float
    optimizer_gib: float
    total_state_gib: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "params": self.params,
            "weights_gib": self.weights_gib,
            "grads_gib": self.grads_gib,
            "optimizer_gib": self.optimizer_gib,
            "total_state_gib": self.total_state_gib,
            "bytes_per_param": WEIGHT_BYTES_PER_PARAM
            + GRAD_BYTES_PER_PARAM
            + OPTIMIZER_BYTES_PER_PARAM,
        }


@dataclass(frozen=True, slots=True)
class GpuVerdict:
    """Whether one 8-GPU node of a GPU model holds the job, and how long it would take."""

    gpu: str
    memory_gib: float
    min_gpus_to_fit: int | None
    one_node_fits: bool
    one_node_time_hours: float | None
    one_node_layout: Layout | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "gpu": self.gpu,
            "memory_gib": self.memory_gib,
            "min_gpus_to_fit": self.min_gpus_to_fit,
            "one_node_fits": self.one_node_fits,
            "one_node_time_hours": self.one_node_time_hours,
            "one_node_layout": self.one_node_layout.to_dict() if self.one_node_layout else None,
        }


@dataclass(frozen=True, slots=True)
class PlanOption:
    """One way to run the job on one offer."""

    offer: PlanOffer
    nodes: int
    layout: Layout
    time_hours: float
    cost_usd: float
    scaling_efficiency: float
    effective_usd_per_gpu_hour: float
    mfu: float
    pareto: bool = False
    rank_by_cost: int = 0
    rank_by_time: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "offer": self.offer.to_dict(),
            "nodes": self.nodes,
            # Options exist only for offers whose GPUs per node are known.
            "gpus": self.nodes * (self.offer.gpus_per_node or 0),
            "layout": self.layout.to_dict(),
            "time_hours": self.time_hours,
            "cost_usd": self.cost_usd,
            "scaling_efficiency": self.scaling_efficiency,
            "effective_usd_per_gpu_hour": self.effective_usd_per_gpu_hour,
            "mfu": self.mfu,
            "pareto": self.pareto,
            "rank_by_cost": self.rank_by_cost,
            "rank_by_time": self.rank_by_time,
        }


@dataclass(frozen=True, slots=True)
class Exclusion:
    """An offer left out, and why."""

    offer: PlanOffer
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"offer": self.offer.to_dict(), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class PlanResult:
    """The planner's answer."""

    model: ModelShape
    seq_len: int
    tokens: float
    steps: int
    needs_multi_node: bool
    min_gpus_to_fit: int | None
    memory: MemoryArithmetic
    per_gpu: tuple[GpuVerdict, ...]
    options: tuple[PlanOption, ...]
    excluded: tuple[Exclusion, ...]
    error_band_pct: float
    assumptions: tuple[str, ...] = field(default_factory=tuple)

    @property
    def by_time(self) -> tuple[PlanOption, ...]:
        """Options, fastest first."""
        return tuple(sorted(self.options, key=lambda o: o.rank_by_time))

    def to_dict(self) -> dict[str, Any]:
        """DESIGN.md §4 ``plan`` keys plus the verdict details."""
        return {
            "needs_multi_node": self.needs_multi_node,
            "min_gpus_to_fit": self.min_gpus_to_fit,
            "options": [o.to_dict() for o in self.options],
            "excluded": [e.to_dict() for e in self.excluded],
            "memory": self.memory.to_dict(),
            "per_gpu": [v.to_dict() for v in self.per_gpu],
            "model": {
                "params": self.model.params,
                "layers": self.model.layers,
                "hidden": self.model.hidden,
                "heads": self.model.heads,
                "kv_heads": self.model.kv_heads,
                "vocab": self.model.vocab,
                "ffn_hidden": self.model.ffn_hidden,
            },
            "seq_len": self.seq_len,
            "tokens": self.tokens,
            "steps": self.steps,
            "error_band_pct": self.error_band_pct,
            "assumptions": list(self.assumptions),
        }


# --- request --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Job:
    """A validated training job: model shape, batch, step count and precision."""

    model: ModelShape
    seq_len: int
    global_batch: int
    steps: int
    tokens: float
    precision: Precision


def job_for(request: PlanRequest) -> Job:
    """Validate a request and derive the job (shape from preset or params, batch, steps).

    Raises:
        ScenarioError: naming the field at fault.
    """
    if (request.params is None) == (request.preset is None):
        raise ScenarioError("model", "give exactly one of params or preset")
    if request.preset is not None:
        preset = find_preset(request.preset)
        if preset is None:
            raise ScenarioError("model", f"unknown preset (known: {', '.join(PRESETS)})")
        model, seq, batch_tokens = preset.shape, preset.seq_len, preset.batch_tokens
    else:
        params = float(request.params or 0.0)
        if not 1e6 <= params <= 1e14:
            raise ScenarioError("params", "must be between 1e6 and 1e14")
        model = complete_shape(params)
        seq = DEFAULT_SEQ_LEN
        batch_tokens = LARGE_BATCH_TOKENS if params > LARGE_MODEL_PARAMS else SMALL_BATCH_TOKENS
    seq = request.seq_len or seq
    batch_tokens = request.batch_tokens or batch_tokens
    if not 1 <= seq <= MAX_SEQ_LEN:
        raise ScenarioError("seq_len", f"must be between 1 and {MAX_SEQ_LEN:,}")
    if not 1 <= batch_tokens <= MAX_BATCH_TOKENS:
        raise ScenarioError("batch_tokens", f"must be between 1 and {MAX_BATCH_TOKENS:,}")
    if batch_tokens < seq:
        raise ScenarioError("seq_len", "must be at most the batch tokens")
    if not 1 <= request.max_nodes <= MAX_NODES:
        raise ScenarioError("max_nodes", f"must be between 1 and {MAX_NODES:,}")
    global_batch = max(1, batch_tokens // seq)
    tokens_per_step = global_batch * seq
    if (request.tokens is None) == (request.steps is None):
        raise ScenarioError("tokens", "give exactly one of tokens or steps")
    if request.tokens is not None:
        if not 0 < request.tokens <= 1e16:
            raise ScenarioError("tokens", "must be between 1 and 1e16")
        steps = max(1, math.ceil(request.tokens / tokens_per_step))
        tokens = float(request.tokens)
    else:
        if not 0 < (request.steps or 0) <= 10**9:
            raise ScenarioError("steps", "must be between 1 and 1e9")
        steps = int(request.steps or 0)
        tokens = float(steps * tokens_per_step)
    for name, value in (
        ("budget_usd", request.budget_usd),
        ("deadline_hours", request.deadline_hours),
    ):
        if value is not None and value <= 0:
            raise ScenarioError(name, "must be greater than 0")
    return Job(model, seq, global_batch, steps, tokens, request.precision)


# --- layout search ----------------------------------------------------------------------------


def _workload(
    job: Job, tp: int, pp: int, vp: int, dp: int, sharding: Sharding, recompute: Recompute
) -> TrainingWorkload:
    batch = max(dp, round(job.global_batch / dp) * dp)
    return TrainingWorkload(
        model=job.model,
        seq_len=job.seq_len,
        global_batch=batch,
        micro_batch=1,
        precision=job.precision,
        parallelism=Parallelism(tp=tp, pp=pp, cp=1, dp=dp, vp=vp, sharding=sharding),
        recompute=recompute,
    )


def _vp(layers: int, pp: int) -> int:
    if pp == 1:
        return 1
    return next((v for v in _VP_CHOICES if layers % (pp * v) == 0), 1)


def _fitting_workloads(
    job: Job, gpu: GpuSpec, gpus_per_node: int, gpus: int, calibration: Calibration
) -> list[TrainingWorkload]:
    """Per (tp, sharding, recompute): the smallest pipeline depth that fits memory.

    FSDP is tried without pipelining only (how it is used in practice); more pipeline
    stages than needed only add bubble, so the first fitting depth is kept.
    """
    found: list[TrainingWorkload] = []
    heads = job.model.heads
    for tp in _TP_CHOICES:
        if tp > gpus_per_node or gpus_per_node % tp or heads % tp or gpus % tp:
            continue
        for sharding in (Sharding.FSDP, Sharding.ZERO1):
            for recompute in (Recompute.NONE, Recompute.FULL):
                pps = (1,) if sharding is Sharding.FSDP else _PP_CHOICES
                for pp in pps:
                    if pp > job.model.layers or gpus % (tp * pp):
                        break
                    dp = gpus // (tp * pp)
                    w = _workload(job, tp, pp, _vp(job.model.layers, pp), dp, sharding, recompute)
                    if memory_per_gpu(w, gpu, calibration).fits:
                        found.append(w)
                        break
    return found


@dataclass(frozen=True, slots=True)
class BestLayout:
    """The fastest layout that fits a cluster, and its step time."""

    workload: TrainingWorkload
    step_time_s: float


def best_layout(job: Job, cluster: ClusterSpec, calibration: Calibration) -> BestLayout | None:
    """Fastest layout over TP/PP/sharding/recompute that fits memory on ``cluster``, or None."""
    best: BestLayout | None = None
    for w in _fitting_workloads(job, cluster.gpu, cluster.gpus_per_node, cluster.gpus, calibration):
        t = step_breakdown(w, cluster, calibration).total_s
        if best is None or t < best.step_time_s:
            best = BestLayout(w, t)
    return best


def _layout(w: TrainingWorkload) -> Layout:
    p = w.parallelism
    return Layout(p.tp, p.pp, p.dp, p.vp, p.sharding, w.recompute, w.micro_batch, w.global_batch)


def _fits_on(job: Job, gpu: GpuSpec, gpus: int, calibration: Calibration) -> bool:
    gpn = min(gpus, REFERENCE_NODE_GPUS)
    return bool(_fitting_workloads(job, gpu, gpn, gpus, calibration))


def min_gpus_to_fit(job: Job, gpu: GpuSpec, calibration: Calibration) -> int | None:
    """Smallest GPU count whose best layout fits memory (doubling, then bisection)."""
    high = 1
    while not _fits_on(job, gpu, high, calibration):
        high *= 2
        if high > _MAX_GPUS_SEARCH:
            return None
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        if _fits_on(job, gpu, mid, calibration):
            high = mid
        else:
            low = mid
    return high


def _hours(job: Job, step_time_s: float) -> float:
    return job.steps * step_time_s / SECONDS_PER_HOUR


def _memory(model: ModelShape) -> MemoryArithmetic:
    p = model.params
    w, g, o = (
        b * p / GIB
        for b in (WEIGHT_BYTES_PER_PARAM, GRAD_BYTES_PER_PARAM, OPTIMIZER_BYTES_PER_PARAM)
    )
    return MemoryArithmetic(p, w, g, o, w + g + o)


def _verdict(job: Job, gpu: GpuSpec, calibration: Calibration) -> GpuVerdict:
    node = ClusterSpec(gpu=gpu, gpus_per_node=REFERENCE_NODE_GPUS, nodes=1)
    best = best_layout(job, node, calibration)
    return GpuVerdict(
        gpu=gpu.name,
        memory_gib=gpu.memory_gib,
        min_gpus_to_fit=min_gpus_to_fit(job, gpu, calibration),
        one_node_fits=best is not None,
        one_node_time_hours=_hours(job, best.step_time_s) if best else None,
        one_node_layout=_layout(best.workload) if best else None,
    )


def _node_counts(cap: int) -> list[int]:
    counts = [1 << i for i in range(cap.bit_length()) if (1 << i) <= cap]
    if cap not in counts:
        counts.append(cap)
    return counts


def has_figures(gpu: GpuSpec, precision: Precision) -> bool:
    """True when the GPU has the peak TFLOP/s the model needs (BF16, and ``precision``)."""
    try:
        peak_tflops(gpu, Precision.BF16)
        peak_tflops(gpu, precision)
    except ValueError:
        return False
    return True


def _mark(options: list[PlanOption]) -> list[PlanOption]:
    by_cost = sorted(options, key=lambda o: (o.cost_usd, o.time_hours, o.offer.offer_id))
    time_rank = {
        id(o): i + 1
        for i, o in enumerate(
            sorted(options, key=lambda o: (o.time_hours, o.cost_usd, o.offer.offer_id))
        )
    }
    marked = []
    for i, o in enumerate(by_cost):
        dominated = any(
            p.cost_usd <= o.cost_usd
            and p.time_hours <= o.time_hours
            and (p.cost_usd < o.cost_usd or p.time_hours < o.time_hours)
            for p in options
        )
        marked.append(
            PlanOption(
                offer=o.offer,
                nodes=o.nodes,
                layout=o.layout,
                time_hours=o.time_hours,
                cost_usd=o.cost_usd,
                scaling_efficiency=o.scaling_efficiency,
                effective_usd_per_gpu_hour=o.effective_usd_per_gpu_hour,
                mfu=o.mfu,
                pareto=not dominated,
                rank_by_cost=i + 1,
                rank_by_time=time_rank[id(o)],
            )
        )
    return marked


def plan(
    request: PlanRequest,
    offers: Sequence[PlanOffer],
    gpus: Sequence[GpuSpec],
    calibration: Calibration,
) -> PlanResult:
    """Answer "do I need multi-node?" and rank the offers that can host the job.

    For each priced offer, every power-of-two node count up to the offer's (or the
    request's) maximum is tried with the fastest layout that fits memory (TP inside the node,
    the smallest pipeline depth, FSDP vs ZeRO-1, no vs full recomputation); the offer
    contributes its cheapest option and, when different, its fastest one, both within budget
    and deadline. Options are sorted by cost, with their rank by time and the Pareto front
    (no other option both cheaper and faster) marked.

    Raises:
        ScenarioError: for an invalid request (field named) or an unknown GPU filter.
    """
    job = job_for(request)
    gpu_filter = resolve_gpu(request.gpu, gpus, field="gpu").name if request.gpu else None
    by_name = {g.name: g for g in gpus}
    considered = [
        g
        for g in gpus
        if (gpu_filter is None or g.name == gpu_filter) and has_figures(g, job.precision)
    ]
    if gpu_filter is not None and not considered:
        raise ScenarioError("precision", f"{gpu_filter} has no {job.precision.value} figure")
    verdicts = tuple(_verdict(job, g, calibration) for g in considered)
    cache: dict[tuple[Any, ...], tuple[TrainingWorkload, float, float, float] | None] = {}
    options: list[PlanOption] = []
    excluded: list[Exclusion] = []
    for offer in offers:
        try:
            gpu = resolve_gpu(offer.gpu, gpus)
        except ScenarioError:
            excluded.append(Exclusion(offer, "unknown GPU"))
            continue
        if gpu_filter is not None and gpu.name != gpu_filter:
            continue
        gpu = by_name[gpu.name]
        if not has_figures(gpu, job.precision):
            excluded.append(Exclusion(offer, f"GPU has no {job.precision.value} figure"))
            continue
        if offer.usd_per_gpu_hour is None:
            excluded.append(Exclusion(offer, "no price"))
            continue
        if offer.gpus_per_node is None:
            excluded.append(Exclusion(offer, "unknown GPUs per node"))
            continue
        per_node = offer.gpus_per_node
        networked = offer.fabric is not None and offer.per_node_gbps is not None
        cap = min(request.max_nodes, offer.max_nodes or request.max_nodes)
        if not networked:
            cap = 1
        candidates: list[PlanOption] = []
        for nodes in _node_counts(cap):
            key = (
                gpu.name,
                per_node,
                offer.fabric,
                offer.per_node_gbps,
                offer.gpudirect_rdma,
                nodes,
            )
            if key not in cache:
                cluster = ClusterSpec(
                    gpu,
                    per_node,
                    nodes,
                    offer.fabric,
                    offer.per_node_gbps,
                    offer.gpudirect_rdma,
                )
                best = best_layout(job, cluster, calibration)
                if best is None:
                    cache[key] = None
                else:
                    res = train_step(best.workload, cluster, calibration)
                    cache[key] = (best.workload, res.step_time_s, res.scaling_efficiency, res.mfu)
            entry = cache[key]
            if entry is None:
                continue
            w, step_s, eff, mfu = entry
            hours = _hours(job, step_s)
            gpus_used = nodes * per_node
            candidates.append(
                PlanOption(
                    offer=offer,
                    nodes=nodes,
                    layout=_layout(w),
                    time_hours=hours,
                    cost_usd=job_cost_usd(offer.usd_per_gpu_hour, gpus_used, hours),
                    scaling_efficiency=eff,
                    effective_usd_per_gpu_hour=effective_usd_per_gpu_hour(
                        offer.usd_per_gpu_hour, eff
                    ),
                    mfu=mfu,
                )
            )
        if not candidates:
            if offer.fabric is None:
                reason = "unknown fabric"
            elif not networked:
                reason = "unknown Gbit/s per node"
            else:
                reason = "too small"
            excluded.append(Exclusion(offer, reason))
            continue
        within = [
            c for c in candidates if request.budget_usd is None or c.cost_usd <= request.budget_usd
        ]
        if not within:
            excluded.append(Exclusion(offer, "over budget"))
            continue
        timely = [
            c
            for c in within
            if request.deadline_hours is None or c.time_hours <= request.deadline_hours
        ]
        if not timely:
            excluded.append(Exclusion(offer, "misses deadline"))
            continue
        cheapest = min(timely, key=lambda c: (c.cost_usd, c.time_hours))
        fastest = min(timely, key=lambda c: (c.time_hours, c.cost_usd))
        options.append(cheapest)
        if fastest is not cheapest:
            options.append(fastest)
    one_node_ok = [
        v
        for v in verdicts
        if v.one_node_fits
        and (
            request.deadline_hours is None
            or (v.one_node_time_hours or math.inf) <= request.deadline_hours
        )
    ]
    fits = [v.min_gpus_to_fit for v in verdicts if v.min_gpus_to_fit is not None]
    return PlanResult(
        model=job.model,
        seq_len=job.seq_len,
        tokens=job.tokens,
        steps=job.steps,
        needs_multi_node=not one_node_ok,
        min_gpus_to_fit=min(fits) if fits else None,
        memory=_memory(job.model),
        per_gpu=verdicts,
        options=tuple(_mark(options)),
        excluded=tuple(excluded),
        error_band_pct=calibration.error_band_pct,
        assumptions=ASSUMPTIONS,
    )


ASSUMPTIONS: tuple[str, ...] = (
    "Mixed-precision Adam: 16 bytes of model state per parameter (ZeRO paper).",
    "Micro-batch 1, flash attention, no or full activation recomputation.",
    "Tensor parallelism stays inside one node; pipeline depth is the smallest that fits.",
    "Rail-optimised nodes, one NIC per GPU; provider tuning problems are not modelled.",
    "Times are estimates; the error band is the 90th-percentile error on published "
    "measurements the model was not fitted on.",
    "Communication hidden behind compute costs nothing here; stragglers, failures and restarts "
    "are not modelled, so a near-perfect efficiency is an upper bound.",
)
