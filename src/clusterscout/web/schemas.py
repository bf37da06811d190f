"""Published JSON shapes of the API (DESIGN section 4), declared here, not derived from the domain.

Unknown facts are ``null``. ``sources`` maps a field name to ``[{url, checked_on, kind}]``.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
    note: str | None


class TopologyOut(_Out):
    """Placement claims for the nodes of one cluster."""

    non_blocking: bool | None
    rail_optimized: bool | None
    locality: str | None


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
    from_usd_per_gpu_hour: float | None
    note: str | None
    sources: Sources


class ConflictOut(_Out):
    """Two sources that disagree and what was kept."""

    topic: str
    note: str
    sources: list[SourceRef]


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
    ratings: list[RatingOut]
    conflicts: list[ConflictOut]
    offer_count: int
    sources: Sources


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
    """``GET /api/v1/providers``."""

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


class HealthOut(_Out):
    """``GET /healthz``."""

    status: str
    data_version: str
