"""Strict pydantic models of the TOML files in data/ (the input format, not the domain)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Final, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    StringConstraints,
    model_validator,
)

from clusterscout.domain.ids import SLUG_PATTERN
from clusterscout.domain.launch import CONTROL_CHARACTERS
from clusterscout.domain.models import (
    Access,
    BillingGranularity,
    ConflictTopic,
    FabricKind,
    MultiNode,
    PriceTier,
    RatingTier,
    SourceKind,
)


def _printable(value: str) -> str:
    found = CONTROL_CHARACTERS.search(value)
    if found is not None:
        msg = (
            f"must not contain control characters (found {found.group()!r} at "
            f"{found.start()}); write the text on one line"
        )
        raise ValueError(msg)
    return value


Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=80)]
Text = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=2000),
    AfterValidator(_printable),
]
ShortText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    AfterValidator(_printable),
]
# Upper bounds of counts and quantities: each far above anything sold today (the catalog's
# bounds are listed in docs/data-format.md), low enough that a typo such as 9223372036854775807
# GPUs per node is refused by validate instead of reaching the planner.
MAX_GPUS_PER_NODE: Final = 72
"""A whole NVL72 rack sold as one node is the largest scale-up domain on the market."""
MAX_CATALOG_NODES: Final = 100_000
"""The model's own bound on nodes in a cluster."""
GpusPerNode = Annotated[int, Field(gt=0, le=MAX_GPUS_PER_NODE)]
NodeCount = Annotated[int, Field(gt=0, le=MAX_CATALOG_NODES)]
Days = Annotated[int, Field(gt=0, le=3_650)]
UsdPerGpuHour = Annotated[float, Field(gt=0, le=1_000)]
Gbps = Annotated[float, Field(gt=0, le=100_000)]
Gib = Annotated[float, Field(gt=0, le=10_000)]
Tflops = Annotated[float, Field(gt=0, le=1_000_000)]
Tbps = Annotated[float, Field(gt=0, le=1_000)]
Gbs = Annotated[float, Field(gt=0, le=1_000_000)]
Hours = Annotated[float, Field(gt=0, le=87_600)]
UsdPerGibMonth = Annotated[float, Field(gt=0, le=1_000)]
UsdPerGib = Annotated[float, Field(ge=0, le=1_000)]
Microseconds = Annotated[float, Field(gt=0, le=1_000_000)]
T = TypeVar("T")
# TOML can only give strings for enums; strict mode would refuse str -> StrEnum, so enum fields
# alone are validated laxly (pydantic then lists the allowed values on error).
Lax = Annotated[T, Field(strict=False)]
SourceIds = Annotated[list[Slug], Field(min_length=1)]


def _url_str(value: HttpUrl) -> str:
    return str(value)


Url = Annotated[HttpUrl, AfterValidator(_url_str)]
Country = Annotated[str, StringConstraints(pattern=r"^[A-Z]{2}$")]
Percent = Annotated[float, Field(gt=0, lt=100)]


class _Strict(BaseModel):
    # strict=True keeps TOML types honest: "8" is not 8 and 1 is not true.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SourceIn(_Strict):
    """A `[[sources]]` entry: `checked_on` is when we last read it, `published_on` its date."""

    id: Slug
    url: Url
    checked_on: date
    published_on: date | None = None
    kind: Lax[SourceKind] = SourceKind.PRIMARY
    title: ShortText | None = None
    note: Text | None = None


class _Sourced(_Strict):
    """A fact group: values plus the ids of the sources that state them."""

    sources: SourceIds


class RegionIn(_Strict):
    """A region with the country it is in: `{ name = "us-east-1", country = "US" }`."""

    name: ShortText
    country: Country


# A region is a bare name (country unknown) or a name with its ISO 3166-1 alpha-2 country.
RegionEntry = ShortText | RegionIn


class LocationIn(_Sourced):
    """`[location]`."""

    hq_country: Country | None = None
    regions: list[RegionEntry] = Field(default_factory=list)


class MultiNodeIn(_Sourced):
    """`[multi_node]`."""

    status: Lax[MultiNode]
    evidence: Text


