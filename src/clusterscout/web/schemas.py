"""Published JSON shapes of the API (DESIGN section 4), declared here, not derived from the domain.

Records, lists and errors; and the answers of ``POST /plan``, ``POST /estimate`` and ``POST
/launch``, built here from typed results (``plan_json``, ``estimate_json``, ``launch_json``).

Unknown facts are ``null``. ``sources`` maps a field name to
``[{url, checked_on, kind, published_on}]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Annotated, Any, Final, Literal
from urllib.parse import quote, urlencode

from pydantic import BaseModel, ConfigDict, Field

from clusterscout.domain.brackets import AssumedNetwork, NetworkCase
from clusterscout.launch.request import FormatResult, LaunchAnswer
from clusterscout.model.collectives import CollectiveResult
from clusterscout.model.estimate import EstimateResult
from clusterscout.model.goodput import Goodput, Reliability
from clusterscout.model.planner.reasons import Assumption, ExclusionReason
from clusterscout.model.planner.results import (
    Exclusion,
    GpuVerdict,
    Layout,
    PlanOffer,
    PlanOption,
    PlanResult,
    ServingPlan,
)
from clusterscout.model.training import TrainingResult
from clusterscout.model.workloads import BatchResult


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceRef(_Out):
    """A public page, the day it was checked and whose page it is."""

    url: str
    checked_on: date
    kind: Literal["primary", "secondary", "catalog"] = Field(
        description="primary: the provider's own page; secondary: a third party; "
        "catalog: a machine-readable price catalog"
    )
    published_on: date | None = Field(
        default=None,
        description="the page's own date (post, release, 'last updated'); null if none",
    )


Sources = dict[str, list[SourceRef]]


class OrchestrationOut(_Out):
    """Managed schedulers and NCCL set-up; null when unknown."""

    managed_slurm: bool | None
    managed_kubernetes: bool | None
    nccl_preconfigured: bool | None
    raw_vms: bool | None
    note: str | None


class ProvisioningOut(_Out):
    """How a cluster is obtained; null when unknown."""

    on_demand_clusters: bool | None
    reserved: bool | None
    reserved_terms: list[str]
    waitlist: bool | None
    access: str | None = Field(
        description="fastest way to a multi-node cluster: self_serve, approval, sales, waitlist"
    )
    note: str | None


class BillingOut(_Out):
    """Billing granularity and minimum commitment."""

    granularity: str | None
    minimum: str | None
    minimum_hours: float | None = Field(description="minimum commitment in hours")
    note: str | None


class DiscountOut(_Out):
    """A published discount for a commitment, often only an upper bound."""

    term_days: int
    min_percent: float | None
    max_percent: float
    off: str = Field(description="the price tier the discount applies to")
    note: str | None
    sources: list[SourceRef]


class RatingOut(_Out):
    """An independent rating of the provider (e.g. a ClusterMAX tier)."""

    rater: str
    edition: str
    tier: str = Field(
        description="platinum, gold, silver, bronze, participation_ribbon, underperform, "
        "unavailable or not_recommended"
    )
    published_on: date
    note: str | None
    sources: list[SourceRef]


class StorageOut(_Out):
    """Shared storage sold next to the cluster."""

    shared_filesystem: bool | None
    products: list[str]
    throughput_gbs: float | None
    usd_per_gib_month: float | None
    egress_usd_per_gib: float | None = Field(
        default=None, description="internet egress per GiB; 0 means free; null: unknown"
    )
    note: str | None


class TopologyOut(_Out):
    """Placement claims for the nodes of one cluster."""

    non_blocking: bool | None
    rail_optimized: bool | None
    locality: str | None


class MeasuredFabricOut(_Out):
    """A published multi-node collective benchmark on the offer, beside the model's figure."""

    collective: Literal["all_reduce", "all_gather", "reduce_scatter"]
    message_bytes: int = Field(description="whole buffer of the collective, bytes")
    nodes: int
    gpus_per_node: int
    gpus: int
    busbw_gbs: float = Field(description="measured bus bandwidth, GB/s (nccl-tests busbw)")
    predicted_busbw_gbs: float | None = Field(
        description="the model's bus bandwidth for the same collective, size, nodes and GPUs "
        "per node on the advertised fabric; null when the catalog lacks the fabric figures"
    )
    ratio: float | None = Field(description="measured / predicted")
    nccl_version: str | None
    tool: str | None = Field(description="benchmark that printed it, e.g. nccl-tests")
    in_network_reduction: bool = Field(description="SHARP or similar reduced in the switches")
    degraded: bool = Field(
        description="the source says the run missed the provider's documented setup; shown, "
        "never used by the planner"
    )
    published_on: date | None
    note: str | None
    sources: list[SourceRef]


class PriceOut(_Out):
    """One price in USD per GPU-hour, with its age."""

    tier: str = Field(description="on_demand, reserved, spot or capacity_block")
    usd_per_gpu_hour: float
    term: str | None
    term_days: int | None = Field(default=None, description="minimum commitment in days")
    prepay: bool | None = Field(default=None, description="the term is paid up front")
    as_of: date
    source: SourceRef
    note: str | None = None
    feed: str | None = Field(default=None, description="feed that observed it, e.g. catalog")
    observed_at: str | None = Field(default=None, description="when it was recorded (ISO 8601)")
    age_days: int = Field(description="days since as_of")
    stale: bool = Field(description="older than the server's stale_after_days (default 30)")


class ConflictOut(_Out):
    """Two sources that disagree and what was kept."""

    topic: str
    note: str
    about: list[Literal["price", "provisioning", "capacity", "network", "storage", "other"]] = (
        Field(description="what the disagreement is about; rows badge price and provisioning")
    )
    offers: list[str] = Field(
        description="local ids of the offers it concerns; empty: every offer of the provider"
    )
    sources: list[SourceRef]


