"""The one offer filter: typed values (parsed by ``app.inputs`` from the fields table); matching."""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum

from clusterscout.domain.errors import InputError
from clusterscout.domain.models import (
    FabricKind,
    MultiNode,
    Offer,
    OrchestrationKind,
    PriceTier,
    Provider,
    ProvisioningMode,
)


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
    ``price_tier`` keeps offers priced in that tier and makes that tier's lowest price the one
    ``max_price`` and the price sort use (by default, the lowest price of any tier).
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
    region: str | None = None
    provider: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        """True when no filter is set."""
        return self == OfferFilter()

    def to_params(self) -> list[tuple[str, str]]:
        """Canonical query parameters (sorted names, sorted values) for shareable URLs."""
        out: list[tuple[str, str]] = []
        for f in sorted(fields(self), key=lambda f: f.name):
            value = getattr(self, f.name)
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


def offer_provides(offer: Offer, mode: ProvisioningMode) -> bool:
    """Whether the offer can be had in this provisioning mode, by its sourced facts."""
    prov = offer.provisioning
    if mode is ProvisioningMode.ON_DEMAND:
        return prov.on_demand_clusters is True
    if mode is ProvisioningMode.RESERVED:
        return prov.reserved is True
    return prov.waitlist is True


def offer_orchestrated(offer: Offer, kind: OrchestrationKind) -> bool:
    """Whether the offer comes with this managed scheduler, by its sourced facts."""
    orch = offer.orchestration
    if kind is OrchestrationKind.SLURM:
        return orch.managed_slurm is True
    return orch.managed_kubernetes is True


def searchable_regions(offer: Offer, provider: Provider) -> str:
    """Lower-case text the region filter searches: the offer's regions, else the provider's."""
    return " | ".join(offer.regions or provider.regions).lower()


def matches(offer: Offer, provider: Provider, f: OfferFilter) -> bool:
    """Pure predicate: does ``offer`` (of ``provider``) satisfy every filter in ``f``?

    Unknown facts never match a filter on that fact: a filter asks for evidence.
    """
    price = offer.lowest_price(f.price_tier)
    checks = (
        f.multi_node is None or (provider.multi_node is MultiNode.YES) == f.multi_node,
        not f.gpu or offer.gpu in f.gpu,
        not f.fabric or offer.fabric in f.fabric,
        f.min_gbps is None
        or (offer.per_node_gbps is not None and offer.per_node_gbps >= f.min_gbps),
        f.rdma is None or offer.gpudirect_rdma is f.rdma,
        all(offer_orchestrated(offer, k) for k in f.orchestration),
        not f.provisioning or any(offer_provides(offer, m) for m in f.provisioning),
        f.price_tier is None or price is not None,
        f.max_price is None or (price is not None and price <= f.max_price),
        f.min_nodes is None or (offer.reach_nodes is not None and offer.reach_nodes >= f.min_nodes),
        f.region is None or f.region in searchable_regions(offer, provider),
        not f.provider or offer.provider in f.provider,
    )
    return all(checks)
