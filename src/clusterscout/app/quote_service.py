"""The commitment quote as a service: read the request, price every provider, publish JSON.

One path for ``GET /api/v1/quote``, ``clusterscout quote`` and (its parsing) the compare page:
``app.quotes`` does the arithmetic; this module reads the inputs, loads every provider with its
offers from the store and the dated exchange rates from data/, and shapes the answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.app import quotes
from clusterscout.app.market import MarketReference, market_reference
from clusterscout.app.quotes import Option, ProviderQuote, WhyNot
from clusterscout.catalog.filters import OfferFilter
from clusterscout.catalog.rates import ExchangeRates, load_rates
from clusterscout.catalog.records import on_demand_offered
from clusterscout.domain.errors import InputError
from clusterscout.model.cost import billed_hours
from clusterscout.store import queries

CURRENCIES: Final = ("USD", "EUR", "BRL")
DATE_PATTERN: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# Bounds keep the end of a 60-month run a valid date and the start a plausible one.
FIRST_START: Final = date(2000, 1, 1)
LAST_START: Final = date(2100, 12, 31)
PARAMS: Final = ("gpus", "months", "start", "gpu", "currency")
REASONS: Final = {
    WhyNot.NO_OFFER: "no offer of this GPU",
    WhyNot.NO_PRICE: "no published price that a run can pay (spot and doubted on-demand "
    "prices are left out)",
    WhyNot.TOO_SMALL: "its largest cluster is smaller than the GPUs asked for",
}


@dataclass(frozen=True, slots=True)
class QuoteRequest:
    """N GPUs for M months from a day, optionally of one GPU model (canonical name)."""

    gpus: int
    months: float
    start: date
    gpu: str | None = None
    currency: str = "USD"

    @property
    def hours(self) -> float:
        """Hours from ``start`` to the same day ``months`` later."""
        return quotes.run_hours(self.start, self.months)

    @property
    def end(self) -> date:
        """The day the run ends."""
        return self.start + timedelta(hours=self.hours)


def parse_start(raw: str | None, today: date) -> date:
    """The quote's first day (YYYY-MM-DD, from 2000 to 2100), ``today`` when not given.

    Raises:
        InputError: naming ``start``.
    """
    if raw is None or not raw.strip():
        return today
    text = raw.strip()
    try:
        if not DATE_PATTERN.fullmatch(text):
            raise ValueError(text)
        day = date.fromisoformat(text)
    except ValueError:
        raise InputError("start", f"{raw[:40]!r} is not a date (YYYY-MM-DD)") from None
    if not FIRST_START <= day <= LAST_START:
        raise InputError("start", f"must be between {FIRST_START} and {LAST_START}")
    return day


def parse_currency(raw: str | None) -> str:
    """USD, EUR or BRL (any case); USD when not given.

    Raises:
        InputError: naming ``currency``.
    """
    value = (raw or "USD").strip().upper()
    if value not in CURRENCIES:
        raise InputError("currency", f"{raw!r} is not one of: {', '.join(CURRENCIES)}")
    return value


def parse_request(conn: Connection, params: Mapping[str, str | None], today: date) -> QuoteRequest:
    """A quote request from text (query string or CLI options), the GPU checked in the store.

    Raises:
        InputError: naming the parameter at fault.
    """
    gpus, months = quotes.parse_request(params.get("gpus"), params.get("months"))
    start = parse_start(params.get("start"), today)
    raw_gpu = (params.get("gpu") or "").strip()
    gpu = None
    if raw_gpu:
        gpu = queries.gpu_index(conn).canonical(raw_gpu)
        if gpu is None:
            raise InputError("gpu", f"unknown GPU {raw_gpu!r}")
    return QuoteRequest(gpus, months, start, gpu, parse_currency(params.get("currency")))


def gpu_choices(conn: Connection) -> list[str]:
    """Canonical names of the GPU models some offer sells, for a quote form's list."""
    return queries.gpu_names(conn)


