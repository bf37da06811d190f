"""Commitment quotes: "N GPUs for M months", totalled per provider from its published terms."""

from __future__ import annotations

import calendar
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Any, Final

from clusterscout.catalog.records import on_demand_offered
from clusterscout.domain.errors import InputError
from clusterscout.model.cost import billed_hours

HOURS_PER_MONTH: Final = 730
"""The catalog's month (docs/data-format.md): 365 days x 24 h / 12."""
MAX_GPUS: Final = 100_000
MAX_MONTHS: Final = 60


class Basis(StrEnum):
    """What a total rests on, so a list price times the run is never read as a reservation."""

    LIST_PRICE = "list_price"  # the on-demand list price times the run: no commitment priced
    RESERVED_TERM = "reserved_term"  # a published reserved price (its term paid whole)
    CAPACITY_BLOCK = "capacity_block"  # a published capacity-block price
    COMMITMENT_DISCOUNT = "commitment_discount"  # "X% off for a term" on the list price


BASIS_OF_TIER: Final = {
    "on_demand": Basis.LIST_PRICE,
    "reserved": Basis.RESERVED_TERM,
    "capacity_block": Basis.CAPACITY_BLOCK,
    "discount": Basis.COMMITMENT_DISCOUNT,
}


class WhyNot(StrEnum):
    """Why a provider gets no total."""

    NO_OFFER = "no_offer"  # no offer of the GPU asked for
    NO_PRICE = "no_price"  # offers, but no price that can be bought for a run
    TOO_SMALL = "too_small"  # every priced offer is smaller than the GPUs asked for


@dataclass(frozen=True, slots=True)
class Option:
    """One way to buy the run: a tier (and term) of one offer, and what it totals."""

    offer_id: str
    gpu: str
    tier: str
    term_days: int | None
    low_usd: float
    high_usd: float
    """Equal to ``low_usd`` unless only an "up to X% off" discount is published."""
    billed_hours: float
    prepay: bool | None
    capacity_known: bool
    """False when the offer's largest cluster is unknown (the total assumes it is large enough)."""
    usd_per_gpu_hour: float = 0.0
    """The price per GPU-hour the low total uses."""
    as_of: str | None = None
    """ISO date of the price the total rests on (a discount: its list price's)."""
    source: str | None = None
    """URL of that price's source."""

    @property
    def basis(self) -> Basis:
        """What kind of price the total rests on."""
        return BASIS_OF_TIER[self.tier]


@dataclass(frozen=True, slots=True)
class ProviderQuote:
    """The cheapest option of one provider, or why there is none."""

    slug: str
    name: str
    best: Option | None
    why_not: WhyNot | None
    largest_gpus: int | None
    """The largest cluster, in GPUs, when it is too small."""
    options: tuple[Option, ...] = ()
    """Every way to buy the run, cheapest first (``best`` is the first)."""


def parse_request(gpus: str | None, months: str | None) -> tuple[int, float]:
    """GPU count and months of a quote, from text.

    Raises:
        InputError: naming ``gpus`` or ``months``.
    """
    try:
        n = int(gpus or "64")
    except ValueError:
        raise InputError("gpus", f"{gpus!r} is not a whole number") from None
    if not 1 <= n <= MAX_GPUS:
        raise InputError("gpus", f"must be between 1 and {MAX_GPUS:,}")
    try:
        m = float(months or "6")
    except ValueError:
        raise InputError("months", f"{months!r} is not a number") from None
    if not (math.isfinite(m) and 0 < m <= MAX_MONTHS):
        raise InputError("months", f"must be more than 0 and at most {MAX_MONTHS}")
    return n, m