class HeadlinePriceOut(_Out):
    """The price listings lead with and sort on by default."""

    tier: Literal["on_demand", "reserved", "capacity_block"] = Field(
        description="the first uninterruptible tier priced: on_demand, else reserved, else "
        "capacity_block (spot is never the headline)"
    )
    usd_per_gpu_hour: float = Field(description="lowest price of that tier")
    as_of: date
    term: str | None
    stale: bool | None = Field(
        default=None, description="older than the server's stale_after_days (default 30)"
    )


class OfferOut(_Out):
    """A cluster offer: one provider, one GPU model, one fabric."""

    id: str
    provider: str = Field(description="provider slug")
    provider_name: str
    name: str | None
    gpu: str = Field(description="canonical GPU name")
    gpus_per_node: int | None
    fabric: str | None
    fabric_generation: str | None
    per_node_gbps: float | None = Field(description="inter-node bandwidth per node, Gbit/s")
    gpudirect_rdma: bool | None
    min_nodes: int | None
    max_nodes: int | None
    max_nodes_by_quote: int | None
    regions: list[str]
    countries: list[str] = Field(description="ISO 3166-1 alpha-2 countries of its regions")
    topology: TopologyOut
    orchestration: OrchestrationOut
    provisioning: ProvisioningOut
    billing: BillingOut
    discounts: list[DiscountOut]
    prices: list[PriceOut]
    from_usd_per_gpu_hour: float | None = Field(description="lowest price of any tier, spot too")
    headline_price: HeadlinePriceOut | None = Field(
        description="the price listings show and sort on; null when no uninterruptible tier "
        "is priced"
    )
    conflicts: list[ConflictOut] = Field(description="recorded source conflicts about it")
    ratings: list[RatingOut] = Field(
        description="its provider's independent ratings, newest first; an edition missing "
        "here did not rate the provider"
    )
    note: str | None
    measured_fabric: list[MeasuredFabricOut] = Field(
        description="published multi-node collective benchmarks, each with the model's "
        "prediction for the same run"
    )
    sources: Sources


class CheapestOut(_Out):
    """The lowest on-demand or reserved price over a provider's offers."""

    usd_per_gpu_hour: float
    tier: str = Field(description='"on_demand" or "reserved"')
    as_of: date
    offer: str = Field(description="the offer id the price belongs to")
    gpu: str = Field(description="that offer's GPU model")


class FactsKnownOut(_Out):
    """How many of the buyer's checklist facts the catalog states for a provider."""

    known: int
    total: int
    unknown: list[str] = Field(description='facts not stated, as "dimension.fact"')


class ProviderOut(_Out):
    """A provider and its sourced facts."""

    slug: str
    name: str
    url: str
    multi_node: str = Field(description='"yes", "no" or "unknown"')
    multi_node_evidence: str
    hq_country: str | None
    regions: list[str]
    countries: list[str]
    orchestration: OrchestrationOut
    provisioning: ProvisioningOut
    billing: BillingOut
    storage: StorageOut
    discounts: list[DiscountOut]
    ratings: list[RatingOut] = Field(
        description="independent ratings, newest first; an edition missing here did not "
        "rate the provider"
    )
    conflicts: list[ConflictOut]
    offer_count: int
    sources: Sources
    fabrics: list[str] = Field(description="fabric kinds of its offers")
    clustermax: str = Field(description='tier in the newest ClusterMAX edition, or "not_rated"')
    cheapest: CheapestOut | None = Field(description="null when no offer has such a price")
    facts_known: FactsKnownOut


class ProviderDetailOut(ProviderOut):
    """A provider with its offers."""

    offers: list[OfferOut]


class ListMeta(_Out):
    """Build metadata of the data served."""

    data_version: str
    built_at: str | None


class OffersMeta(ListMeta):
    """Build metadata plus the normalised query that produced the list."""

    filters: dict[str, list[str]]
    sort: str
    limit: int
    offset: int


class ProvidersOut(_Out):
    """``GET /api/v1/providers``: the directory (providers by its filters and sort)."""

    data: list[ProviderOut]
    count: int
    meta: ListMeta


class OffersOut(_Out):
    """``GET /api/v1/offers``: ``count`` is the total before paging."""

    data: list[OfferOut]
    count: int
    meta: OffersMeta


class PricePointOut(_Out):
    """One observation on a price line."""

    as_of: date
    usd_per_gpu_hour: float
    feed: str | None
    observed_at: str | None


class PriceSeriesOut(_Out):
    """Observations of one tier and term, oldest first (what the price chart draws)."""

    tier: str
    term: str | None
    points: list[PricePointOut]


class PriceHistoryMeta(ListMeta):
    """Build metadata plus the offer and the staleness limit used."""

    offer_id: str
    stale_after_days: int


class PriceHistoryOut(_Out):
    """``GET /api/v1/offers/{id}/prices``: every observation, newest first."""

    data: list[PriceOut]
    count: int
    current: list[PriceOut] = Field(description="newest price per tier and term")
    series: list[PriceSeriesOut]
    meta: PriceHistoryMeta


class ErrorBody(_Out):
    """What went wrong and which input field is at fault (null when none is)."""

    code: str
    message: str
    field: str | None


class ErrorOut(_Out):
    """Every 4xx answer of the API."""

    error: ErrorBody


class ShareOut(_Out):
    """``count`` of ``total``; ``share`` is their ratio (null when total is 0)."""

    count: int
    total: int
    share: float | None


class OfferCoverageOut(_Out):
    """Coverage of a set of multi-node offers."""

    offers: int
    facts: dict[str, ShareOut] = Field(
        description="per fact (gpus_per_node, fabric, per_node_gbps, gpudirect_rdma, "
        "cluster_size, on_demand_or_reserved_price, ...): offers where it is known"
    )
    primary_sourced_facts: ShareOut = Field(description="cited facts with a primary source")
    stale_prices: ShareOut = Field(description="current prices older than stale_after_days")


