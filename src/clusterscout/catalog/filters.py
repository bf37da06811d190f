"""The one offer filter: typed values (parsed by ``app.inputs`` from the fields table); matching."""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Final

from clusterscout.domain.errors import InputError
from clusterscout.domain.models import (
    BillingGranularity,
    FabricKind,
    MultiNode,
    Offer,
    OrchestrationKind,
    PriceTier,
    Provider,
    ProvisioningMode,
    RatingTier,
)
from clusterscout.domain.regions import RegionScope


class Unknowable(StrEnum):
    """Filters on facts the catalog may not know; ``include_unknown`` lets their unknowns in."""

    FABRIC = "fabric"
    RDMA = "rdma"
    MIN_GBPS = "min_gbps"
    ORCHESTRATION = "orchestration"
    PROVISIONING = "provisioning"
    PRICE_TIER = "price_tier"
    MAX_PRICE = "max_price"
    MIN_NODES = "min_nodes"
    REGION = "region"
    NCCL = "nccl"
    BILLING = "billing"
    SHARED_STORAGE = "shared_storage"
    TOPOLOGY = "topology"


class TopologyClaim(StrEnum):
    """What the ``topology`` filter asks an offer's network to be (the checklist's topology)."""

    NON_BLOCKING = "non_blocking"
    """The provider says the fabric is non-blocking (full bisection bandwidth)."""
    RAIL_OPTIMIZED = "rail_optimized"
    """The provider says the fabric is rail-optimised."""
    LOCALITY = "locality"
    """The provider states where the nodes sit (same rack, pod or data hall)."""


def topology_claims(offer: Offer) -> dict[TopologyClaim, bool | None]:
    """Each claim's fact for ``offer``; a locality is known only when stated (None if not)."""
    topo = offer.topology
    return {
        TopologyClaim.NON_BLOCKING: topo.non_blocking,
        TopologyClaim.RAIL_OPTIMIZED: topo.rail_optimized,
        TopologyClaim.LOCALITY: True if topo.locality else None,
    }


CLUSTERMAX: Final = "clustermax"
"""The rater whose newest edition the ``clustermax`` filter reads (as named in ratings.toml)."""


class ClusterMaxChoice(StrEnum):
    """Values of the ``clustermax`` filter: a tier of the newest edition, or not rated in it.

    ``not_rated`` (absent from the edition) differs from ``unavailable`` (listed, but could
    not be tested) and from ``participation_ribbon`` (tested, below bronze).
    """

    PLATINUM = RatingTier.PLATINUM.value
    GOLD = RatingTier.GOLD.value
    SILVER = RatingTier.SILVER.value
    BRONZE = RatingTier.BRONZE.value
    PARTICIPATION_RIBBON = RatingTier.PARTICIPATION_RIBBON.value
    UNDERPERFORM = RatingTier.UNDERPERFORM.value
    UNAVAILABLE = RatingTier.UNAVAILABLE.value
    NOT_RECOMMENDED = RatingTier.NOT_RECOMMENDED.value
    NOT_RATED = "not_rated"


def clustermax_choice(provider: Provider) -> ClusterMaxChoice:
    """The provider's value for the ``clustermax`` filter (its tier in the newest edition)."""
    current = provider.current_rating(CLUSTERMAX)
    if current is None or current[1] is None:
        return ClusterMaxChoice.NOT_RATED
    return ClusterMaxChoice(current[1].tier.value)


class SortKey(StrEnum):
    """Orderings offered for offer lists."""

    PRICE = "price"
    GBPS = "gbps"
    PROVIDER = "provider"
    NODES = "nodes"


@dataclass(frozen=True, slots=True)
class OfferFilter:
    """Filters over cluster offers. Empty tuples and None mean "any".

    One attribute per offer filter of ``app.fields``, in its order (a test holds them equal).

    Repeated values of one filter are alternatives (gpu=A or gpu=B); different filters all hold.
    ``region`` is resolved once (``RegionIndex.resolve``) to the places it covers; an offer
    matches when one of its places is among them.
    ``price_tier`` keeps offers priced in that tier and makes that tier's lowest price the one
    ``max_price`` and the price sort use (by default, the headline price: see ``offer_price``).
    """

    multi_node: bool | None = None
    gpu: tuple[str, ...] = ()
    fabric: tuple[FabricKind, ...] = ()
    rdma: bool | None = None
    min_gbps: float | None = None
    orchestration: tuple[OrchestrationKind, ...] = ()
    provisioning: tuple[ProvisioningMode, ...] = ()
    price_tier: PriceTier | None = None
    max_price: float | None = None
    min_nodes: int | None = None
    region: RegionScope | None = None
    clustermax: tuple[ClusterMaxChoice, ...] = ()
    nccl: bool | None = None
    billing: tuple[BillingGranularity, ...] = ()
    shared_storage: bool | None = None
    topology: tuple[TopologyClaim, ...] = ()
    provider: tuple[str, ...] = ()
    include_unknown: tuple[Unknowable, ...] = ()

    def active(self, name: str) -> bool:
        """True when the filter ``name`` is set."""
        return getattr(self, str(name)) not in (None, ())

    def lets_unknown(self, name: Unknowable) -> bool:
        """True when offers whose ``name`` fact is unknown pass that (active) filter."""
        return name in self.include_unknown

    def is_empty(self) -> bool:
        """True when no filter is set."""
        return self == OfferFilter()

    def to_params(self) -> list[tuple[str, str]]:
        """Canonical query parameters (sorted names, sorted values) for shareable URLs."""
        out: list[tuple[str, str]] = []
        for f in sorted(fields(self), key=lambda f: f.name):
            value = getattr(self, f.name)
            if f.name == "include_unknown":
                # Only filters that are set can let unknowns in; the rest would be noise.
                value = tuple(u for u in value if self.active(u))
            if value is None or value == ():
                continue
            if isinstance(value, tuple):
                out.extend((f.name, str(v)) for v in sorted(str(v) for v in value))
            elif isinstance(value, bool):
                out.append((f.name, "true" if value else "false"))
            elif isinstance(value, float):
                out.append((f.name, f"{value:g}"))
            else:
                out.append((f.name, str(value)))
        return out


