"""Offer records to table rows: formatted, translated, with sources; templates only print them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from clusterscout.web.cells import (
    ORCHESTRATION_LABELS,
    PROVISIONING_LABELS,
    TIER_LABELS,
    Cell,
    bool_fact,
    fabric_label,
    fact,
    latest_check,
    refs_for,
    source_links,
    unknown,
)
from clusterscout.web.i18n import Formatter

Record = Mapping[str, Any]


def today() -> date:
    """Today's date in UTC (staleness is judged against it)."""
    return datetime.now(UTC).date()


@dataclass(frozen=True, slots=True)
class OfferRow:
    """One row of the offers table."""

    id: str
    provider_name: str
    provider_href: str
    offer_name: str | None
    gpu: Cell
    gpus_per_node: Cell
    fabric: Cell
    gbps: Cell
    rdma: Cell
    orchestration: Cell
    provisioning: Cell
    cluster_size: Cell
    price: Cell
    storage: Cell
    last_checked: str
    efficiency: Cell | None = None
    """Predicted scaling efficiency on the chosen reference workload (None: none chosen)."""
    effective: Cell | None = None
    """Effective price per useful GPU-hour on the reference workload (None: none chosen)."""


def _orchestration(fmt: Formatter, r: Record) -> Cell:
    o = r["orchestration"]
    flags = {"slurm": o["managed_slurm"], "kubernetes": o["managed_kubernetes"]}
    names = [ORCHESTRATION_LABELS[k] for k, v in flags.items() if v]
    if names:
        text = ", ".join(names)
    elif o["raw_vms"] or any(v is False for v in flags.values()):
        text = fmt.gettext("self-managed")
    else:
        return unknown(fmt)
    return fact(fmt, text, refs_for(r, "orchestration"))


def _provisioning(fmt: Formatter, r: Record) -> Cell:
    p = r["provisioning"]
    flags = {
        "on_demand": p["on_demand_clusters"],
        "reserved": p["reserved"],
        "waitlist": p["waitlist"],
    }
    names = [fmt.gettext(PROVISIONING_LABELS[k]) for k, v in flags.items() if v]
    if not names:
        return unknown(fmt)
    return fact(fmt, ", ".join(names), refs_for(r, "provisioning"))


def cluster_size(fmt: Formatter, r: Record) -> Cell:
    """``2–64 nodes``, ``up to 64 nodes``, ``up to 512 nodes on request`` or unknown."""
    low, high, quote = r["min_nodes"], r["max_nodes"], r["max_nodes_by_quote"]
    refs = refs_for(r, "min_nodes", "max_nodes", "max_nodes_by_quote")
    if high is not None and low is not None and low != high:
        text = fmt.gettext("%(low)s–%(high)s nodes") % {
            "low": fmt.number(low),
            "high": fmt.number(high),
        }
    elif high is not None:
        text = fmt.ngettext("up to %(num)s node", "up to %(num)s nodes", high) % {
            "num": fmt.number(high)
        }
    elif quote is not None:
        text = fmt.ngettext(
            "up to %(num)s node on request", "up to %(num)s nodes on request", quote
        ) % {"num": fmt.number(quote)}
    elif low is not None:
        text = fmt.ngettext("from %(num)s node", "from %(num)s nodes", low) % {
            "num": fmt.number(low)
        }
    else:
        return unknown(fmt)
    return fact(fmt, text, refs, sort_value=str(max(x or 0 for x in (low, high, quote))))