class ProviderCoverageOut(OfferCoverageOut):
    """One provider's status and the coverage of its multi-node offers."""

    slug: str
    name: str
    multi_node: str


class ProviderCountsOut(_Out):
    """How many providers, by multi-node status."""

    total: int
    multi_node: dict[str, int]


class CoverageOut(_Out):
    """``GET /api/v1/coverage`` and ``clusterscout coverage --format json``."""

    as_of: date
    stale_after_days: int
    providers: ProviderCountsOut
    multi_node_offers: OfferCoverageOut
    by_provider: list[ProviderCoverageOut]
    meta: ListMeta | None = Field(default=None, description="API only: the data version")


class HealthOut(_Out):
    """``GET /healthz``."""

    status: str
    data_version: str


# --- POST /api/v1/plan ---------------------------------------------------------------------


STALE_PRICE_DAYS: Final = 30
"""A price observed longer ago than this is flagged stale where money is decided."""


class NetworkCaseOut(_Out):
    """One end of an assumed network."""

    fabric: str
    per_node_gbps: float
    gpudirect_rdma: bool | None


class BracketSourceOut(_Out):
    """A public page that shows an end of a bracket shipped."""

    url: str
    checked_on: str


class AssumedOut(_Out):
    """What the planner assumed for an offer's unknown network facts, and from where."""

    label: str = Field(description='e.g. "assumed 800-3200 Gbit/s"')
    fields: list[str] = Field(
        description="the unknown facts: fabric, per_node_gbps, gpudirect_rdma"
    )
    low: NetworkCaseOut = Field(description="the pessimistic end (ranks the option)")
    high: NetworkCaseOut = Field(description="the optimistic end")
    sources: list[BracketSourceOut] = Field(
        description="the pages behind the bracket's ends (data/fabric_brackets.toml)"
    )


class FabricBasisOut(_Out):
    """The published run a plan's network figure rests on (see PlanOfferOut.fabric_basis)."""

    busbw_gbs: float = Field(description="measured bus bandwidth, GB/s")
    predicted_busbw_gbs: float = Field(
        description="the model's bus bandwidth for the same run on the advertised fabric"
    )
    factor: float = Field(
        description="measured / predicted, capped at 1: the share of the advertised per-node "
        "bandwidth the plan uses"
    )
    collective: str
    nodes: int
    gpus_per_node: int
    message_bytes: int
    source_url: str


class PlanOfferOut(_Out):
    """An offer as the planner saw it: reach, fabric and the price the run pays."""

    id: str = Field(description="the offer id of the catalog records")
    offer_id: str = Field(description="the same id (kept for older clients)")
    provider: str
    gpu: str
    gpus_per_node: int | None
    fabric: str | None
    per_node_gbps: float | None
    gpudirect_rdma: bool | None
    max_nodes: int | None = Field(description="most nodes sold, listed or by quote")
    usd_per_gpu_hour: float | None
    price_tier: str | None
    minimum_hours: float | None = Field(
        default=None,
        description="least hours a run pays (billing minimum or the price's term); cost_usd "
        "counts at least these",
    )
    price_source: str | None = Field(
        default=None,
        description="published (the catalog's price), buyer (entered in the request's prices) "
        "or null (no price: the option is in on_request)",
    )
    price_as_of: str | None = Field(
        default=None, description="the day the published price was observed (ISO date)"
    )
    price_age_days: int | None = Field(default=None, description="days since price_as_of")
    price_stale: bool = Field(
        default=False,
        description=f"true when the published price is over {STALE_PRICE_DAYS} days old",
    )
    gpus_per_node_assumed: bool = Field(
        default=False,
        description="true when the offer does not state its node size and its GPU "
        "generation's standard board is used (data/fabric_brackets.toml)",
    )
    assumed: AssumedOut | None = Field(
        default=None,
        description="the network the offer is evaluated on when its Gbit/s, fabric or GPUDirect "
        "RDMA is unknown; null when every network fact is known",
    )
    fabric_basis: Literal["advertised", "measured"] = Field(
        default="advertised",
        description="measured: per_node_gbps is the advertised figure scaled by a published "
        "benchmark on this offer (measured_fabric); advertised: the catalog's figure as is",
    )
    advertised_gbps: float | None = Field(
        default=None, description="the catalog's per-node Gbit/s when fabric_basis is measured"
    )
    measured_fabric: FabricBasisOut | None = Field(
        default=None, description="the published run the network figure rests on"
    )


class LayoutOut(_Out):
    """A parallel layout: tensor, pipeline, context, data and expert parallel degrees."""

    tp: int
    pp: int
    cp: int
    dp: int
    ep: int = Field(
        default=1,
        description="expert parallelism of a MoE model (1 for dense), folded into the tp*dp "
        "ranks of each pipeline stage",
    )
    vp: int = Field(description="virtual pipeline stages per GPU (interleaving)")
    sharding: str = Field(description="none, zero1, zero2 or fsdp")
    recompute: str = Field(description="none, selective or full")
    micro_batch: int
    global_batch: int = Field(description="sequences per optimizer step")


_CALIBRATED_DOC = (
    "true when the GPU's family speed was fitted on at least five of its own published "
    "measurements; false when it rests on a prior (a measured ratio to another family), so "
    "the figure is less certain than the error band says"
)


