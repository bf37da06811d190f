"""The compare page's first block (price, capacity, how fast) and its commitment quote."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Final

from clusterscout.app.quotes import HOURS_PER_MONTH, ProviderQuote, WhyNot
from clusterscout.catalog.rates import ExchangeRates
from clusterscout.catalog.records import on_demand_offered
from clusterscout.web.cells import (
    ACCESS_LABELS,
    Cell,
    country_names,
    fact,
    refs_for,
    unknown,
)
from clusterscout.web.i18n import N_, Formatter
from clusterscout.web.scorecard import CompareRow, CompareSection

Record = Mapping[str, Any]
READER_CURRENCY: Final = {"pt": "BRL", "es": "EUR", "fr": "EUR", "de": "EUR"}
"""The currency shown first to a reader of each language (besides USD, EUR and BRL)."""
WHY_NOT: Final = {
    WhyNot.NO_OFFER: N_("no offer of this GPU"),
    WhyNot.NO_PRICE: N_("no published price that a run can pay"),
    WhyNot.TOO_SMALL: N_("largest cluster: %(num)s GPUs"),
}
TERM_TIERS: Final = {
    # A list price times the run, not a reservation: the label says so (ADR 0026).
    "on_demand": N_("on-demand list price"),
    "reserved": N_("reserved"),
    "capacity_block": N_("capacity block"),
    "discount": N_("commitment discount"),
}


def _per_gpu(fmt: Formatter, offers: Sequence[Record], tier: str, *, terms: bool) -> Cell:
    parts, refs = [], []
    for o in offers:
        for p in o.get("prices") or ():
            if p["tier"] != tier:
                continue
            text = f"{o['gpu']} {fmt.usd(p['usd_per_gpu_hour'])}"
            if tier == "on_demand" and not on_demand_offered(o):
                # Listed, but the provider does not rent clusters on demand: say so here too.
                closed = fmt.gettext("list price; no on-demand clusters")
                text += f" ({closed})"
            if terms:
                days = p.get("term_days")
                term = (
                    fmt.ngettext("%(num)s day", "%(num)s days", days) % {"num": fmt.number(days)}
                    if days
                    else fmt.gettext("term unknown")
                )
                text += f" ({term})"
            parts.append(text)
            refs.append(p["source"])
    return fact(fmt, " · ".join(dict.fromkeys(parts)) or None, refs)


def _largest(fmt: Formatter, offers: Sequence[Record]) -> Cell:
    def gpus(key: str) -> int | None:
        sizes = [
            o[key] * o["gpus_per_node"] for o in offers if o.get(key) and o.get("gpus_per_node")
        ]
        return max(sizes, default=None)

    own, quoted = gpus("max_nodes"), gpus("max_nodes_by_quote")
    parts = []
    if own:
        parts.append(fmt.gettext("%(num)s GPUs self-serve") % {"num": fmt.number(own)})
    if quoted:
        parts.append(fmt.gettext("%(num)s GPUs by quote") % {"num": fmt.number(quoted)})
    refs = [r for o in offers for r in refs_for(o, "max_nodes", "max_nodes_by_quote")]
    return fact(fmt, " · ".join(parts) or None, refs)


def _minimum(fmt: Formatter, p: Record) -> Cell:
    billing = p.get("billing") or {}
    text = billing.get("minimum")
    return fact(fmt, text, refs_for(p, "billing"), lang="en")


def _access(fmt: Formatter, p: Record) -> tuple[Cell, Cell]:
    access = (p.get("provisioning") or {}).get("access")
    refs = refs_for(p, "provisioning")
    if access is None:
        return unknown(fmt), unknown(fmt)
    sales = fmt.gettext("yes") if access == "sales" else fmt.gettext("no")
    return fact(fmt, fmt.gettext(ACCESS_LABELS[access]), refs), fact(fmt, sales, refs)


def _regions(fmt: Formatter, p: Record) -> Cell:
    """Countries of the provider's and its offers' regions, in the reader's language."""
    offers = p.get("offers") or []
    codes = list(
        dict.fromkeys(
            [*(p.get("countries") or ()), *(c for o in offers for c in o.get("countries") or ())]
        )
    )
    refs = [*refs_for(p, "regions"), *(r for o in offers for r in refs_for(o, "regions"))]
    if not codes:
        names = list(
            dict.fromkeys(
                [*(p.get("regions") or ()), *(n for o in offers for n in o.get("regions") or ())]
            )
        )
        return fact(fmt, ", ".join(names) or None, refs, lang="en")
    return fact(fmt, ", ".join(country_names(fmt, codes)), refs)