def provider_records(conn: Connection) -> list[dict[str, Any]]:
    """Every provider record with its ``offers``, in two queries."""
    by_slug = {p["slug"]: {**p, "offers": []} for p in queries.list_providers(conn).records}
    for o in queries.list_offers(conn, OfferFilter()).records:
        if o["provider"] in by_slug:
            by_slug[o["provider"]]["offers"].append(o)
    return list(by_slug.values())


def rates_of(data_dir: Path) -> ExchangeRates | None:
    """The dated euro reference rates of the catalog, or None when it has none."""
    return load_rates(data_dir)


def _amounts(low: float, high: float, rates: ExchangeRates | None) -> dict[str, Any]:
    out: dict[str, Any] = {"USD": {"low": round(low, 2), "high": round(high, 2)}}
    if rates is not None:
        for c in CURRENCIES[1:]:
            out[c] = {
                "low": round(rates.convert(low, c), 2),
                "high": round(rates.convert(high, c), 2),
            }
    return out


def _age(as_of: str | None, today: date, stale_after_days: int) -> tuple[int | None, bool | None]:
    if as_of is None:
        return None, None
    age = (today - date.fromisoformat(as_of)).days
    return age, age > stale_after_days


def _option(
    o: Option, hours: float, rates: ExchangeRates | None, today: date, stale_after_days: int
) -> dict[str, Any]:
    age, stale = _age(o.as_of, today, stale_after_days)
    return {
        "offer_id": o.offer_id,
        "gpu": o.gpu,
        "tier": o.tier,
        "basis": o.basis.value,
        "term_days": o.term_days,
        "prepay": o.prepay,
        "usd_per_gpu_hour": round(o.usd_per_gpu_hour, 4),
        "as_of": o.as_of,
        "age_days": age,
        "stale": stale,
        "source": o.source,
        "billed_hours": round(o.billed_hours, 2),
        "billed_beyond_run": o.billed_hours > hours + 1e-6,
        "is_range": round(o.low_usd, 2) != round(o.high_usd, 2),
        "capacity_known": o.capacity_known,
        "total": _amounts(o.low_usd, o.high_usd, rates),
    }


@dataclass(frozen=True, slots=True)
class Reference:
    """What a provider without a published price would cost at the market's prices."""

    offer_id: str
    market: MarketReference
    billed_hours: float
    gpus: int

    def total(self, usd_per_gpu_hour: float) -> float:
        """The run's total at one price per GPU-hour."""
        return usd_per_gpu_hour * self.gpus * self.billed_hours

    def to_dict(self, rates: ExchangeRates | None) -> dict[str, Any]:
        """The reference figures, per GPU-hour and for the run, with their label."""
        m = self.market
        return {
            **m.to_dict(),
            "offer_id": self.offer_id,
            "basis": "market_reference",
            "billed_hours": round(self.billed_hours, 2),
            "median_total": _amounts(
                self.total(m.median_usd_per_gpu_hour),
                self.total(m.median_usd_per_gpu_hour),
                rates,
            ),
            "total": _amounts(
                self.total(m.low_usd_per_gpu_hour), self.total(m.high_usd_per_gpu_hour), rates
            ),
        }


def _references(
    records: Sequence[Mapping[str, Any]],
    provider: Mapping[str, Any],
    request: QuoteRequest,
    markets: dict[str, MarketReference | None],
) -> Reference | None:
    """The cheapest market reference among a provider's unpriced offers that could hold the run.

    The billing minimum of the offer applies, as it would to a published price.
    """
    found = []
    for o in provider.get("offers") or ():
        if request.gpu is not None and o["gpu"] != request.gpu:
            continue
        per_node, reach = o.get("gpus_per_node"), o.get("max_nodes_by_quote") or o.get("max_nodes")
        if per_node and reach and per_node * reach < request.gpus:
            continue
        gpu = str(o["gpu"])
        if gpu not in markets:
            markets[gpu] = market_reference(records, gpu)
        market = markets[gpu]
        if market is None:
            continue
        minimum = (o.get("billing") or {}).get("minimum_hours")
        found.append(
            Reference(o["id"], market, billed_hours(request.hours, minimum, None), request.gpus)
        )
    return min(
        found, key=lambda r: (r.total(r.market.median_usd_per_gpu_hour), r.offer_id), default=None
    )