class GoodputOut(_Out):
    """What interruptions add to one option (see the plan's ``reliability``)."""

    goodput: float = Field(
        description="share of wall-clock time that trains, 0 to 1 (0: the run never finishes)"
    )
    expected_interruptions: float | None = Field(
        description="unplanned interruptions expected over the run; null when it never finishes"
    )
    time_with_interruptions_hours: float | None = Field(
        description="wall-clock hours including restarts and work done again"
    )
    added_hours: float | None = Field(description="hours the interruptions add")
    cost_with_interruptions_usd: float | None = Field(
        description="the option's cost including the hours interruptions add"
    )
    added_usd: float | None = Field(description="what the interruptions add to the cost")


class AllInOut(_Out):
    """Compute (with interruptions where goodput is known) plus storage and egress."""

    compute_usd: float
    storage_usd: float | None = Field(
        description="the footprint on the provider's shared storage for the run; null: unknown"
    )
    egress_usd: float | None = Field(description="the trained weights moved out; null: unknown")
    total_usd: float | None = Field(description="null when a price is unknown (see unknown)")
    unknown: list[str] = Field(description="the prices the catalog does not know")


class FootprintOut(_Out):
    """What the all-in cost stores and moves out, in GiB."""

    checkpoint_gib: float = Field(description="one checkpoint: weights and optimizer state")
    dataset_gib: float = Field(description="the tokenized dataset (2 or 4 bytes per token)")
    storage_gib: float
    egress_gib: float = Field(description="the trained weights, moved out once")


class ReliabilityOut(_Out):
    """The figures behind every option's goodput, and where they come from."""

    failures_per_million_gpu_hours: float
    checkpoint_minutes: float
    restart_minutes: float
    minutes_lost_per_interruption: float = Field(
        description="restart time plus half a checkpoint interval of work done again"
    )
    source: str = Field(description="where the default failure rate comes from")
    source_url: str
    checkpoint_source_url: str = Field(description="where the default checkpoint interval is from")
    restart_assumed: bool = Field(
        description="true when the default restart time is an assumption, not a published figure"
    )
    given: list[str] = Field(description="the figures the request gave in place of the defaults")


class PlanOptionOut(_Out):
    """One way to run the job on one offer."""

    offer: PlanOfferOut
    nodes: int
    gpus: int
    layout: LayoutOut
    time_hours: float
    cost_usd: float
    scaling_efficiency: float
    effective_usd_per_gpu_hour: float
    mfu: float
    steps: int = Field(
        description="steps that train the job's tokens at this layout's global batch "
        "(fewer than the job's when data parallelism needed a larger batch)"
    )
    pareto: bool = Field(description="no other option is both cheaper and faster")
    rank_by_cost: int
    rank_by_time: int
    breakdown_s: dict[str, float] = Field(
        default_factory=dict,
        description="seconds of one step by cause, as the estimate's breakdown_s (compute, "
        "bubble, tp_comm, dp_comm_exposed, all_to_all, ...)",
    )
    calibrated: bool = Field(
        description=_CALIBRATED_DOC + "; options with false are ranked after every calibrated one"
    )
    gpu_family: str = Field(description="the GPU family whose calibration the option uses")
    time_hours_range: list[float] | None = Field(
        default=None,
        description="[optimistic, pessimistic] hours when the offer's network is assumed "
        "(offer.assumed); time_hours is the pessimistic end; null when nothing is assumed",
    )
    cost_usd_range: list[float] | None = Field(
        default=None,
        description="[optimistic, pessimistic] USD, like time_hours_range (null without a price)",
    )
    gpu_hours: float = Field(default=0.0, description="GPU-hours of the run (pessimistic end)")
    billed_hours: float = Field(
        default=0.0,
        description="hours paid: time_hours raised to the offer's billing minimum or term and "
        "to whole billing steps (per hour, per day) where the catalog knows them",
    )
    minimum_applied: bool = Field(
        default=False,
        description="true when the run is shorter than the billing minimum or term and pays it",
    )
    billing_known: bool = Field(
        default=False,
        description="false when the catalog does not know the offer's billing granularity, "
        "minimum or term: cost_usd then bills the run's hours as they are",
    )
    assumed: str | None = Field(
        default=None, description='what the option rests on, e.g. "assumed 800-3200 Gbit/s"'
    )
    goodput: GoodputOut | None = Field(
        default=None,
        description="expected interruptions and the time and cost they add; time_hours and "
        "cost_usd stay failure-free",
    )
    all_in: AllInOut | None = Field(
        default=None, description="compute plus storage and egress; null when it never ends"
    )


class OnRequestOut(_Out):
    """An offer without a published price: time and GPU-hours, cost on request."""

    offer: PlanOfferOut
    nodes: int
    gpus: int
    layout: LayoutOut
    time_hours: float = Field(description="the pessimistic end when the network is assumed")
    time_hours_range: list[float] | None = Field(
        description="[optimistic, pessimistic] hours when the network is assumed"
    )
    gpu_hours: float
    calibrated: bool
    assumed: str | None = Field(description="what the option rests on, if anything")
    price: str = Field(description='always "on request"')
    market_reference: dict[str, Any] | None = Field(
        description="median and range of published prices of the same GPU model and tier "
        "across the catalog's multi-node offers, with how many prices it rests on; labelled "
        "as not the provider's price; null when fewer than two prices exist"
    )
    reference_cost_usd_range: list[float] | None = Field(
        description="gpu_hours times the reference's low and high price: an order of "
        "magnitude, not a quote"
    )


class ExclusionOut(_Out):
    """An offer left out of the options, and why."""

    offer: PlanOfferOut
    reason: str = Field(description=", ".join(r.value for r in ExclusionReason))


class MemoryOut(_Out):
    """The memory sum behind "do I need multi-node?" (whole model, unsharded)."""

    params: float
    weights_gib: float
    grads_gib: float
    optimizer_gib: float
    total_state_gib: float
    bytes_per_param: float


