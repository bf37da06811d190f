"""Offer records to table rows: formatted, translated, with sources; templates only print them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

from clusterscout.catalog.records import headline_price, on_demand_offered
from clusterscout.web import fabric_view
from clusterscout.web.cells import (
    ACCESS_LABELS,
    ORCHESTRATION_LABELS,
    PROVISIONING_LABELS,
    TIER_LABELS,
    Cell,
    SourceLink,
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

BADGED_CONFLICTS: Final = frozenset({"price", "provisioning"})
"""Conflicts that put the row's price in doubt, so the row shows a badge."""


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
    spot: Cell = field(default_factory=lambda: Cell(""))
    """The lowest spot price, in its own column: it can be interrupted, so it never leads."""
    conflict: str | None = None
    """Badge text when sources disagree about the offer's price or provisioning."""
    conflict_note: str | None = None
    """The recorded note(s) behind the badge (catalog prose)."""
    conflict_lang: str | None = None
    """Language of ``conflict_note`` (the reader's when translated, else English)."""
    region: Cell = field(default_factory=lambda: Cell(""))
    """Countries of the offer's regions (else the provider's), in the reader's language."""
    access: Cell = field(default_factory=lambda: Cell(""))
    """How fast a cluster can be had: self-serve, after approval, through sales, waitlist."""
    facts: tuple[tuple[str, Cell], ...] = ()
    """Every fact of the row with its sources, for the row's disclosure."""
    sources: tuple[SourceLink, ...] = ()
    """The sources of ``facts``, each once, numbered from 1 in this order."""
    notes: tuple[tuple[int, ...], ...] = ()
    """Per fact of ``facts``, the numbers of its sources in ``sources``."""
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
    fmt: Formatter,
    prices: Sequence[Record],
    stale_after_days: int,
    tier: str | None = None,
    *,
    with_tier: bool = True,
    on_demand: bool = True,
) -> Cell:
    """The lowest current price of ``tier`` (else the headline price: the first uninterruptible
    tier priced) with its tier, ``as_of`` date and a stale badge when old.

    ``on_demand`` False (clusters not rented on demand) keeps an on-demand list price out of the
    headline, as in the API record and the store's headline column."""
    if tier is not None:
        prices = [p for p in prices if p["tier"] == tier]
    else:
        headline = headline_price(prices, on_demand=on_demand)
        prices = [p for p in prices if headline and p["tier"] == headline["tier"]]
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
    if not with_tier:
        detail = fmt.gettext("as of %(date)s") % {"date": fmt.day(as_of)}
    return Cell(
        per_hour,
        sources=source_links(fmt, [best["source"]]),
        badge=fmt.gettext("stale") if stale else None,
        detail=detail,
        sort_value=f"{best['usd_per_gpu_hour']:012.4f}",
    )


def region_cell(fmt: Formatter, r: Record, provider: Record | None) -> Cell:
    """Country codes of the offer's regions, else of its provider's, else its region names.

    Compact for the table: up to four ISO codes ("US, DE"), else the number of countries.
    """
    for rec in (r, provider or {}):
        codes = [str(c) for c in rec.get("countries") or ()]
        if codes:
            text = ", ".join(codes)
            if len(codes) > MAX_REGION_CODES:
                text = fmt.ngettext("%(num)s country", "%(num)s countries", len(codes)) % {
                    "num": fmt.number(len(codes))
                }
            return fact(fmt, text, refs_for(rec, "regions"), lang="en")
    names = list(r.get("regions") or (provider or {}).get("regions") or ())
    if names:
        return fact(fmt, ", ".join(names), refs_for(r, "regions"), lang="en")
    return unknown(fmt)


MAX_REGION_CODES: Final = 4
"""More countries than this show as a count, so the region column stays narrow."""


def access_cell(fmt: Formatter, r: Record) -> Cell:
    """How fast a buyer gets a cluster, from the sourced ``access`` fact."""
    access = (r.get("provisioning") or {}).get("access")
    if access is None:
        return unknown(fmt)
    return fact(fmt, fmt.gettext(ACCESS_LABELS.get(access, access)), refs_for(r, "provisioning"))


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


def _gbps_cell(fmt: Formatter, r: Record) -> Cell:
    # The advertised figure, with the published measurement and the model's figure for the
    # same run as its detail line: the three numbers a buyer compares.
    gbps = r["per_node_gbps"]
    measured = fabric_view.summary(fmt, r, with_run=False)
    if gbps is None:
        return replace(unknown(fmt), detail=measured)
    return fact(
        fmt,
        fmt.number(gbps),
        refs_for(r, "per_node_gbps"),
        sort_value=f"{gbps:010.1f}",
        detail=measured,
    )


