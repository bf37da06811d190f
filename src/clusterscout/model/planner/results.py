"""The planner's typed answer: offers as it sees them, layouts, verdicts, options, exclusions.

Plain frozen values; their public JSON is declared in ``web/schemas.py``, not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from clusterscout.domain.brackets import AssumedNetwork
from clusterscout.domain.models import FabricKind
from clusterscout.domain.units import GIB
from clusterscout.model.allin import AllInCost, Footprint
from clusterscout.model.cost import billed_hours
from clusterscout.model.goodput import Goodput, Reliability
from clusterscout.model.inputs import (
    DEFAULT_STACK,
    JobKind,
    ModelShape,
    Precision,
    Recompute,
    Sharding,
    Stack,
)
from clusterscout.model.planner.reasons import Assumption, ExclusionReason


@dataclass(frozen=True, slots=True)
class FabricBasis:
    """A published measurement the planner's network figure rests on, instead of the model's.

    ``factor`` scales the advertised per-node bandwidth: measured / predicted bus bandwidth on
    the published run, capped at 1 (a run above the model's figure is read as the model's own
    error at that shape, never as a fabric faster than its advertised line rate).
    """

    busbw_gbs: float
    predicted_busbw_gbs: float
    factor: float
    collective: str
    nodes: int
    gpus_per_node: int
    message_bytes: int
    source_url: str


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
    minimum_hours: float | None = None
    """Least hours billed for a run (billing minimum or the price's term); None: no minimum."""
    assumed: AssumedNetwork | None = None
    """The network's two ends when its Gbit/s, fabric or GPUDirect RDMA is unknown."""
    price_source: str | None = None
    """``published`` (the catalog's), ``buyer`` (entered with the request) or None (no price)."""
    billing_increment_hours: float | None = None
    """The billing step in hours (1 when billed per started hour); None: finer or unknown."""
    billing_known: bool = False
    """True when the catalog records how the offer bills (granularity, minimum or a term)."""
    gpus_per_node_assumed: bool = False
    """True when the offer does not state its node size and its generation's board is used."""
    price_as_of: str | None = None
    """The day the published price was observed (ISO date); None for a buyer's or no price."""
    storage_usd_per_gib_month: float | None = None
    """The provider's shared storage price (None: unknown)."""
    egress_usd_per_gib: float | None = None
    """The provider's internet egress price (0.0: free; None: unknown)."""
    advertised_gbps: float | None = None
    """The catalog's per-node Gbit/s when ``per_node_gbps`` was derived from a measurement."""
    measured: FabricBasis | None = None
    """The published run behind ``per_node_gbps``; None when the advertised figure is used."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A parallel layout chosen by the planner (context parallelism is always 1 here).

    ``ep`` is the expert-parallel degree of an MoE model (1 for dense), folded into the
    ``tp*dp`` ranks of each pipeline stage.
    """

    tp: int
    pp: int
    dp: int
    vp: int
    sharding: Sharding
    recompute: Recompute
    micro_batch: int
    global_batch: int
    cp: int = 1
    ep: int = 1


@dataclass(frozen=True, slots=True)
class MemoryArithmetic:
    """The memory sum behind "do I need multi-node?" (whole model, unsharded)."""

    params: float
    weights_gib: float
    grads_gib: float
    optimizer_gib: float
    total_state_gib: float

    @property
    def bytes_per_param(self) -> float:
        """Bytes of model state per parameter: weights, gradients and Adam state (16 when
        every weight is trained; about 2 for LoRA, about 0.5 for QLoRA)."""
        return self.total_state_gib * GIB / self.params


@dataclass(frozen=True, slots=True)
class GpuVerdict:
    """Whether one 8-GPU node of a GPU model holds the job, how long it would take there, and
    the fewest nodes of a priced offer of that GPU that finish within the deadline (None: none
    within the node limit)."""

    gpu: str
    memory_gib: float
    min_gpus_to_fit: int | None
    one_node_fits: bool
    one_node_time_hours: float | None
    one_node_layout: Layout | None
    nodes_for_deadline: int | None = None
    calibrated: bool = True
    """False when the GPU's family has fewer than five fitted measurements: its speed rests on a
    prior (``Calibration.family_for``), and every answer says so."""
    priced: bool = True
    """False when no offer of this GPU has a price: then no node count can be costed, which
    is why ``nodes_for_deadline`` is None, not the deadline."""


@dataclass(frozen=True, slots=True)
class PlanOption:
    """One way to run the job on one offer.

    ``steps`` trains the job's tokens with the layout's global batch (fewer steps when data
    parallelism needed a larger batch than the job's). ``calibrated`` is False when the GPU's
    family rests on a prior (fewer than five fitted measurements); such options are ranked
    after every calibrated one (``ranking.rank``).
    """

    offer: PlanOffer
    nodes: int
    layout: Layout
    time_hours: float
    cost_usd: float
    scaling_efficiency: float
    effective_usd_per_gpu_hour: float
    mfu: float
    steps: int = 0
    pareto: bool = False
    rank_by_cost: int = 0
    rank_by_time: int = 0
    breakdown: Mapping[str, float] = field(default_factory=dict)
    """Seconds of one step by cause (``StepBreakdown.as_dict``: compute, all_to_all, ...)."""
    calibrated: bool = True
    gpu_family: str = ""
    time_hours_best: float | None = None
    """With an assumed network: the time at its optimistic end (``time_hours`` is the
    pessimistic one, which ranks the option); None when nothing is assumed."""
    cost_usd_best: float | None = None
    """The cost at the optimistic end, like ``time_hours_best``."""
    goodput: Goodput | None = None
    """Expected interruptions and what they add (None when the plan was given no reliability)."""
    all_in: AllInCost | None = None
    """Compute (with interruptions) plus storage and egress; None when the run never ends."""

    @property
    def billed_hours(self) -> float:
        """Hours paid at the pessimistic end: the billing minimum or term and whole billing
        steps applied (``cost.billed_hours``)."""
        return billed_hours(
            self.time_hours, self.offer.minimum_hours, self.offer.billing_increment_hours
        )

    @property
    def gpus(self) -> int:
        """GPUs used (options exist only for offers whose GPUs per node are known)."""
        return self.nodes * (self.offer.gpus_per_node or 0)


@dataclass(frozen=True, slots=True)
class Exclusion:
    """An offer left out, and why."""

    offer: PlanOffer
    reason: ExclusionReason


MIN_SERVING_POINTS: Final = 5
"""Published serving points a GPU needs before its serving figures count as calibrated (the
same threshold the issue sets for a GPU family's training figures)."""


@dataclass(frozen=True, slots=True)
class ServingVerdict:
    """Serving on one GPU model: the smallest replica that holds weights and KV cache, its
    decode speed, and what a target throughput needs.

    ``tp``/``pp`` are None when no replica fits within the node limit. Prices are the
    cheapest priced offer of this GPU (None: no price known). ``ttft_s`` is the time to the
    first token of one prompt that fills the context; ``serving_points`` counts the published
    serving measurements of this GPU the model was fitted on, and ``calibrated`` is False when
    they are too few to vouch for its figures (``MIN_SERVING_POINTS``).
    """

    gpu: str
    memory_gib: float
    tp: int | None
    pp: int | None
    gpus_per_replica: int | None
    nodes_per_replica: int | None
    weights_gib_per_gpu: float | None
    kv_cache_gib_per_gpu: float | None
    tokens_per_s_per_replica: float | None
    replicas: int | None
    nodes: int | None
    tokens_per_s: float | None
    usd_per_hour: float | None = None
    usd_per_million_tokens: float | None = None
    offer_id: str | None = None
    ttft_s: float | None = None
    serving_points: int = 0
    calibrated: bool = False


@dataclass(frozen=True, slots=True)
class ServingOption:
    """Serving on one offer: nodes, replicas, throughput and what it costs per hour.

    ``ttft_s``, ``serving_points`` and ``calibrated`` as for ``ServingVerdict``.
    """

    offer: PlanOffer
    nodes: int
    tp: int
    pp: int
    replicas: int
    tokens_per_s: float
    usd_per_hour: float
    usd_per_million_tokens: float
    ttft_s: float = 0.0
    serving_points: int = 0
    calibrated: bool = False


@dataclass(frozen=True, slots=True)
class ServingPlan:
    """The inference answer: memory totals, per-GPU verdicts and per-offer options.

    ``error_band_pct`` is the held-out p90 error of the serving model's decode figures on
    published serving benchmarks, ``ttft_band_pct`` the same for time to first token.
    """

    precision: Precision
    context: int
    concurrency: int
    target_tokens_per_s: float | None
    weights_gib: float
    kv_cache_gib: float
    kv_bytes_per_token: float
    per_gpu: tuple[ServingVerdict, ...]
    options: tuple[ServingOption, ...]
    error_band_pct: float
    ttft_band_pct: float = 0.0


@dataclass(frozen=True, slots=True)
class PlanResult:
    """The planner's answer.

    ``needs_multi_node`` is true unless one 8-GPU node both holds the job and finishes it
    within ``deadline_hours`` (the request's, or the 90-day default: ``deadline_is_default``).
    ``nodes_for_deadline`` is the fewest nodes of any priced offer that meet the deadline.
    """

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
    assumptions: tuple[Assumption, ...] = field(default_factory=tuple)
    deadline_hours: float | None = None
    deadline_is_default: bool = False
    nodes_for_deadline: int | None = None
    stack: Stack = DEFAULT_STACK
    allow_spot: bool = False
    job: JobKind = JobKind.PRETRAIN
    lora_rank: int | None = None
    serving: ServingPlan | None = None
    on_request: tuple[PlanOption, ...] = ()
    """Options of offers without a price: time and GPU-hours, ``cost_usd`` is GPU-hours
    (costed at one dollar), never shown as money; fewest GPU-hours first."""
    market_references: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """GPU model -> the market reference the caller drew for it (other offers' prices)."""
    reliability: Reliability | None = None
    """The failure rate, checkpoint interval and restart time behind the options' goodput."""
    footprint: Footprint | None = None
    """What a training run keeps on shared storage and moves out (the all-in cost's terms)."""

    @property
    def by_time(self) -> tuple[PlanOption, ...]:
        """Options, fastest first."""
        return tuple(sorted(self.options, key=lambda o: o.rank_by_time))