class GpuVerdictOut(_Out):
    """Whether one 8-GPU node of a GPU model holds the job, and how long it would take."""

    gpu: str
    memory_gib: float
    min_gpus_to_fit: int | None
    one_node_fits: bool
    one_node_time_hours: float | None
    one_node_layout: LayoutOut | None
    nodes_for_deadline: int | None = Field(
        description="fewest nodes of a priced offer of this GPU that finish within the "
        "deadline; null when none does within the node limit, or when no offer of this GPU "
        "has a price (then priced is false)"
    )
    calibrated: bool = Field(description=_CALIBRATED_DOC)
    priced: bool = Field(
        default=True, description="whether any offer of this GPU has a price to plan with"
    )


class ModelShapeOut(_Out):
    """The transformer planned for."""

    params: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    vocab: int
    ffn_hidden: int


class ServingVerdictOut(_Out):
    """Serving on one GPU model (8-GPU nodes): the smallest replica that fits, its speed."""

    gpu: str
    memory_gib: float
    tp: int | None = Field(description="tensor-parallel GPUs of a replica; null: none fits")
    pp: int | None = Field(description="pipeline stages of a replica (across nodes)")
    gpus_per_replica: int | None
    nodes_per_replica: int | None
    weights_gib_per_gpu: float | None
    kv_cache_gib_per_gpu: float | None
    tokens_per_s_per_replica: float | None = Field(
        description="decode output tokens/s of one replica (rough roofline estimate)"
    )
    replicas: int | None = Field(description="replicas the target tokens/s needs (1 without)")
    nodes: int | None = Field(description="8-GPU nodes of all replicas")
    tokens_per_s: float | None
    usd_per_hour: float | None = Field(
        description="at the cheapest listed price of this GPU; null when none is priced"
    )
    usd_per_million_tokens: float | None
    offer_id: str | None = Field(description="the offer whose price was used")
    ttft_s: float | None = Field(
        default=None,
        description="time to first token of one prompt that fills the context, seconds",
    )
    serving_points: int = Field(
        default=0, description="published serving measurements of this GPU the model was fitted on"
    )
    calibrated: bool = Field(
        default=False,
        description="false when fewer than 5 serving points stand behind this GPU's figures",
    )


class ServingOptionOut(_Out):
    """Serving on one offer: its node count, replicas, tokens/s and cost."""

    offer: PlanOfferOut
    nodes: int
    tp: int
    pp: int
    replicas: int
    tokens_per_s: float
    usd_per_hour: float
    usd_per_million_tokens: float
    ttft_s: float = Field(description="time to first token of one prompt that fills the context")
    serving_points: int = Field(description="published serving measurements of this GPU")
    calibrated: bool = Field(
        description="false when fewer than 5 serving points stand behind this GPU's figures; "
        "such options come after every calibrated one"
    )


class ServingOut(_Out):
    """The inference sizing (``job: inference``)."""

    precision: str = Field(description="bf16, fp16, fp8 or int4 (weights)")
    context: int
    concurrency: int
    target_tokens_per_s: float | None
    weights_gib: float
    kv_cache_gib: float = Field(description="KV cache of all concurrent sequences")
    kv_bytes_per_token: float
    per_gpu: list[ServingVerdictOut]
    options: list[ServingOptionOut] = Field(
        description="calibrated GPUs first, then cheapest per million tokens first"
    )
    error_band_pct: float = Field(
        description="p90 error of decode tokens/s on serving benchmarks held out by source, %"
    )
    ttft_band_pct: float = Field(
        default=0.0,
        description="p90 error of time to first token on serving benchmarks held out by source",
    )


class PlanOut(_Out):
    """``POST /api/v1/plan``: the verdict, ranked options and exclusions.

    For ``job: inference`` the training fields stay (``options`` is empty, ``tokens`` and
    ``steps`` are 0) and ``serving`` holds the sizing.
    """

    needs_multi_node: bool
    min_gpus_to_fit: int | None
    options: list[PlanOptionOut] = Field(description="cheapest first")
    excluded: list[ExclusionOut]
    memory: MemoryOut
    per_gpu: list[GpuVerdictOut]
    model: ModelShapeOut
    seq_len: int
    tokens: float
    steps: int
    error_band_pct: float = Field(description="p90 error on held-out measurements, percent")
    assumptions: list[str] = Field(description=" | ".join(a.value for a in Assumption))
    deadline_hours: float | None = Field(
        description="the deadline applied: the request's, or 2160 (90 days) when it gave none"
    )
    deadline_is_default: bool = Field(description="true when the 90-day default applied")
    nodes_for_deadline: int | None = Field(
        description="fewest nodes of any priced offer that finish within the deadline"
    )
    stack: str = Field(
        description="software stack the times assume: megatron, pytorch or deepspeed"
    )
    allow_spot: bool = Field(description="spot prices may be used across nodes")
    job: str = Field(
        default="pretrain", description="pretrain, full_finetune, lora, qlora or inference"
    )
    lora_rank: int | None = Field(default=None, description="adapter rank of lora/qlora jobs")
    serving: ServingOut | None = Field(
        default=None, description="the inference sizing; null for training jobs"
    )
    on_request: list[OnRequestOut] = Field(
        default_factory=list,
        description="offers without a published price that can run the job: time, GPU-hours "
        "and a market reference (fewest GPU-hours first); enter a quoted price in the "
        "request's prices to rank one",
    )
    reliability: ReliabilityOut | None = Field(
        default=None, description="failure rate, checkpoint and restart behind each goodput"
    )
    footprint: FootprintOut | None = Field(
        default=None, description="storage and egress volumes behind each all-in cost"
    )


def _goodput(g: Goodput | None) -> GoodputOut | None:
    if g is None:
        return None
    return GoodputOut(
        goodput=g.goodput,
        expected_interruptions=g.expected_interruptions,
        time_with_interruptions_hours=g.time_hours,
        added_hours=g.added_hours,
        cost_with_interruptions_usd=g.cost_usd,
        added_usd=g.added_usd,
    )