def _measured_fact(fmt: Formatter, r: Record) -> Cell:
    text = fabric_view.summary(fmt, r)
    return fact(fmt, text, refs_for(r, "measured_fabric"))


def offer_row(
    fmt: Formatter,
    r: Record,
    provider: Record | None,
    stale_after_days: int,
    tier: str | None = None,
) -> OfferRow:
    """Format one offer record for the table."""
    fabric = fabric_label(r["fabric"])
    generation = str(r.get("fabric_generation") or "")
    prefix = f"{r['fabric']}-"
    if fabric and generation.startswith(prefix):
        fabric = f"{fabric} {generation.removeprefix(prefix).upper()}"
    checked = latest_check(r)
    badged = [c for c in r.get("conflicts") or () if BADGED_CONFLICTS & set(c.get("about") or ())]
    cells = {
        "gpu": fact(fmt, r["gpu"], refs_for(r, "gpu")),
        "fabric": fact(fmt, fabric, refs_for(r, "fabric", "fabric_generation")),
        "gbps": _gbps_cell(fmt, r),
        "rdma": bool_fact(fmt, r["gpudirect_rdma"], refs_for(r, "gpudirect_rdma")),
        "price": price_cell(
            fmt, r["prices"], stale_after_days, tier, on_demand=on_demand_offered(r)
        ),
        "spot": price_cell(fmt, r["prices"], stale_after_days, "spot", with_tier=False),
        "cluster_size": cluster_size(fmt, r),
        "region": region_cell(fmt, r, provider),
        "access": access_cell(fmt, r),
        "provisioning": _provisioning(fmt, r),
        "orchestration": _orchestration(fmt, r),
        "storage": storage_cell(fmt, provider),
        "measured": _measured_fact(fmt, r),
    }
    labels = {
        "gpu": fmt.gettext("GPU"),
        "fabric": fmt.gettext("Fabric"),
        "gbps": fmt.gettext("Gbit/s per node"),
        "rdma": fmt.gettext("GPUDirect RDMA"),
        "price": fmt.gettext("Price, per GPU-hour"),
        "spot": fmt.gettext("Spot, per GPU-hour"),
        "cluster_size": fmt.gettext("Cluster size"),
        "region": fmt.gettext("Region"),
        "access": fmt.gettext("How fast"),
        "provisioning": fmt.gettext("Provisioning"),
        "orchestration": fmt.gettext("Orchestration"),
        "storage": fmt.gettext("Storage"),
        "measured": fmt.gettext("Measured fabric"),
    }
    facts = tuple((labels[k], c) for k, c in cells.items() if not c.unknown and c.sources)
    # One list per row: most facts share the provider's few pages, and listing each page
    # under every fact it supports repeated it up to a dozen times (about 9 KB a row).
    numbered: dict[SourceLink, int] = {}
    for _label, cell in facts:
        for link in cell.sources:
            numbered.setdefault(link, len(numbered) + 1)
    return OfferRow(
        id=r["id"],
        provider_name=r["provider_name"],
        provider_href=f"/{fmt.lang}/providers/{r['provider']}/",
        offer_name=r["name"],
        gpu=cells["gpu"],
        gpus_per_node=fact(
            fmt,
            None if r["gpus_per_node"] is None else fmt.number(r["gpus_per_node"]),
            refs_for(r, "gpus_per_node"),
        ),
        fabric=cells["fabric"],
        gbps=cells["gbps"],
        rdma=cells["rdma"],
        orchestration=cells["orchestration"],
        provisioning=cells["provisioning"],
        cluster_size=cells["cluster_size"],
        price=cells["price"],
        storage=cells["storage"],
        last_checked=fmt.day(checked) if checked else fmt.gettext("unknown"),
        spot=cells["spot"],
        conflict=fmt.gettext("sources disagree") if badged else None,
        conflict_note=" ".join(c["note"] for c in badged) or None,
        conflict_lang=fmt.catalog.lang_of(*(c["note"] for c in badged)) if badged else None,
        region=cells["region"],
        access=cells["access"],
        facts=facts,
        sources=tuple(numbered),
        notes=tuple(tuple(sorted(numbered[link] for link in c.sources)) for _label, c in facts),
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
