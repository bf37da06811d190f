"""The commitment quote as a service: read the request, price every provider, publish JSON.

One path for ``GET /api/v1/quote``, ``clusterscout quote`` and (its parsing) the compare page:
``app.quotes`` does the arithmetic; this module reads the inputs, loads every provider with its
offers from the store and the dated exchange rates from data/, and shapes the answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.app import quotes
from clusterscout.app.quotes import Option, ProviderQuote, WhyNot
from clusterscout.catalog.filters import OfferFilter
from clusterscout.catalog.rates import ExchangeRates, load_rates
from clusterscout.domain.errors import InputError
from clusterscout.store import queries

CURRENCIES: Final = ("USD", "EUR", "BRL")
DATE_PATTERN: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# Bounds keep the end of a 60-month run a valid date and the start a plausible one.
FIRST_START: Final = date(2000, 1, 1)
LAST_START: Final = date(2100, 12, 31)
PARAMS: Final = ("gpus", "months", "start", "gpu")
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
    return QuoteRequest(gpus, months, start, gpu)


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


def _option(o: Option, hours: float, rates: ExchangeRates | None) -> dict[str, Any]:
    return {
        "offer_id": o.offer_id,
        "gpu": o.gpu,
        "tier": o.tier,
        "term_days": o.term_days,
        "prepay": o.prepay,
        "billed_hours": round(o.billed_hours, 2),
        "billed_beyond_run": o.billed_hours > hours + 1e-6,
        "is_range": round(o.low_usd, 2) != round(o.high_usd, 2),
        "capacity_known": o.capacity_known,
        "total": _amounts(o.low_usd, o.high_usd, rates),
    }


def _provider(q: ProviderQuote, hours: float, rates: ExchangeRates | None) -> dict[str, Any]:
    return {
        "provider": q.slug,
        "name": q.name,
        "best": _option(q.best, hours, rates) if q.best else None,
        "options": [_option(o, hours, rates) for o in q.options],
        "why_not": q.why_not.value if q.why_not else None,
        "reason": REASONS[q.why_not] if q.why_not else None,
        "largest_gpus": q.largest_gpus,
    }


def quote(conn: Connection, request: QuoteRequest, rates: ExchangeRates | None) -> dict[str, Any]:
    """Per provider the cheapest total and every published way to buy the run, or why not.

    Providers with a total come first, cheapest first; the rest follow by name.
    """
    found = quotes.quote(provider_records(conn), request.gpus, request.hours, request.gpu)
    found.sort(key=lambda q: (q.best is None, q.best.low_usd if q.best else 0, q.name.lower()))
    data = [_provider(q, request.hours, rates) for q in found]
    meta = {
        "gpus": request.gpus,
        "months": request.months,
        "start": request.start.isoformat(),
        "end": request.end.isoformat(),
        "hours": round(request.hours, 2),
        "gpu": request.gpu,
        "exchange_rates": None
        if rates is None
        else {
            "date": rates.on.isoformat(),
            "usd_per_eur": rates.usd_per_eur,
            "brl_per_eur": rates.brl_per_eur,
            "sources": list(rates.source_urls),
        },
    }
    return {"data": data, "count": len(data), "meta": meta}
