"""Frozen domain records of the catalog: providers, offers, prices and their sources."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from typing import Final, Self

from clusterscout.domain.regions import RegionIndex


class _ParseableEnum(StrEnum):
    @classmethod
    def parse(cls, value: str) -> Self:
        """Tolerant parse: case, spaces and dashes are folded to the canonical value.

        Raises:
            ValueError: naming the allowed values.
        """
        key = value.strip().lower().replace("-", "_").replace(" ", "_")
        for member in cls:
            if member.value == key:
                return member
        allowed = ", ".join(m.value for m in cls)
        msg = f"{value!r} is not one of: {allowed}"
        raise ValueError(msg)

    @classmethod
    def values(cls) -> tuple[str, ...]:
        """All canonical values, in declaration order."""
        return tuple(m.value for m in cls)


class MultiNode(_ParseableEnum):
    """Does the provider rent clusters of several nodes joined by a fabric?"""

    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


class FabricKind(_ParseableEnum):
    """Kind of inter-node network."""

    INFINIBAND = "infiniband"
    ROCE = "roce"
    EFA = "efa"
    TCPXO = "tcpxo"
    TCPX = "tcpx"
    ETHERNET = "ethernet"


class PriceTier(_ParseableEnum):
    """How a price is bought."""

    ON_DEMAND = "on_demand"
    RESERVED = "reserved"
    SPOT = "spot"
    CAPACITY_BLOCK = "capacity_block"


HEADLINE_TIERS: Final = (PriceTier.ON_DEMAND, PriceTier.RESERVED, PriceTier.CAPACITY_BLOCK)
"""Uninterruptible tiers, in the order the headline price takes them (spot never leads)."""


class ProvisioningMode(_ParseableEnum):
    """How a cluster can be obtained (filter values)."""

    ON_DEMAND = "on_demand"
    RESERVED = "reserved"
    WAITLIST = "waitlist"


class OrchestrationKind(_ParseableEnum):
    """Managed schedulers a cluster can come with (filter values)."""

    SLURM = "slurm"
    KUBERNETES = "kubernetes"


class BillingGranularity(_ParseableEnum):
    """Smallest billed unit of time."""

    PER_SECOND = "per_second"
    PER_MINUTE = "per_minute"
    PER_HOUR = "per_hour"
    PER_DAY = "per_day"
    PER_WEEK = "per_week"
    PER_MONTH = "per_month"
    UPFRONT = "upfront"


class Access(_ParseableEnum):
    """How quickly a buyer can get a multi-node cluster, fastest route first."""

    SELF_SERVE = "self_serve"  # start it now from a console or API, no human in the loop
    APPROVAL = "approval"  # self-serve once a quota or account request is approved
    SALES = "sales"  # only through a sales contact or contract
    WAITLIST = "waitlist"  # join a waitlist


class RatingTier(_ParseableEnum):
    """Tiers an independent rating can give (ClusterMAX's medals and its lowest class)."""

    PLATINUM = "platinum"
    GOLD = "gold"
    SILVER = "silver"
    BRONZE = "bronze"
    PARTICIPATION_RIBBON = "participation_ribbon"  # ClusterMAX 3.0: below bronze
    UNDERPERFORM = "underperform"
    UNAVAILABLE = "unavailable"  # ClusterMAX: could not be tested, not recommended
    NOT_RECOMMENDED = "not_recommended"


class ConflictTopic(_ParseableEnum):
    """What a recorded source conflict is about (the listing badges price and provisioning)."""

    PRICE = "price"
    PROVISIONING = "provisioning"
    CAPACITY = "capacity"
    NETWORK = "network"
    STORAGE = "storage"
    OTHER = "other"


class SourceKind(_ParseableEnum):
    """Where a source sits relative to the provider."""

    PRIMARY = "primary"
    SECONDARY = "secondary"
    CATALOG = "catalog"


@dataclass(frozen=True, slots=True)
class Source:
    """A public page that states a fact, and the day it was checked."""

    id: str
    url: str
    checked_on: date
    kind: SourceKind = SourceKind.PRIMARY
    published_on: date | None = None
    title: str | None = None
    note: str | None = None


Sources = tuple[Source, ...]


@dataclass(frozen=True, slots=True)
class Orchestration:
    """What runs the cluster: managed schedulers, NCCL set-up, or bare machines."""

    managed_slurm: bool | None = None
    managed_kubernetes: bool | None = None
    nccl_preconfigured: bool | None = None
    raw_vms: bool | None = None
    note: str | None = None
    sources: Sources = ()


@dataclass(frozen=True, slots=True)
class Provisioning:
    """How a cluster is obtained."""

    on_demand_clusters: bool | None = None
    reserved: bool | None = None
    reserved_terms: tuple[str, ...] = ()
    waitlist: bool | None = None
    access: Access | None = None
    note: str | None = None
    sources: Sources = ()


@dataclass(frozen=True, slots=True)
class Billing:
    """How usage is billed."""

    granularity: BillingGranularity | None = None
    minimum: str | None = None
    minimum_hours: float | None = None
    note: str | None = None
    sources: Sources = ()


@dataclass(frozen=True, slots=True)
class Discount:
    """A published discount for a commitment, often only an upper bound ("up to 30% off")."""

    term_days: int
    max_percent: float
    min_percent: float | None = None
    off: PriceTier = PriceTier.ON_DEMAND
    note: str | None = None
    sources: Sources = ()


@dataclass(frozen=True, slots=True)
class Rating:
    """An independent rating of a provider, e.g. a ClusterMAX tier, with its date."""

    rater: str
    edition: str
    tier: RatingTier
    published_on: date
    note: str | None = None
    sources: Sources = ()


@dataclass(frozen=True, slots=True)
class RatingEdition:
    """One edition of an independent rating (e.g. ClusterMAX 3.0): its date and sources.

    Derived from the ratings the catalog holds: a provider without a rating in an edition
    the catalog knows was not rated in it, which is itself a sourced fact (the edition's list).
    """

    rater: str
    edition: str
    published_on: date
    sources: Sources = ()


@dataclass(frozen=True, slots=True)
class Storage:
    """Shared storage sold next to the cluster."""

    shared_filesystem: bool | None = None
    products: tuple[str, ...] = ()
    throughput_gbs: float | None = None
    usd_per_gib_month: float | None = None
    note: str | None = None
    sources: Sources = ()
    egress_usd_per_gib: float | None = None
    """Internet egress per GiB (0.0: free; None: unknown)."""


@dataclass(frozen=True, slots=True)
class Topology:
    """Placement claims for the nodes of one cluster."""

    non_blocking: bool | None = None
    rail_optimized: bool | None = None
    locality: str | None = None
    sources: Sources = ()


MEASURED_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")
"""Collectives a published fabric measurement may name (the ones the model predicts)."""


@dataclass(frozen=True, slots=True)
class MeasuredFabric:
    """A published collective benchmark on an offer's nodes (nccl-tests busbw or equivalent).

    ``busbw_gbs`` is the bus bandwidth in GB/s as nccl-tests defines it; ``message_bytes`` the
    whole buffer. ``degraded`` marks a run the source says missed the provider's documented
    setup: it is shown, never used in place of the model.
    """

    collective: str
    message_bytes: int
    nodes: int
    gpus_per_node: int
    busbw_gbs: float
    sources: Sources
    nccl_version: str | None = None
    tool: str | None = None
    in_network_reduction: bool = False
    degraded: bool = False
    published_on: date | None = None
    note: str | None = None

    @property
    def gpus(self) -> int:
        """Ranks in the run (one per GPU)."""
        return self.nodes * self.gpus_per_node


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two sources that disagree, and what we kept."""

    topic: str
    note: str
    sources: Sources = ()
    about: tuple[ConflictTopic, ...] = ()
    offers: tuple[str, ...] = ()
    """Local ids of the offers it concerns; empty means every offer of the provider."""


@dataclass(frozen=True, slots=True)
class Price:
    """One price of an offer in USD per GPU-hour."""

    tier: PriceTier
    usd_per_gpu_hour: float
    as_of: date
    source: Source
    term: str | None = None
    term_days: int | None = None
    prepay: bool | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Offer:
    """A cluster product of one provider with one GPU model."""

    id: str
    local_id: str
    provider: str
    gpu: str
    name: str | None = None
    gpus_per_node: int | None = None
    fabric: FabricKind | None = None
    fabric_generation: str | None = None
    per_node_gbps: float | None = None
    gpudirect_rdma: bool | None = None
    min_nodes: int | None = None
    max_nodes: int | None = None
    max_nodes_by_quote: int | None = None
    regions: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    places: tuple[str, ...] = ()
    """Where the offer is: its regions (else its provider's), their countries and M49 areas
    (``domain.regions``); empty when no region is known."""
    note: str | None = None
    topology: Topology = field(default_factory=Topology)
    orchestration: Orchestration = field(default_factory=Orchestration)
    provisioning: Provisioning = field(default_factory=Provisioning)
    billing: Billing = field(default_factory=Billing)
    discounts: tuple[Discount, ...] = ()
    prices: tuple[Price, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    field_sources: Mapping[str, Sources] = field(default_factory=dict)
    measured_fabric: tuple[MeasuredFabric, ...] = ()
    """Published collective benchmarks on this offer, as sourced catalog facts."""

    @property
    def from_usd_per_gpu_hour(self) -> float | None:
        """Lowest listed price over all tiers, or None when nothing is priced."""
        return min((p.usd_per_gpu_hour for p in self.prices), default=None)

    def lowest_price(self, tier: PriceTier | None = None) -> float | None:
        """Lowest price in ``tier`` (any tier when None), or None when that tier is unpriced.

        >>> from datetime import date
        >>> src = Source("s", "https://example.com/", date(2026, 1, 1))
        >>> o = Offer("p-x", "x", "p", "H100-SXM-80GB", prices=(
        ...     Price(PriceTier.SPOT, 2.0, date(2026, 1, 1), src),
        ...     Price(PriceTier.ON_DEMAND, 6.0, date(2026, 1, 1), src)))
        >>> [o.lowest_price(t) for t in (None, PriceTier.ON_DEMAND, PriceTier.RESERVED)]
        [2.0, 6.0, None]
        """
        return min(
            (p.usd_per_gpu_hour for p in self.prices if tier is None or p.tier is tier),
            default=None,
        )

    @property
    def on_demand_offered(self) -> bool:
        """Whether its on-demand price can start a cluster: the recorded ``on_demand_clusters``
        decides; when unknown, a conflict about provisioning puts the price in doubt.

        A price that cannot is a list price only: never a headline or an on-demand filter match.
        """
        known = self.provisioning.on_demand_clusters
        if known is not None:
            return known
        return not any(ConflictTopic.PROVISIONING in c.about for c in self.conflicts)

    def headline_price(self) -> float | None:
        """The lowest price of the first uninterruptible tier priced (on-demand only where
        ``on_demand_offered``, else reserved, else capacity block); spot never leads."""
        for tier in HEADLINE_TIERS:
            if tier is PriceTier.ON_DEMAND and not self.on_demand_offered:
                continue
            if (price := self.lowest_price(tier)) is not None:
                return price
        return None

    @property
    def reach_nodes(self) -> int | None:
        """Largest cluster the offer can reach, self-serve or by quote."""
        sizes = [n for n in (self.max_nodes, self.max_nodes_by_quote) if n is not None]
        return max(sizes, default=None)


@dataclass(frozen=True, slots=True)
class Provider:
    """A GPU cloud and what we know about its multi-node clusters."""

    slug: str
    name: str
    url: str
    multi_node: MultiNode
    multi_node_evidence: str
    hq_country: str | None = None
    regions: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    orchestration: Orchestration = field(default_factory=Orchestration)
    provisioning: Provisioning = field(default_factory=Provisioning)
    billing: Billing = field(default_factory=Billing)
    storage: Storage = field(default_factory=Storage)
    discounts: tuple[Discount, ...] = ()
    ratings: tuple[Rating, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    sources: Sources = ()
    field_sources: Mapping[str, Sources] = field(default_factory=dict)
    offers: tuple[Offer, ...] = ()
    rating_editions: tuple[RatingEdition, ...] = ()
    """Every rating edition the catalog knows (the same for all providers), newest first."""

    def current_rating(self, rater: str) -> tuple[RatingEdition, Rating | None] | None:
        """The newest edition of ``rater`` and this provider's rating in it (None: not rated).

        None when the catalog knows no edition of ``rater`` at all.
        """
        edition = next((e for e in self.rating_editions if e.rater == rater), None)
        if edition is None:
            return None
        rating = next(
            (r for r in self.ratings if r.rater == rater and r.edition == edition.edition), None
        )
        return edition, rating


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """A canonical accelerator with its published figures."""

    name: str
    vendor: str
    memory_gib: float
    aliases: tuple[str, ...] = ()
    memory_gb: float | None = None
    bf16_dense_tflops: float | None = None
    fp8_dense_tflops: float | None = None
    hbm_tbps: float | None = None
    scale_up_gbs: float | None = None
    price_min_usd_per_gpu_hour: float | None = None
    price_max_usd_per_gpu_hour: float | None = None
    note: str | None = None
    sources: Sources = ()


@dataclass(frozen=True, slots=True)
class FabricSpec:
    """A generation of interconnect, e.g. InfiniBand NDR."""

    id: str
    kind: FabricKind
    name: str
    per_port_gbps: float | None = None
    rdma: bool | None = None
    latency_us: float | None = None
    note: str | None = None
    sources: Sources = ()


@dataclass(frozen=True, slots=True)
class CatalogData:
    """Everything loaded from data/: providers, GPUs and fabrics."""

    providers: tuple[Provider, ...]
    gpus: tuple[GpuSpec, ...]
    fabrics: tuple[FabricSpec, ...]
    regions: RegionIndex = field(default_factory=RegionIndex)

    @property
    def offers(self) -> tuple[Offer, ...]:
        """All offers of all providers."""
        return tuple(o for p in self.providers for o in p.offers)