def parse_sort(raw: str | None) -> SortKey:
    """Parse the sort key (default: price)."""
    if raw is None or raw.strip() == "":
        return SortKey.PRICE
    try:
        return SortKey(raw.strip().lower())
    except ValueError:
        allowed = ", ".join(k.value for k in SortKey)
        raise InputError("sort", f"{raw!r} is not one of: {allowed}") from None


def offer_price(offer: Offer, tier: PriceTier | None) -> float | None:
    """The price filters and sorts use: ``tier``'s lowest, else the headline price.

    The headline is the lowest price of the first uninterruptible tier priced (on-demand, else
    reserved, else capacity block), so spot never leads a listing. An on-demand price of clusters
    that cannot be rented on demand (``Offer.on_demand_offered``) is neither.
    """
    if tier is PriceTier.ON_DEMAND and not offer.on_demand_offered:
        return None  # a list price of clusters that cannot be rented on demand
    if tier is not None:
        return offer.lowest_price(tier)
    return offer.headline_price()


def searchable_regions(offer: Offer, provider: Provider) -> str:
    """Lower-case text the region filter searches: the offer's regions, else the provider's."""
    return " | ".join(offer.regions or provider.regions).lower()


def matches(offer: Offer, provider: Provider, f: OfferFilter) -> bool:
    """Pure predicate: does ``offer`` (of ``provider``) satisfy every filter in ``f``?

    Unknown facts never match a filter on that fact (a filter asks for evidence) unless the
    filter is named in ``include_unknown``; then an unknown fact passes it too.
    """
    price = offer_price(offer, f.price_tier)
    orch, prov = offer.orchestration, offer.provisioning
    orch_facts = {
        OrchestrationKind.SLURM: orch.managed_slurm,
        OrchestrationKind.KUBERNETES: orch.managed_kubernetes,
    }
    prov_facts = {
        ProvisioningMode.ON_DEMAND: prov.on_demand_clusters,
        ProvisioningMode.RESERVED: prov.reserved,
        ProvisioningMode.WAITLIST: prov.waitlist,
    }
    claims = topology_claims(offer)
    u = f.lets_unknown
    checks = (
        f.multi_node is None or (provider.multi_node is MultiNode.YES) == f.multi_node,
        not f.gpu or offer.gpu in f.gpu,
        not f.fabric or offer.fabric in f.fabric or (offer.fabric is None and u(Unknowable.FABRIC)),
        f.min_gbps is None
        or (offer.per_node_gbps is None and u(Unknowable.MIN_GBPS))
        or (offer.per_node_gbps is not None and offer.per_node_gbps >= f.min_gbps),
        f.rdma is None
        or offer.gpudirect_rdma is f.rdma
        or (offer.gpudirect_rdma is None and u(Unknowable.RDMA)),
        all(
            orch_facts[k] is True or (orch_facts[k] is None and u(Unknowable.ORCHESTRATION))
            for k in f.orchestration
        ),
        not f.provisioning
        or any(
            prov_facts[m] is True or (prov_facts[m] is None and u(Unknowable.PROVISIONING))
            for m in f.provisioning
        ),
        f.price_tier is None or price is not None or u(Unknowable.PRICE_TIER),
        f.max_price is None
        or (price is None and u(Unknowable.MAX_PRICE))
        or (price is not None and price <= f.max_price),
        f.min_nodes is None
        or (offer.reach_nodes is None and u(Unknowable.MIN_NODES))
        or (offer.reach_nodes is not None and offer.reach_nodes >= f.min_nodes),
        f.region is None
        or not f.region.places.isdisjoint(offer.places)
        or (not (offer.regions or provider.regions) and u(Unknowable.REGION)),
        not f.clustermax or clustermax_choice(provider) in f.clustermax,
        f.nccl is None
        or orch.nccl_preconfigured is f.nccl
        or (orch.nccl_preconfigured is None and u(Unknowable.NCCL)),
        not f.billing
        or offer.billing.granularity in f.billing
        or (offer.billing.granularity is None and u(Unknowable.BILLING)),
        f.shared_storage is None
        or provider.storage.shared_filesystem is f.shared_storage
        or (provider.storage.shared_filesystem is None and u(Unknowable.SHARED_STORAGE)),
        all(
            claims[k] is True or (claims[k] is None and u(Unknowable.TOPOLOGY)) for k in f.topology
        ),
        not f.provider or offer.provider in f.provider,
    )
    return all(checks)