def _discounts(offer: Mapping[str, Any], provider: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(offer.get("discounts") or provider.get("discounts") or ())


def _options(
    offer: Mapping[str, Any], provider: Mapping[str, Any], gpus: int, hours: float
) -> list[Option]:
    minimum = (offer.get("billing") or {}).get("minimum_hours")
    known = offer.get("max_nodes") is not None or offer.get("max_nodes_by_quote") is not None
    out: list[Option] = []

    def add(
        tier: str,
        low: float,
        high: float,
        term_days: int | None,
        prepay: bool | None,
        price: Mapping[str, Any],
    ) -> None:
        billed = billed_hours(hours, minimum, 24 * term_days if term_days else None)
        out.append(
            Option(
                offer["id"],
                offer["gpu"],
                tier,
                term_days,
                low * gpus * billed,
                high * gpus * billed,
                billed,
                prepay,
                known,
                low,
                str(price["as_of"]) if price.get("as_of") else None,
                (price.get("source") or {}).get("url"),
            )
        )

    trusted = on_demand_offered(offer)
    on_demand = [p for p in offer.get("prices") or () if p["tier"] == "on_demand"]
    for p in offer.get("prices") or ():
        price = float(p["usd_per_gpu_hour"])
        if p["tier"] in {"reserved", "capacity_block"} or (p["tier"] == "on_demand" and trusted):
            add(p["tier"], price, price, p.get("term_days"), p.get("prepay"), p)
    if trusted and on_demand:
        base_price = min(on_demand, key=lambda p: float(p["usd_per_gpu_hour"]))
        base = float(base_price["usd_per_gpu_hour"])
        for d in _discounts(offer, provider):
            if d.get("off", "on_demand") != "on_demand":
                continue
            low = base * (1 - float(d["max_percent"]) / 100)
            high = base * (1 - float(d.get("min_percent") or 0) / 100)
            add("discount", low, high, int(d["term_days"]), None, base_price)
    return out


def run_hours(start: date, months: float) -> float:
    """Hours from ``start`` to the same day ``months`` calendar months later (a fraction of a
    month counts 730 hours / month).

    >>> run_hours(date(2026, 12, 1), 6) / 24, run_hours(date(2026, 1, 31), 1) / 24
    (182.0, 28.0)
    """
    whole = int(months)
    index = start.month - 1 + whole
    year, month = start.year + index // 12, index % 12 + 1
    day = min(start.day, calendar.monthrange(year, month)[1])
    days = (date(year, month, day) - start).days
    return days * 24 + (months - whole) * HOURS_PER_MONTH


def quote(
    providers: Sequence[Mapping[str, Any]], gpus: int, hours: float, gpu: str | None = None
) -> list[ProviderQuote]:
    """Per provider, the cheapest published way to rent ``gpus`` GPUs for ``hours`` hours.

    Each total is price x GPUs x billed hours: a run shorter than a term or a billing minimum
    pays the whole term or minimum; an "up to X% off" discount gives a range from X% off to its
    published minimum (0% when none). Spot is left out (it can be interrupted), and so is an
    on-demand price that sources put in doubt (``catalog.records.on_demand_offered``).
    """
    out = []
    for p in providers:
        offers = [o for o in p.get("offers") or () if gpu is None or o["gpu"] == gpu]
        options: list[Option] = []
        largest: list[int] = []
        for o in offers:
            found = _options(o, p, gpus, hours)
            per_node, reach = (
                o.get("gpus_per_node"),
                o.get("max_nodes_by_quote") or o.get("max_nodes"),
            )
            if found and per_node and reach and reach * per_node < gpus:
                largest.append(reach * per_node)
                continue
            options += found
        options.sort(key=lambda x: (x.low_usd, x.high_usd, x.offer_id, x.tier, x.term_days or 0))
        best = options[0] if options else None
        why = None
        if best is None:
            why = (
                WhyNot.NO_OFFER if not offers else WhyNot.TOO_SMALL if largest else WhyNot.NO_PRICE
            )
        out.append(
            ProviderQuote(
                p["slug"], p["name"], best, why, max(largest, default=None), tuple(options)
            )
        )
    return out
