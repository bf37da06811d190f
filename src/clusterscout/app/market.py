"""Market reference: what others charge for a GPU model and tier, for offers without a price."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any, Final

from clusterscout.catalog.records import on_demand_offered, record_price

MIN_PRICES: Final = 2
"""Published prices a reference needs: one price is a single provider's, not a market."""

REFERENCE_TIERS: Final = ("on_demand", "reserved", "capacity_block")
"""Tiers a reference is drawn from, in the order a buyer of a run would look at them (never
spot: an interruptible price says nothing about what a cluster costs)."""

LABEL: Final = "market reference, not the provider's price"
"""How every surface names the figure, so it is never read as a quote."""


def on_demand_trusted(record: Mapping[str, Any]) -> bool:
    """False when the offer's on-demand price cannot be taken as on-demand
    (``catalog.records.on_demand_offered``: Crusoe's list prices against its reservation-only
    FAQ, for one)."""
    return on_demand_offered(record)  # the one rule, shared with listings and the API


def offer_price(record: Mapping[str, Any], tier: str) -> float | None:
    """The offer's lowest published price in ``tier`` that a run could be bought at, or None.

    An on-demand price the offer's own sources put in doubt (``on_demand_trusted``) is not one.
    """
    if tier == "on_demand" and not on_demand_trusted(record):
        return None
    return record_price(record, tier)


@dataclass(frozen=True, slots=True)
class MarketReference:
    """Median and range of published prices of one GPU model in one tier, across offers.

    Each offer counts once, with its lowest price in the tier; ``prices`` is how many offers
    (and so prices) the figures rest on, ``providers`` how many providers sell them.
    """

    gpu: str
    tier: str
    median_usd_per_gpu_hour: float
    low_usd_per_gpu_hour: float
    high_usd_per_gpu_hour: float
    prices: int
    providers: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape shared by plans and quotes, with its label."""
        return {
            "gpu": self.gpu,
            "tier": self.tier,
            "median_usd_per_gpu_hour": round(self.median_usd_per_gpu_hour, 4),
            "low_usd_per_gpu_hour": round(self.low_usd_per_gpu_hour, 4),
            "high_usd_per_gpu_hour": round(self.high_usd_per_gpu_hour, 4),
            "prices": self.prices,
            "providers": self.providers,
            "label": LABEL,
        }


def market_price(
    records: Iterable[Mapping[str, Any]], gpu: str, tier: str
) -> MarketReference | None:
    """The reference for ``gpu`` in ``tier`` over ``records``; None under ``MIN_PRICES`` prices.

    >>> rs = [{"id": f"p{i}/o", "provider": f"p{i}", "gpu": "H100 SXM", "prices": [
    ...     {"tier": "on_demand", "usd_per_gpu_hour": v}]} for i, v in enumerate((2.0, 3.0, 5.0))]
    >>> ref = market_price(rs, "H100 SXM", "on_demand")
    >>> ref.median_usd_per_gpu_hour, ref.low_usd_per_gpu_hour, ref.high_usd_per_gpu_hour
    (3.0, 2.0, 5.0)
    """
    found: list[tuple[str, float]] = []
    for r in records:
        if r.get("gpu") != gpu:
            continue
        price = offer_price(r, tier)
        if price is not None:
            found.append((str(r.get("provider")), price))
    if len(found) < MIN_PRICES:
        return None
    values = [p for _, p in found]
    return MarketReference(
        gpu=gpu,
        tier=tier,
        median_usd_per_gpu_hour=float(median(values)),
        low_usd_per_gpu_hour=min(values),
        high_usd_per_gpu_hour=max(values),
        prices=len(values),
        providers=len({slug for slug, _ in found}),
    )


def market_reference(
    records: Sequence[Mapping[str, Any]], gpu: str, tiers: Sequence[str] = REFERENCE_TIERS
) -> MarketReference | None:
    """The reference of the first tier in ``tiers`` with enough prices for ``gpu``, or None."""
    for tier in tiers:
        ref = market_price(records, gpu, tier)
        if ref is not None:
            return ref
    return None


def market_references(
    records: Sequence[Mapping[str, Any]], tiers: Sequence[str] = REFERENCE_TIERS
) -> dict[str, MarketReference]:
    """GPU model -> its reference (``market_reference``), for every GPU that has one."""
    out: dict[str, MarketReference] = {}
    for gpu in sorted({str(r["gpu"]) for r in records if r.get("gpu")}):
        ref = market_reference(records, gpu, tiers)
        if ref is not None:
            out[gpu] = ref
    return out