class OrchestrationIn(_Sourced):
    """`[orchestration]` and `[offers.orchestration]`."""

    managed_slurm: bool | None = None
    managed_kubernetes: bool | None = None
    nccl_preconfigured: bool | None = None
    raw_vms: bool | None = None
    note: Text | None = None


class ProvisioningIn(_Sourced):
    """`[provisioning]` and `[offers.provisioning]`."""

    on_demand_clusters: bool | None = None
    reserved: bool | None = None
    reserved_terms: list[ShortText] = Field(default_factory=list)
    waitlist: bool | None = None
    access: Lax[Access] | None = None
    note: Text | None = None


class BillingIn(_Sourced):
    """`[billing]`."""

    granularity: Lax[BillingGranularity] | None = None
    minimum: ShortText | None = None
    minimum_hours: Hours | None = None
    note: Text | None = None


class DiscountIn(_Sourced):
    """`[[discounts]]` and `[[offers.discounts]]`: a published discount for a commitment."""

    term_days: Days
    max_percent: Percent
    min_percent: Percent | None = None
    off: Lax[PriceTier] = PriceTier.ON_DEMAND
    note: Text | None = None

    @model_validator(mode="after")
    def _ordered(self) -> DiscountIn:
        if self.min_percent is not None and self.min_percent > self.max_percent:
            msg = "min_percent is larger than max_percent"
            raise ValueError(msg)
        return self


class StorageIn(_Sourced):
    """`[storage]`."""

    shared_filesystem: bool | None = None
    products: list[ShortText] = Field(default_factory=list)
    throughput_gbs: Gbs | None = None
    usd_per_gib_month: UsdPerGibMonth | None = None
    egress_usd_per_gib: UsdPerGib | None = None
    """Internet egress per GiB (0: free); the first paid tier where the price is tiered."""
    note: Text | None = None


class TopologyIn(_Sourced):
    """`[offers.topology]`."""

    non_blocking: bool | None = None
    rail_optimized: bool | None = None
    locality: Text | None = None


class ConflictIn(_Sourced):
    """`[[conflicts]]`."""

    topic: ShortText
    note: Text
    about: list[Lax[ConflictTopic]] = Field(default_factory=list)
    offers: list[Slug] = Field(default_factory=list)


class PriceIn(_Strict):
    """`[[offers.prices]]`."""

    tier: Lax[PriceTier]
    usd_per_gpu_hour: UsdPerGpuHour
    as_of: date
    source: Slug
    term: ShortText | None = None
    term_days: Days | None = None
    prepay: bool | None = None
    note: Text | None = None


class MeasuredFabricIn(_Sourced):
    """`[[offers.measured_fabric]]`: one published multi-node collective benchmark."""

    collective: Literal["all_reduce", "all_gather", "reduce_scatter"]
    message_bytes: Annotated[int, Field(gt=0, le=2**40)]
    # Two nodes at least: a one-node run measures NVLink, not the offer's fabric.
    nodes: Annotated[int, Field(ge=2, le=MAX_CATALOG_NODES)]
    gpus_per_node: GpusPerNode
    busbw_gbs: Gbs
    nccl_version: Annotated[str, StringConstraints(pattern=r"^\d+\.\d+(\.\d+)?$")] | None = None
    tool: ShortText | None = None
    in_network_reduction: bool = False
    degraded: bool = False
    published_on: date | None = None
    note: Text | None = None


OFFER_FACT_FIELDS = (
    "name",
    "gpu",
    "gpus_per_node",
    "fabric",
    "fabric_generation",
    "per_node_gbps",
    "gpudirect_rdma",
    "min_nodes",
    "max_nodes",
    "max_nodes_by_quote",
    "regions",
)