def _list_only(provider: Mapping[str, Any], gpu: str | None) -> list[dict[str, Any]]:
    """On-demand list prices of offers whose clusters are not rented on demand: shown for what
    they are (a published figure a run cannot be bought at), never totalled."""
    return [
        {
            "offer_id": o["id"],
            "gpu": o["gpu"],
            "usd_per_gpu_hour": p["usd_per_gpu_hour"],
            "as_of": str(p["as_of"]),
            "source": (p.get("source") or {}).get("url"),
        }
        for o in provider.get("offers") or ()
        if (gpu is None or o["gpu"] == gpu) and not on_demand_offered(o)
        for p in o.get("prices") or ()
        if p["tier"] == "on_demand"
    ]


def _provider(
    q: ProviderQuote,
    hours: float,
    rates: ExchangeRates | None,
    today: date,
    stale_after_days: int,
    reference: Reference | None,
    list_only: list[dict[str, Any]],
) -> dict[str, Any]:
    options = [_option(o, hours, rates, today, stale_after_days) for o in q.options]
    return {
        "provider": q.slug,
        "name": q.name,
        "rank": None,
        "cheapest": False,
        "best": options[0] if options else None,
        "options": options,
        "reference": reference.to_dict(rates) if reference else None,
        "list_prices_not_bookable": list_only,
        "why_not": q.why_not.value if q.why_not else None,
        "reason": REASONS[q.why_not] if q.why_not else None,
        "largest_gpus": q.largest_gpus,
    }


def quote(
    conn: Connection,
    request: QuoteRequest,
    rates: ExchangeRates | None,
    *,
    today: date,
    stale_after_days: int,
) -> dict[str, Any]:
    """Per provider the cheapest total and every published way to buy the run, or why not.

    Providers with a total come first, cheapest first, ranked (``rank`` 1 is ``cheapest``).
    A provider with an offer that could hold the run but no price it can be bought at gets the
    market reference for that GPU (``app.market``): a range labelled as not its price, ordered
    after the totals by its median. The rest follow by name.
    """
    day = today
    records = provider_records(conn)
    offers = [o for p in records for o in p["offers"]]
    found = quotes.quote(records, request.gpus, request.hours, request.gpu)
    by_slug = {p["slug"]: p for p in records}
    markets: dict[str, MarketReference | None] = {}
    refs = {
        q.slug: _references(offers, by_slug[q.slug], request, markets)
        for q in found
        if q.why_not is WhyNot.NO_PRICE
    }

    def order(q: ProviderQuote) -> tuple[int, float, str]:
        if q.best is not None:
            return 0, q.best.low_usd, q.name.lower()
        ref = refs.get(q.slug)
        if ref is not None:
            return 1, ref.total(ref.market.median_usd_per_gpu_hour), q.name.lower()
        return 2, 0.0, q.name.lower()

    found.sort(key=order)
    data = [
        _provider(
            q,
            request.hours,
            rates,
            day,
            stale_after_days,
            refs.get(q.slug),
            _list_only(by_slug[q.slug], request.gpu) if q.best is None else [],
        )
        for q in found
    ]
    ranked = [d for d in data if d["best"] is not None]
    for i, d in enumerate(ranked, 1):
        d["rank"] = i
        d["cheapest"] = i == 1
    meta = {
        "gpus": request.gpus,
        "months": request.months,
        "start": request.start.isoformat(),
        "end": request.end.isoformat(),
        "hours": round(request.hours, 2),
        "gpu": request.gpu,
        "currency": request.currency,
        "today": day.isoformat(),
        "stale_after_days": stale_after_days,
        "totals": len(ranked),
        "references": sum(1 for d in data if d["best"] is None and d["reference"]),
        "exchange_rates": None
        if rates is None
        else {
            "date": rates.on.isoformat(),
            "age_days": (day - rates.on).days,
            "usd_per_eur": rates.usd_per_eur,
            "brl_per_eur": rates.brl_per_eur,
            "sources": list(rates.source_urls),
        },
    }
    return {"data": data, "count": len(data), "meta": meta}
