"""The quote page's rows: ``GET /api/v1/quote``'s answer, formatted in the reader's language."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from clusterscout.web.cells import TIER_LABELS
from clusterscout.web.i18n import N_, Formatter

READER_CURRENCY: Final = {"en": "USD", "pt": "BRL", "es": "EUR", "fr": "EUR", "de": "EUR"}
"""The currency a reader of each language sees first when none is asked for."""
BASIS_LABELS: Final = {
    "list_price": N_("on-demand list price for the whole run (no commitment price published)"),
    "reserved_term": N_("reserved term"),
    "capacity_block": N_("capacity block"),
    "commitment_discount": N_("commitment discount off the list price"),
}
WHY_NOT: Final = {
    "no_offer": N_("no offer of this GPU"),
    "no_price": N_("no published price that a run can pay"),
    "too_small": N_("largest cluster: %(num)s GPUs"),
}


@dataclass(frozen=True, slots=True)
class QuoteLine:
    """One provider's row on the quote page, formatted."""

    rank: str
    name: str
    slug: str
    cheapest: bool
    total: str
    """The total in the reader's currency, a range where only a ceiling is published, or ""."""
    usd: str
    """The same in USD when the reader's currency is another."""
    per_gpu_hour: str
    how: str
    """Basis, term, offer and what the total commits to, or why there is no total."""
    as_of: str
    stale: bool
    age: str
    source: str | None
    kind: str
    """``total``, ``reference`` or ``none``: a CSS hook and what the row is."""


def _money(fmt: Formatter, amounts: Mapping[str, Any], currency: str) -> str:
    amount = amounts.get(currency)
    if amount is None:
        return ""
    low = fmt.money_whole(amount["low"], currency)
    if round(amount["low"]) == round(amount["high"]):
        return low
    return f"{low} – {fmt.money_whole(amount['high'], currency)}"


def _how(fmt: Formatter, o: Mapping[str, Any]) -> str:
    _ = fmt.gettext
    parts = [_(BASIS_LABELS.get(o["basis"], o["basis"])), o["offer_id"]]
    if o["term_days"]:
        parts.append(_("term %(num)s days") % {"num": fmt.number(o["term_days"])})
    if o["billed_beyond_run"]:
        parts.append(
            _("pays %(num)s hours: the billing minimum or whole terms")
            % {"num": fmt.number(round(o["billed_hours"]))}
        )
    if o["prepay"]:
        parts.append(_("paid up front"))
    if not o["capacity_known"]:
        parts.append(_("largest cluster unknown"))
    return " · ".join(parts)


def _age(fmt: Formatter, days: int | None) -> str:
    if days is None:
        return ""
    return fmt.ngettext("%(num)s day old", "%(num)s days old", days) % {"num": fmt.number(days)}


def _reference(fmt: Formatter, ref: Mapping[str, Any]) -> str:
    _ = fmt.gettext
    return _(
        "no price a run can be bought at: market reference, not this provider's price — median "
        "%(median)s per GPU-hour (%(low)s to %(high)s) over %(tier)s prices of %(num)s "
        "%(gpu)s offers"
    ) % {
        "median": fmt.usd(ref["median_usd_per_gpu_hour"]),
        "low": fmt.usd(ref["low_usd_per_gpu_hour"]),
        "high": fmt.usd(ref["high_usd_per_gpu_hour"]),
        "tier": _(TIER_LABELS.get(ref["tier"], ref["tier"])),
        "num": fmt.number(ref["prices"]),
        "gpu": ref["gpu"],
    }


def _closed(fmt: Formatter, p: Mapping[str, Any]) -> str:
    return "".join(
        " · "
        + fmt.gettext(
            "lists %(gpu)s at %(price)s per GPU-hour on demand (%(date)s), but does not rent "
            "clusters on demand"
        )
        % {"gpu": x["gpu"], "price": fmt.usd(x["usd_per_gpu_hour"]), "date": fmt.day(x["as_of"])}
        for x in p["list_prices_not_bookable"]
    )


def quote_lines(fmt: Formatter, body: Mapping[str, Any], currency: str) -> list[QuoteLine]:
    """Every provider of the quote, in its order: totals ranked, references, then why not."""
    out = []
    for p in body["data"]:
        best, ref = p["best"], p["reference"]
        if best is not None:
            out.append(
                QuoteLine(
                    rank=fmt.number(p["rank"]),
                    name=p["name"],
                    slug=p["provider"],
                    cheapest=p["cheapest"],
                    total=_money(fmt, best["total"], currency),
                    usd=_money(fmt, best["total"], "USD") if currency != "USD" else "",
                    per_gpu_hour=fmt.usd(best["usd_per_gpu_hour"]),
                    how=_how(fmt, best),
                    as_of=fmt.day(best["as_of"]) if best["as_of"] else "",
                    stale=bool(best["stale"]),
                    age=_age(fmt, best["age_days"]),
                    source=best["source"],
                    kind="total",
                )
            )
        elif ref is not None:
            out.append(
                QuoteLine(
                    rank="",
                    name=p["name"],
                    slug=p["provider"],
                    cheapest=False,
                    total=_money(fmt, ref["total"], currency),
                    usd=_money(fmt, ref["total"], "USD") if currency != "USD" else "",
                    per_gpu_hour=fmt.usd(ref["median_usd_per_gpu_hour"]),
                    how=_reference(fmt, ref) + _closed(fmt, p),
                    as_of="",
                    stale=False,
                    age="",
                    source=None,
                    kind="reference",
                )
            )
        else:
            why = fmt.gettext(WHY_NOT.get(p["why_not"] or "no_price", WHY_NOT["no_price"])) % {
                "num": fmt.number(p["largest_gpus"] or 0)
            }
            why += _closed(fmt, p)
            out.append(
                QuoteLine(
                    "",
                    p["name"],
                    p["provider"],
                    False,
                    "",
                    "",
                    "",
                    why,
                    "",
                    False,
                    "",
                    None,
                    "none",
                )
            )
    return out