def price_section(fmt: Formatter, providers: Sequence[Record]) -> CompareSection:
    """The first block: prices, capacity, commitment, how fast, and where (regions)."""
    _ = fmt.gettext
    rows: list[tuple[str, list[Cell]]] = [
        (_("On-demand price, per GPU-hour"), []),
        (_("Reserved price by term, per GPU-hour"), []),
        (_("Capacity block, per GPU-hour"), []),
        (_("Largest cluster"), []),
        (_("Minimum commitment"), []),
        (_("How fast"), []),
        (_("Sales only"), []),
        (_("Regions"), []),
    ]
    for p in providers:
        offers = p.get("offers") or []
        access, sales = _access(fmt, p)
        cells = [
            _per_gpu(fmt, offers, "on_demand", terms=False),
            _per_gpu(fmt, offers, "reserved", terms=True),
            _per_gpu(fmt, offers, "capacity_block", terms=True),
            _largest(fmt, offers),
            _minimum(fmt, p),
            access,
            sales,
            _regions(fmt, p),
        ]
        for (_label, column), c in zip(rows, cells, strict=True):
            column.append(c)
    summaries = tuple(
        fmt.gettext("%(known)s of %(total)s facts known")
        % {"known": sum(not col[i].unknown for _l, col in rows), "total": len(rows)}
        for i in range(len(providers))
    )
    return CompareSection(
        "price",
        _("Price, capacity and how fast"),
        tuple(CompareRow(label, tuple(col)) for label, col in rows),
        summaries,
    )


@dataclass(frozen=True, slots=True)
class QuoteRow:
    """One provider's line of the quote table, formatted."""

    name: str
    total: str
    """The total in USD (a range when only a discount ceiling is published), or why not."""
    other: tuple[str, ...]
    """The same total in the other currencies, reader's first."""
    how: str
    """Tier, term and offer the total uses, and what it commits to."""
    ok: bool


def currencies(lang: str) -> tuple[str, ...]:
    """Currencies besides USD, the reader's first."""
    first = READER_CURRENCY.get(lang)
    rest = [c for c in ("EUR", "BRL") if c != first]
    return (first, *rest) if first else tuple(rest)


def _money(fmt: Formatter, low: float, high: float, currency: str) -> str:
    one = fmt.money_whole(low, currency)
    return one if round(low) == round(high) else f"{one} – {fmt.money_whole(high, currency)}"


def quote_rows(
    fmt: Formatter,
    quotes: Sequence[ProviderQuote],
    rates: ExchangeRates | None,
    hours: float,
    *,
    today: date | None = None,
    stale_after_days: int = 30,
) -> list[QuoteRow]:
    """The quote table: total, other currencies and what the total commits to, and (given
    ``today``) the date of the price it rests on, with "stale" past ``stale_after_days``."""
    _ = fmt.gettext
    out = []
    for q in quotes:
        b = q.best
        if b is None:
            why = _(WHY_NOT[q.why_not or WhyNot.NO_PRICE]) % {
                "num": fmt.number(q.largest_gpus or 0)
            }
            out.append(QuoteRow(q.name, why, (), "", ok=False))
            continue
        others = (
            tuple(
                _money(fmt, rates.convert(b.low_usd, c), rates.convert(b.high_usd, c), c)
                for c in currencies(fmt.lang)
            )
            if rates
            else ()
        )
        parts = [_(TERM_TIERS.get(b.tier, b.tier)), b.gpu]
        if b.term_days:
            parts.append(_("term %(num)s days") % {"num": fmt.number(b.term_days)})
        if b.billed_hours > hours + 1e-6:
            parts.append(
                _("pays %(num)s months (the minimum term)")
                % {"num": fmt.fixed(b.billed_hours / HOURS_PER_MONTH, 1)}
            )
        if b.prepay:
            parts.append(_("paid up front"))
        if not b.capacity_known:
            parts.append(_("largest cluster unknown"))
        if today is not None and b.as_of:
            age = (today - date.fromisoformat(b.as_of)).days
            dated = _("price as of %(date)s, %(age)s") % {
                "date": fmt.day(b.as_of),
                "age": fmt.ngettext("%(num)s day old", "%(num)s days old", age)
                % {"num": fmt.number(age)},
            }
            parts.append(f"{dated} ({_('stale')})" if age > stale_after_days else dated)
        out.append(
            QuoteRow(
                q.name,
                _money(fmt, b.low_usd, b.high_usd, "USD"),
                others,
                " · ".join(parts),
                ok=True,
            )
        )
    return out


def end_date(start: date, hours: float) -> date:
    """The day a run of ``hours`` hours from ``start`` ends."""
    return start + timedelta(hours=hours)
