"""The one offer filter: parsed from CLI flags, query strings or Python; matched in memory."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Final, TypeVar

from clusterscout.domain.models import (
    FabricKind,
    MultiNode,
    Offer,
    OrchestrationKind,
    PriceTier,
    Provider,
    ProvisioningMode,
)

E = TypeVar("E", bound=StrEnum)

_TRUE: Final = frozenset({"true", "yes", "1", "on"})
_FALSE: Final = frozenset({"false", "no", "0", "off"})


class SortKey(StrEnum):
    """Orderings offered for offer lists."""

    PRICE = "price"
    GBPS = "gbps"
    PROVIDER = "provider"
    NODES = "nodes"


class FilterError(ValueError):
    """A filter value that cannot be understood; names the parameter and what is allowed."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class OfferFilter:
    """Filters over cluster offers. Empty tuples and None mean "any".

    Repeated values of one filter are alternatives (gpu=A or gpu=B); different filters all hold.
    ``price_tier`` keeps offers priced in that tier and makes that tier's lowest price the one
    ``max_price`` and the price sort use (by default, the lowest price of any tier).
    """

    multi_node: bool | None = None
    gpu: tuple[str, ...] = ()
    fabric: tuple[FabricKind, ...] = ()
    min_gbps: float | None = None
    rdma: bool | None = None
    orchestration: tuple[OrchestrationKind, ...] = ()
    provisioning: tuple[ProvisioningMode, ...] = ()
    max_price: float | None = None
    min_nodes: int | None = None
    region: str | None = None
    provider: tuple[str, ...] = ()
    price_tier: PriceTier | None = None

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


FILTER_NAMES: Final = tuple(f.name for f in fields(OfferFilter))


def parse_bool(name: str, raw: str) -> bool:
    """Parse a boolean flag value, naming the parameter on error."""
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise FilterError(name, f"{raw!r} is not a boolean (use true or false)")


NUMBER_LIMITS: Final = {"min_gbps": 1e6, "max_price": 1e6, "min_nodes": 100_000}
"""Largest value each numeric filter accepts: far above any offer, within every database's
integer range and every formatter's precision."""


def _number(name: str, raw: str, *, integer: bool = False) -> float:
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        kind = "a whole number" if integer else "a number"
        raise FilterError(name, f"{raw!r} is not {kind}") from None
    if not math.isfinite(value) or value < 0:
        raise FilterError(name, f"{raw!r} must be a finite number >= 0")
    limit = NUMBER_LIMITS[name]
    if value > limit:
        raise FilterError(name, f"{raw!r} must be at most {limit:,.0f}")
    return value


MAX_REGION_CHARS: Final = 200
"""Longest region substring accepted (SQLite refuses LIKE patterns over 50,000 bytes)."""


def _region(raw: str) -> str:
    if len(raw) > MAX_REGION_CHARS:
        raise FilterError("region", f"must be at most {MAX_REGION_CHARS} characters")
    return raw.lower()


def _enum_values(name: str, raws: Sequence[str], enum: type[E]) -> tuple[E, ...]:
    out: list[E] = []
    for raw in raws:
        key = raw.strip().lower().replace("-", "_")
        match = next((m for m in enum if m.value == key), None)
        if match is None:
            allowed = ", ".join(m.value for m in enum)
            raise FilterError(name, f"{raw!r} is not one of: {allowed}")
        if match not in out:
            out.append(match)
    return tuple(out)


def _single(name: str, raws: Sequence[str]) -> str | None:
    values = [r for r in raws if r.strip() != ""]
    if not values:
        return None
    if len(values) > 1:
        raise FilterError(name, "may be given only once")
    return values[0].strip()


GpuResolver = Callable[[str], str | None]


def parse_filter(
    params: Mapping[str, Sequence[str]],
    resolve_gpu: GpuResolver,
    known_providers: Callable[[str], bool] | None = None,
) -> OfferFilter:
    """Build an OfferFilter from repeated string values keyed by filter name.

    Args:
        params: e.g. ``{"fabric": ["infiniband"], "min_gbps": ["1600"]}``; dashes in names are
            accepted (``min-gbps``) so CLI flags and query strings share one parser.
        resolve_gpu: maps an alias to the canonical GPU name, or None when unknown.
        known_providers: optional check that a provider slug exists.

    Raises:
        FilterError: naming the parameter and the allowed values.
    """
    norm: dict[str, list[str]] = {}
    for key, values in params.items():
        norm.setdefault(key.replace("-", "_"), []).extend(values)
    unknown = sorted(set(norm) - set(FILTER_NAMES))
    if unknown:
        raise FilterError(unknown[0], f"unknown filter (known: {', '.join(FILTER_NAMES)})")

    def single(name: str) -> str | None:
        return _single(name, norm.get(name, []))

    def many(name: str) -> list[str]:
        return [v for raw in norm.get(name, []) for v in raw.split(",") if v.strip()]

    gpus: list[str] = []
    for raw in many("gpu"):
        canonical = resolve_gpu(raw.strip())
        if canonical is None:
            raise FilterError("gpu", f"unknown GPU {raw!r}")
        if canonical not in gpus:
            gpus.append(canonical)
    providers: list[str] = []
    for raw in many("provider"):
        slug = raw.strip().lower()
        if known_providers is not None and not known_providers(slug):
            raise FilterError("provider", f"unknown provider {raw!r}")
        if slug not in providers:
            providers.append(slug)

    multi_node = single("multi_node")
    rdma = single("rdma")
    min_gbps = single("min_gbps")
    max_price = single("max_price")
    min_nodes = single("min_nodes")
    region = single("region")
    tier = single("price_tier")
    return OfferFilter(
        multi_node=parse_bool("multi_node", multi_node) if multi_node is not None else None,
        gpu=tuple(gpus),
        fabric=_enum_values("fabric", many("fabric"), FabricKind),
        min_gbps=_number("min_gbps", min_gbps) if min_gbps is not None else None,
        rdma=parse_bool("rdma", rdma) if rdma is not None else None,
        orchestration=_enum_values("orchestration", many("orchestration"), OrchestrationKind),
        provisioning=_enum_values("provisioning", many("provisioning"), ProvisioningMode),
        max_price=_number("max_price", max_price) if max_price is not None else None,
        min_nodes=int(_number("min_nodes", min_nodes, integer=True))
        if min_nodes is not None
        else None,
        region=_region(region) if region else None,
        provider=tuple(providers),
        price_tier=_enum_values("price_tier", [tier], PriceTier)[0] if tier else None,
    )


def parse_sort(raw: str | None) -> SortKey:
    """Parse the sort key (default: price)."""
    if raw is None or raw.strip() == "":
        return SortKey.PRICE
    try:
        return SortKey(raw.strip().lower())
    except ValueError:
        allowed = ", ".join(k.value for k in SortKey)
        raise FilterError("sort", f"{raw!r} is not one of: {allowed}") from None


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