def _reliability(r: Reliability | None) -> ReliabilityOut | None:
    if r is None:
        return None
    return ReliabilityOut(
        failures_per_million_gpu_hours=r.failures_per_million_gpu_hours,
        checkpoint_minutes=r.checkpoint_minutes,
        restart_minutes=r.restart_minutes,
        minutes_lost_per_interruption=r.minutes_lost_per_interruption,
        source=r.source,
        source_url=r.source_url,
        checkpoint_source_url=r.checkpoint_source_url,
        restart_assumed=r.restart_assumed,
        given=list(r.given),
    )


def _serving(sp: ServingPlan) -> ServingOut:
    return ServingOut(
        precision=sp.precision.value,
        context=sp.context,
        concurrency=sp.concurrency,
        target_tokens_per_s=sp.target_tokens_per_s,
        weights_gib=sp.weights_gib,
        kv_cache_gib=sp.kv_cache_gib,
        kv_bytes_per_token=sp.kv_bytes_per_token,
        per_gpu=[ServingVerdictOut(**dataclasses.asdict(v)) for v in sp.per_gpu],
        options=[
            ServingOptionOut(
                offer=_plan_offer(o.offer),
                nodes=o.nodes,
                tp=o.tp,
                pp=o.pp,
                replicas=o.replicas,
                tokens_per_s=o.tokens_per_s,
                usd_per_hour=o.usd_per_hour,
                usd_per_million_tokens=o.usd_per_million_tokens,
                ttft_s=o.ttft_s,
                serving_points=o.serving_points,
                calibrated=o.calibrated,
            )
            for o in sp.options
        ],
        error_band_pct=sp.error_band_pct,
        ttft_band_pct=sp.ttft_band_pct,
    )


def _plan_offer(o: PlanOffer) -> PlanOfferOut:
    age = (
        (datetime.now(UTC).date() - date.fromisoformat(o.price_as_of)).days
        if o.price_as_of
        else None
    )
    return PlanOfferOut(
        id=o.offer_id,
        offer_id=o.offer_id,
        provider=o.provider,
        gpu=o.gpu,
        gpus_per_node=o.gpus_per_node,
        fabric=o.fabric.value if o.fabric else None,
        per_node_gbps=o.per_node_gbps,
        gpudirect_rdma=o.gpudirect_rdma,
        max_nodes=o.max_nodes,
        usd_per_gpu_hour=o.usd_per_gpu_hour,
        price_tier=o.price_tier,
        minimum_hours=o.minimum_hours,
        price_source=o.price_source,
        price_as_of=o.price_as_of,
        price_age_days=age,
        price_stale=age is not None and age > STALE_PRICE_DAYS,
        gpus_per_node_assumed=o.gpus_per_node_assumed,
        assumed=_assumed(o.assumed) if o.assumed else None,
        fabric_basis="measured" if o.measured else "advertised",
        advertised_gbps=o.advertised_gbps,
        measured_fabric=(
            FabricBasisOut(
                busbw_gbs=o.measured.busbw_gbs,
                predicted_busbw_gbs=o.measured.predicted_busbw_gbs,
                factor=round(o.measured.factor, 3),
                collective=o.measured.collective,
                nodes=o.measured.nodes,
                gpus_per_node=o.measured.gpus_per_node,
                message_bytes=o.measured.message_bytes,
                source_url=o.measured.source_url,
            )
            if o.measured
            else None
        ),
    )


def _assumed(a: AssumedNetwork) -> AssumedOut:
    def end(c: NetworkCase) -> NetworkCaseOut:
        return NetworkCaseOut(
            fabric=c.fabric.value, per_node_gbps=c.per_node_gbps, gpudirect_rdma=c.gpudirect_rdma
        )

    urls = {
        s.url: s.checked_on.isoformat() for b in a.brackets for s in (b.low_source, b.high_source)
    }
    return AssumedOut(
        label=a.label,
        fields=list(a.fields),
        low=end(a.low),
        high=end(a.high),
        sources=[BracketSourceOut(url=u, checked_on=d) for u, d in urls.items()],
    )


def _option_assumed(o: PlanOption) -> str | None:
    parts = [o.offer.assumed.label] if o.offer.assumed else []
    if o.offer.gpus_per_node_assumed:
        parts.append(f"assumed {o.offer.gpus_per_node} GPUs per node")
    return ", ".join(parts) or None


def _range(best: float | None, worst: float) -> list[float] | None:
    return None if best is None else [best, worst]


def _on_request(o: PlanOption, market: Mapping[str, Mapping[str, Any]]) -> OnRequestOut:
    ref = market.get(o.offer.gpu)
    hours = o.gpus * o.time_hours
    return OnRequestOut(
        offer=_plan_offer(o.offer),
        nodes=o.nodes,
        gpus=o.gpus,
        layout=_layout(o.layout),
        time_hours=o.time_hours,
        time_hours_range=_range(o.time_hours_best, o.time_hours),
        gpu_hours=hours,
        calibrated=o.calibrated,
        assumed=_option_assumed(o),
        price="on request",
        market_reference=dict(ref) if ref else None,
        reference_cost_usd_range=[
            hours * ref["low_usd_per_gpu_hour"],
            hours * ref["high_usd_per_gpu_hour"],
        ]
        if ref
        else None,
    )


def _layout(lay: Layout) -> LayoutOut:
    return LayoutOut(
        tp=lay.tp,
        pp=lay.pp,
        cp=lay.cp,
        dp=lay.dp,
        ep=lay.ep,
        vp=lay.vp,
        sharding=lay.sharding.value,
        recompute=lay.recompute.value,
        micro_batch=lay.micro_batch,
        global_batch=lay.global_batch,
    )