def price_cell(
    fmt: Formatter, prices: Sequence[Record], stale_after_days: int, tier: str | None = None
) -> Cell:
    """The lowest current price (of ``tier``, else of any tier) with its tier, ``as_of`` date
    and a stale badge when old."""
    if tier is not None:
        prices = [p for p in prices if p["tier"] == tier]
    if not prices:
        return unknown(fmt)
    best = min(prices, key=lambda p: p["usd_per_gpu_hour"])
    as_of = date.fromisoformat(str(best["as_of"]))
    # Records marked by services.mark_freshness carry the verdict; others are judged here alike.
    stale = best.get("stale")
    if stale is None:
        stale = today() - as_of > timedelta(days=stale_after_days)
    per_hour = fmt.gettext("%(price)s/GPU-h") % {"price": fmt.usd(best["usd_per_gpu_hour"])}
    detail = fmt.gettext("%(tier)s, as of %(date)s") % {
        "tier": fmt.gettext(TIER_LABELS.get(str(best["tier"]), str(best["tier"]))),
        "date": fmt.day(as_of),
    }
    return Cell(
        per_hour,
        sources=source_links(fmt, [best["source"]]),
        badge=fmt.gettext("stale") if stale else None,
        detail=detail,
        sort_value=f"{best['usd_per_gpu_hour']:012.4f}",
    )


def storage_cell(fmt: Formatter, provider: Record | None) -> Cell:
    """Shared storage of the offer's provider (storage is sold per provider).

    The table shows a short label (shared file system or not, else the number of products);
    the product names, which are catalog prose, are listed behind it.
    """
    if provider is None:
        return unknown(fmt)
    s = provider["storage"]
    refs = refs_for(provider, "storage")
    products = tuple(str(p) for p in s["products"])
    if s["shared_filesystem"] is not None:
        text = (
            fmt.gettext("shared file system")
            if s["shared_filesystem"]
            else fmt.gettext("no shared file system")
        )
    elif products:
        text = fmt.ngettext(
            "%(num)s storage product", "%(num)s storage products", len(products)
        ) % {"num": fmt.number(len(products))}
    else:
        return unknown(fmt)
    return fact(fmt, text, refs, items=products, lang=fmt.catalog.lang_of(*products))


def offer_row(
    fmt: Formatter,
    r: Record,
    provider: Record | None,
    stale_after_days: int,
    tier: str | None = None,
) -> OfferRow:
    """Format one offer record for the table."""
    gbps = r["per_node_gbps"]
    fabric = fabric_label(r["fabric"])
    generation = str(r.get("fabric_generation") or "")
    prefix = f"{r['fabric']}-"
    if fabric and generation.startswith(prefix):
        fabric = f"{fabric} {generation.removeprefix(prefix).upper()}"
    checked = latest_check(r)
    return OfferRow(
        id=r["id"],
        provider_name=r["provider_name"],
        provider_href=f"/{fmt.lang}/providers/{r['provider']}/",
        offer_name=r["name"],
        gpu=fact(fmt, r["gpu"], refs_for(r, "gpu")),
        gpus_per_node=fact(
            fmt,
            None if r["gpus_per_node"] is None else fmt.number(r["gpus_per_node"]),
            refs_for(r, "gpus_per_node"),
        ),
        fabric=fact(fmt, fabric, refs_for(r, "fabric", "fabric_generation")),
        gbps=fact(
            fmt,
            None if gbps is None else fmt.number(gbps),
            refs_for(r, "per_node_gbps"),
            sort_value=f"{gbps or 0:010.1f}",
        ),
        rdma=bool_fact(fmt, r["gpudirect_rdma"], refs_for(r, "gpudirect_rdma")),
        orchestration=_orchestration(fmt, r),
        provisioning=_provisioning(fmt, r),
        cluster_size=cluster_size(fmt, r),
        price=price_cell(fmt, r["prices"], stale_after_days, tier),
        storage=storage_cell(fmt, provider),
        last_checked=fmt.day(checked) if checked else fmt.gettext("unknown"),
    )


def offer_rows(
    fmt: Formatter,
    records: Sequence[Record],
    providers: Mapping[str, Record],
    stale_after_days: int,
    tier: str | None = None,
) -> list[OfferRow]:
    """Table rows for a page of offer records; ``tier`` picks the price shown."""
    return [
        offer_row(fmt, r, providers.get(r["provider"]), stale_after_days, tier) for r in records
    ]