class OfferIn(_Sourced):
    """`[[offers]]`."""

    id: Slug
    gpu: ShortText
    name: ShortText | None = None
    gpus_per_node: GpusPerNode | None = None
    fabric: Lax[FabricKind] | None = None
    fabric_generation: Slug | None = None
    per_node_gbps: Gbps | None = None
    gpudirect_rdma: bool | None = None
    min_nodes: NodeCount | None = None
    max_nodes: NodeCount | None = None
    max_nodes_by_quote: NodeCount | None = None
    regions: list[RegionEntry] = Field(default_factory=list)
    note: Text | None = None
    field_sources: dict[str, SourceIds] = Field(default_factory=dict)
    topology: TopologyIn | None = None
    orchestration: OrchestrationIn | None = None
    provisioning: ProvisioningIn | None = None
    billing: BillingIn | None = None
    discounts: list[DiscountIn] = Field(default_factory=list)
    prices: list[PriceIn] = Field(default_factory=list)
    measured_fabric: list[MeasuredFabricIn] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> OfferIn:
        unknown = sorted(set(self.field_sources) - set(OFFER_FACT_FIELDS))
        if unknown:
            msg = f"field_sources names unknown fields: {', '.join(unknown)}"
            raise ValueError(msg)
        if self.min_nodes and self.max_nodes and self.min_nodes > self.max_nodes:
            msg = f"min_nodes ({self.min_nodes}) is larger than max_nodes ({self.max_nodes})"
            raise ValueError(msg)
        if self.max_nodes and self.max_nodes_by_quote and self.max_nodes_by_quote < self.max_nodes:
            msg = "max_nodes_by_quote is smaller than the self-serve max_nodes"
            raise ValueError(msg)
        for m in self.measured_fabric:
            # A run on other node shapes would be compared with the wrong prediction.
            if self.gpus_per_node and m.gpus_per_node != self.gpus_per_node:
                msg = (
                    f"measured_fabric ran {m.gpus_per_node} GPUs per node, the offer has "
                    f"{self.gpus_per_node}"
                )
                raise ValueError(msg)
        return self


class ProviderIn(_Strict):
    """One `data/providers/<slug>.toml` file."""

    slug: Slug
    name: ShortText
    url: Url
    sources: list[SourceIn] = Field(min_length=1)
    multi_node: MultiNodeIn
    location: LocationIn | None = None
    orchestration: OrchestrationIn | None = None
    provisioning: ProvisioningIn | None = None
    billing: BillingIn | None = None
    storage: StorageIn | None = None
    discounts: list[DiscountIn] = Field(default_factory=list)
    conflicts: list[ConflictIn] = Field(default_factory=list)
    offers: list[OfferIn] = Field(default_factory=list)

    @model_validator(mode="after")
    def _offers_only_when_multi_node(self) -> ProviderIn:
        if self.offers and self.multi_node.status is not MultiNode.YES:
            msg = "offers are listed but multi_node.status is not 'yes'"
            raise ValueError(msg)
        return self


class GpuIn(_Sourced):
    """`[[gpus]]` in gpus.toml."""

    name: ShortText
    vendor: Literal["nvidia", "amd", "intel"]
    memory_gib: Gib
    memory_gb: Gib | None = None
    aliases: list[ShortText] = Field(default_factory=list)
    bf16_dense_tflops: Tflops | None = None
    fp8_dense_tflops: Tflops | None = None
    hbm_tbps: Tbps | None = None
    scale_up_gbs: Gbs | None = None
    price_min_usd_per_gpu_hour: UsdPerGpuHour | None = None
    price_max_usd_per_gpu_hour: UsdPerGpuHour | None = None
    note: Text | None = None


class GpusFileIn(_Strict):
    """gpus.toml."""

    sources: list[SourceIn] = Field(min_length=1)
    gpus: list[GpuIn] = Field(min_length=1)


class FabricIn(_Sourced):
    """`[[fabrics]]` in fabrics.toml."""

    id: Slug
    kind: Lax[FabricKind]
    name: ShortText
    per_port_gbps: Gbps | None = None
    rdma: bool | None = None
    latency_us: Microseconds | None = None
    note: Text | None = None


class FabricsFileIn(_Strict):
    """fabrics.toml."""

    sources: list[SourceIn] = Field(min_length=1)
    fabrics: list[FabricIn] = Field(min_length=1)


class RatingIn(_Sourced):
    """`[[ratings]]` in ratings.toml: one rater's tier for one provider in one edition."""

    provider: Slug
    rater: Slug
    edition: ShortText
    tier: Lax[RatingTier]
    published_on: date
    note: Text | None = None


class RatingsFileIn(_Strict):
    """ratings.toml."""

    sources: list[SourceIn] = Field(min_length=1)
    ratings: list[RatingIn] = Field(default_factory=list)