def _option(o: PlanOption) -> PlanOptionOut:
    return PlanOptionOut(
        offer=_plan_offer(o.offer),
        nodes=o.nodes,
        gpus=o.gpus,
        layout=_layout(o.layout),
        time_hours=o.time_hours,
        cost_usd=o.cost_usd,
        scaling_efficiency=o.scaling_efficiency,
        effective_usd_per_gpu_hour=o.effective_usd_per_gpu_hour,
        mfu=o.mfu,
        steps=o.steps,
        pareto=o.pareto,
        rank_by_cost=o.rank_by_cost,
        rank_by_time=o.rank_by_time,
        breakdown_s=dict(o.breakdown),
        calibrated=o.calibrated,
        gpu_family=o.gpu_family,
        time_hours_range=_range(o.time_hours_best, o.time_hours),
        cost_usd_range=_range(o.cost_usd_best, o.cost_usd),
        gpu_hours=o.gpus * o.time_hours,
        billed_hours=o.billed_hours,
        minimum_applied=(o.offer.minimum_hours or 0) > o.time_hours,
        billing_known=o.offer.billing_known,
        assumed=_option_assumed(o),
        goodput=_goodput(o.goodput),
        all_in=None
        if o.all_in is None
        else AllInOut(
            compute_usd=o.all_in.compute_usd,
            storage_usd=o.all_in.storage_usd,
            egress_usd=o.all_in.egress_usd,
            total_usd=o.all_in.total_usd,
            unknown=list(o.all_in.unknown),
        ),
    )


def _exclusion(e: Exclusion) -> ExclusionOut:
    return ExclusionOut(offer=_plan_offer(e.offer), reason=e.reason.value)


def _verdict(v: GpuVerdict) -> GpuVerdictOut:
    return GpuVerdictOut(
        gpu=v.gpu,
        memory_gib=v.memory_gib,
        min_gpus_to_fit=v.min_gpus_to_fit,
        one_node_fits=v.one_node_fits,
        one_node_time_hours=v.one_node_time_hours,
        one_node_layout=_layout(v.one_node_layout) if v.one_node_layout else None,
        nodes_for_deadline=v.nodes_for_deadline,
        calibrated=v.calibrated,
        priced=v.priced,
    )


def plan_out(result: PlanResult) -> PlanOut:
    """The API shape of a plan."""
    m, mem = result.model, result.memory
    return PlanOut(
        needs_multi_node=result.needs_multi_node,
        min_gpus_to_fit=result.min_gpus_to_fit,
        options=[_option(o) for o in result.options],
        excluded=[_exclusion(e) for e in result.excluded],
        memory=MemoryOut(
            params=mem.params,
            weights_gib=mem.weights_gib,
            grads_gib=mem.grads_gib,
            optimizer_gib=mem.optimizer_gib,
            total_state_gib=mem.total_state_gib,
            bytes_per_param=mem.bytes_per_param,
        ),
        per_gpu=[_verdict(v) for v in result.per_gpu],
        model=ModelShapeOut(
            params=m.params,
            layers=m.layers,
            hidden=m.hidden,
            heads=m.heads,
            kv_heads=m.kv_heads,
            vocab=m.vocab,
            ffn_hidden=m.ffn_hidden,
        ),
        seq_len=result.seq_len,
        tokens=result.tokens,
        steps=result.steps,
        error_band_pct=result.error_band_pct,
        assumptions=[a.value for a in result.assumptions],
        deadline_hours=result.deadline_hours,
        deadline_is_default=result.deadline_is_default,
        nodes_for_deadline=result.nodes_for_deadline,
        stack=result.stack.value,
        allow_spot=result.allow_spot,
        job=result.job.value,
        lora_rank=result.lora_rank,
        serving=_serving(result.serving) if result.serving is not None else None,
        on_request=[_on_request(o, result.market_references) for o in result.on_request],
        reliability=_reliability(result.reliability),
        footprint=None
        if result.footprint is None
        else FootprintOut(
            checkpoint_gib=result.footprint.checkpoint_gib,
            dataset_gib=result.footprint.dataset_gib,
            storage_gib=result.footprint.storage_gib,
            egress_gib=result.footprint.egress_gib,
        ),
    )


def plan_json(result: PlanResult) -> dict[str, Any]:
    """The JSON of ``POST /api/v1/plan`` (and of the Python API's ``Plan.to_dict()``)."""
    return plan_out(result).model_dump(mode="json")


# --- POST /api/v1/estimate -----------------------------------------------------------------


_GPU_DOC = "the canonical name of the scenario's GPU"


class CollectiveEstimateOut(_Out):
    """A collective: time and nccl-tests bandwidths (GB/s)."""

    kind: Literal["collective"]
    gpu: str = Field(description=_GPU_DOC)
    time_s: float
    algbw_gbs: float
    busbw_gbs: float


class TrainingEstimateOut(_Out):
    """A training step: time, throughput, utilisation, memory and where the time goes."""

    kind: Literal["training"]
    gpu: str = Field(description=_GPU_DOC)
    step_time_s: float
    tokens_per_s_per_gpu: float
    model_tflops_per_gpu: float
    mfu: float
    scaling_efficiency: float = Field(description="vs one node with the same per-GPU work")
    memory_gib_per_gpu: float
    fits: bool
    breakdown_s: dict[str, float] = Field(
        description="compute, stage_imbalance, bubble, tp_comm, cp_comm, pp_comm, "
        "dp_comm_exposed, all_to_all, overlap_slowdown, straggler"
    )
    calibrated: bool = Field(description=_CALIBRATED_DOC)
    gpu_family: str = Field(description="the GPU family whose calibration the estimate uses")


class BatchEstimateOut(_Out):
    """An embarrassingly parallel batch job."""

    kind: Literal["batch"]
    gpu: str = Field(description=_GPU_DOC)
    time_s: float
    scaling_efficiency: float


