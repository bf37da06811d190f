"""What the catalog knows: per multi-node offer fact, the share known, primary-sourced, stale.

Computed from the public records (the same JSON the API serves), so the figures describe what a
buyer sees, prices refreshed by feeds included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

Record = Mapping[str, Any]

_COMMITTED_TIERS = frozenset({"on_demand", "reserved"})


def _known(value: Any) -> bool:
    return value is not None and value != []


def _price_in(tiers: frozenset[str]) -> Callable[[Record], bool]:
    def check(offer: Record) -> bool:
        return any(p["tier"] in tiers for p in offer.get("prices") or ())

    return check


def _field(name: str) -> Callable[[Record], bool]:
    return lambda offer: _known(offer.get(name))


def _group_field(group: str, *names: str) -> Callable[[Record], bool]:
    return lambda offer: any(_known((offer.get(group) or {}).get(n)) for n in names)


# The facts a buyer needs per multi-node offer, in the order the report prints them. A fact
# is known when a source states it; "price" means one that cannot be interrupted.
OFFER_FACTS: dict[str, Callable[[Record], bool]] = {
    "gpus_per_node": _field("gpus_per_node"),
    "fabric": _field("fabric"),
    "per_node_gbps": _field("per_node_gbps"),
    "gpudirect_rdma": _field("gpudirect_rdma"),
    "cluster_size": lambda o: _known(o.get("max_nodes")) or _known(o.get("max_nodes_by_quote")),
    "on_demand_or_reserved_price": _price_in(_COMMITTED_TIERS),
    "any_price": lambda o: bool(o.get("prices")),
    "orchestration": _group_field("orchestration", "managed_slurm", "managed_kubernetes"),
    "access": _group_field("provisioning", "access"),
    "billing_granularity": _group_field("billing", "granularity"),
    "minimum_commitment": _group_field("billing", "minimum", "minimum_hours"),
    "regions": _field("regions"),
}


@dataclass(frozen=True, slots=True)
class Share:
    """``count`` of ``total`` items have the property."""

    count: int
    total: int

    @property
    def share(self) -> float | None:
        """count / total, or None when there is nothing to count."""
        return self.count / self.total if self.total else None

    def to_dict(self) -> dict[str, Any]:
        """JSON form: count, total and the share rounded to 4 decimals (null when total is 0)."""
        share = self.share
        return {
            "count": self.count,
            "total": self.total,
            "share": None if share is None else round(share, 4),
        }


@dataclass(frozen=True, slots=True)
class OfferCoverage:
    """Coverage over a set of multi-node offers."""

    offers: int
    facts: dict[str, Share]
    primary_sourced_facts: Share
    stale_prices: Share

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "offers": self.offers,
            "facts": {name: s.to_dict() for name, s in self.facts.items()},
            "primary_sourced_facts": self.primary_sourced_facts.to_dict(),
            "stale_prices": self.stale_prices.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class ProviderCoverage:
    """One provider's multi-node status and the coverage of its offers."""

    slug: str
    name: str
    multi_node: str
    coverage: OfferCoverage

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "slug": self.slug,
            "name": self.name,
            "multi_node": self.multi_node,
            **self.coverage.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class CoverageReport:
    """The whole report: providers by status, overall offer coverage, and per provider."""

    as_of: date
    stale_after_days: int
    providers_by_status: dict[str, int]
    overall: OfferCoverage
    by_provider: tuple[ProviderCoverage, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``clusterscout coverage --format json`` and ``GET /api/v1/coverage``."""
        return {
            "as_of": self.as_of.isoformat(),
            "stale_after_days": self.stale_after_days,
            "providers": {
                "total": sum(self.providers_by_status.values()),
                "multi_node": self.providers_by_status,
            },
            "multi_node_offers": self.overall.to_dict(),
            "by_provider": [p.to_dict() for p in self.by_provider],
        }


def _primary_facts(offers: Iterable[Record]) -> Share:
    """Facts (source entries keyed by field) with at least one primary source."""
    count = total = 0
    for offer in offers:
        for refs in (offer.get("sources") or {}).values():
            if not refs:
                continue
            total += 1
            count += any(ref.get("kind") == "primary" for ref in refs)
    return Share(count, total)


def _stale_prices(offers: Iterable[Record], today: date, stale_after_days: int) -> Share:
    ages = [
        (today - date.fromisoformat(str(p["as_of"]))).days
        for offer in offers
        for p in offer.get("prices") or ()
    ]
    return Share(sum(age > stale_after_days for age in ages), len(ages))


def offer_coverage(offers: Sequence[Record], today: date, stale_after_days: int) -> OfferCoverage:
    """Coverage of ``offers``: each fact's share, primary-sourced facts and stale prices."""
    facts = {
        name: Share(sum(1 for o in offers if known(o)), len(offers))
        for name, known in OFFER_FACTS.items()
    }
    return OfferCoverage(
        offers=len(offers),
        facts=facts,
        primary_sourced_facts=_primary_facts(offers),
        stale_prices=_stale_prices(offers, today, stale_after_days),
    )


def coverage_report(
    providers: Sequence[Record],
    offers: Sequence[Record],
    today: date,
    stale_after_days: int,
) -> CoverageReport:
    """Build the report from provider and offer records.

    Only offers of multi-node providers count (a provider file lists offers only when its
    status is "yes", so in practice that is every offer).

    >>> p = [{"slug": "a", "name": "A", "multi_node": "yes"}, {"slug": "b", "name": "B",
    ...       "multi_node": "unknown"}]
    >>> o = [{"provider": "a", "fabric": "infiniband", "prices": [], "sources": {
    ...       "fabric": [{"url": "https://a.example/", "checked_on": "2026-01-01",
    ...                   "kind": "primary"}]}}]
    >>> r = coverage_report(p, o, date(2026, 12, 1), 30)
    >>> r.providers_by_status, r.overall.facts["fabric"].share, r.overall.facts["gpus_per_node"]
    ({'yes': 1, 'no': 0, 'unknown': 1}, 1.0, Share(count=0, total=1))
    """
    status = Counter(str(p["multi_node"]) for p in providers)
    multi_node = {str(p["slug"]) for p in providers if p["multi_node"] == "yes"}
    mn_offers = [o for o in offers if o["provider"] in multi_node]
    by_slug: dict[str, list[Record]] = {}
    for offer in mn_offers:
        by_slug.setdefault(str(offer["provider"]), []).append(offer)
    per_provider = tuple(
        ProviderCoverage(
            slug=str(p["slug"]),
            name=str(p["name"]),
            multi_node=str(p["multi_node"]),
            coverage=offer_coverage(by_slug.get(str(p["slug"]), []), today, stale_after_days),
        )
        for p in sorted(providers, key=lambda p: str(p["slug"]))
    )
    return CoverageReport(
        as_of=today,
        stale_after_days=stale_after_days,
        providers_by_status={k: status.get(k, 0) for k in ("yes", "no", "unknown")},
        overall=offer_coverage(mn_offers, today, stale_after_days),
        by_provider=per_provider,
    )