class HpcEstimateOut(_Out):
    """A tightly coupled, weak-scaled HPC job."""

    kind: Literal["hpc"]
    gpu: str = Field(description=_GPU_DOC)
    step_time_s: float
    comm_time_s: float
    time_s: float
    scaling_efficiency: float


EstimateOut = Annotated[
    CollectiveEstimateOut | TrainingEstimateOut | BatchEstimateOut | HpcEstimateOut,
    Field(discriminator="kind"),
]
"""``POST /api/v1/estimate``: ``kind`` and ``gpu``, then the output keys of that kind."""


def estimate_out(
    answer: EstimateResult,
) -> CollectiveEstimateOut | TrainingEstimateOut | BatchEstimateOut | HpcEstimateOut:
    """The API shape of an estimate."""
    r, gpu = answer.result, answer.gpu
    if isinstance(r, CollectiveResult):
        return CollectiveEstimateOut(
            kind="collective",
            gpu=gpu,
            time_s=r.time_s,
            algbw_gbs=r.algbw_gbs,
            busbw_gbs=r.busbw_gbs,
        )
    if isinstance(r, TrainingResult):
        return TrainingEstimateOut(
            kind="training",
            gpu=gpu,
            step_time_s=r.step_time_s,
            tokens_per_s_per_gpu=r.tokens_per_s_per_gpu,
            model_tflops_per_gpu=r.model_tflops_per_gpu,
            mfu=r.mfu,
            scaling_efficiency=r.scaling_efficiency,
            memory_gib_per_gpu=r.memory_gib_per_gpu,
            fits=r.fits,
            breakdown_s=dict(r.breakdown.as_dict()),
            calibrated=answer.calibrated,
            gpu_family=answer.gpu_family,
        )
    if isinstance(r, BatchResult):
        return BatchEstimateOut(
            kind="batch", gpu=gpu, time_s=r.time_s, scaling_efficiency=r.scaling_efficiency
        )
    return HpcEstimateOut(
        kind="hpc",
        gpu=gpu,
        step_time_s=r.step_time_s,
        comm_time_s=r.comm_time_s,
        time_s=r.time_s,
        scaling_efficiency=r.scaling_efficiency,
    )


def estimate_json(answer: EstimateResult) -> dict[str, Any]:
    """The JSON of ``POST /api/v1/estimate`` (and of the Python API's ``Estimate.to_dict()``)."""
    return estimate_out(answer).model_dump(mode="json")


# --- POST /api/v1/launch -------------------------------------------------------------------


class LaunchFileOut(_Out):
    """One generated file, with the path that downloads it alone."""

    kind: str = Field(description="skypilot, dstack-fleet, dstack-task, slurm or check")
    filename: str
    media_type: str
    content: str
    download: str = Field(description="GET path that returns this file as an attachment")


class LaunchFormatOut(_Out):
    """One format: its files, or the reason the tool cannot target the offer."""

    format: Literal["skypilot", "dstack", "slurm", "check"]
    supported: bool
    reason: str | None = Field(description="why there is no file (null when supported)")
    files: list[LaunchFileOut]


class LaunchLayoutOut(_Out):
    """The parallel layout passed to the training command (from a plan option or the body)."""

    tp: int
    pp: int
    dp: int
    sharding: str
    micro_batch: int
    global_batch: int


class LaunchOut(_Out):
    """The answer of ``POST /api/v1/launch``: files per format and the fabric check script."""

    offer_id: str
    provider: str
    gpu: str
    fabric: str | None
    nodes: int
    gpus_per_node: int | None
    layout: LaunchLayoutOut | None
    formats: list[LaunchFormatOut]
    check: LaunchFormatOut = Field(description="the nccl-tests script for the same cluster")


def launch_query(answer: LaunchAnswer) -> str:
    """The query string of the download paths: nodes, and the layout when there is one."""
    request = answer.request
    params: dict[str, Any] = {"nodes": request.nodes}
    if request.layout is not None:
        params.update(dataclasses.asdict(request.layout))
    return urlencode(params)


def _kind(fmt: str, filename: str) -> str:
    if fmt == "dstack":
        return "dstack-fleet" if filename.endswith(".fleet.dstack.yml") else "dstack-task"
    return fmt


def _format(answer: LaunchAnswer, result: FormatResult) -> LaunchFormatOut:
    offer_id = answer.request.offer.id
    query = launch_query(answer)
    files = []
    for f in result.files:
        kind = _kind(result.format, f.filename)
        path = f"/api/v1/launch/{quote(offer_id, safe='')}/{kind}?{query}"
        files.append(
            LaunchFileOut(
                kind=kind,
                filename=f.filename,
                media_type=f.media_type,
                content=f.content,
                download=path,
            )
        )
    return LaunchFormatOut(
        format=result.format,
        supported=result.reason is None,
        reason=result.reason,
        files=files,
    )


def launch_json(answer: LaunchAnswer) -> dict[str, Any]:
    """The JSON of ``POST /api/v1/launch``."""
    return launch_out(answer).model_dump(mode="json")


def launch_out(answer: LaunchAnswer) -> LaunchOut:
    """The typed answer of ``POST /api/v1/launch`` (the pages' launch panels read it too)."""
    request = answer.request
    offer = request.offer
    layout = request.layout
    return LaunchOut(
        offer_id=offer.id,
        provider=offer.provider,
        gpu=offer.gpu,
        fabric=offer.fabric.value if offer.fabric else None,
        nodes=request.nodes,
        gpus_per_node=offer.gpus_per_node,
        layout=LaunchLayoutOut(**dataclasses.asdict(layout)) if layout else None,
        formats=[_format(answer, r) for r in answer.formats],
        check=_format(answer, answer.check),
    )
