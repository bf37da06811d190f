"""Domain records to the public JSON shapes shared by the CLI and the API (DESIGN section 4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from clusterscout.domain.models import (
    HEADLINE_TIERS,
    Billing,
    Conflict,
    Discount,
    MeasuredFabric,
    Offer,
    Orchestration,
    Price,
    Provider,
    Provisioning,
    Rating,
    RatingEdition,
    Source,
    Sources,
    Storage,
    Topology,
)

Record = dict[str, Any]

HEADLINE_TIER_VALUES: Final = tuple(t.value for t in HEADLINE_TIERS)
"""Tiers that cannot be interrupted, in the order the headline price takes them (spot never)."""


def source_ref(s: Source) -> dict[str, str | None]:
    """``{"url", "checked_on", "kind", "published_on"}`` of one source (``published_on``: the
    page's own date, None when it shows none), so a reader sees how old the evidence is."""
    return {
        "url": s.url,
        "checked_on": s.checked_on.isoformat(),
        "kind": s.kind.value,
        "published_on": s.published_on.isoformat() if s.published_on else None,
    }


def source_refs(sources: Sources) -> list[dict[str, str | None]]:
    """``[{"url", "checked_on", "kind", "published_on"}]`` in order, without duplicates."""
    seen: dict[str, dict[str, str | None]] = {}
    for s in sources:
        seen.setdefault(s.url, source_ref(s))
    return list(seen.values())


def sources_record(
    field_sources: Mapping[str, Sources],
) -> dict[str, list[dict[str, str | None]]]:
    """The ``sources`` object: field name -> list of ``{url, checked_on, kind, published_on}``."""
    return {name: source_refs(srcs) for name, srcs in sorted(field_sources.items())}


def orchestration_record(o: Orchestration) -> Record:
    """Orchestration facts; unknown values are None."""
    return {
        "managed_slurm": o.managed_slurm,
        "managed_kubernetes": o.managed_kubernetes,
        "nccl_preconfigured": o.nccl_preconfigured,
        "raw_vms": o.raw_vms,
        "note": o.note,
    }


def provisioning_record(p: Provisioning) -> Record:
    """Provisioning facts; unknown values are None."""
    return {
        "on_demand_clusters": p.on_demand_clusters,
        "reserved": p.reserved,
        "reserved_terms": list(p.reserved_terms),
        "waitlist": p.waitlist,
        "access": p.access.value if p.access else None,
        "note": p.note,
    }


def billing_record(b: Billing) -> Record:
    """Billing facts; unknown values are None."""
    return {
        "granularity": b.granularity.value if b.granularity else None,
        "minimum": b.minimum,
        "minimum_hours": b.minimum_hours,
        "note": b.note,
    }


def discount_record(d: Discount) -> Record:
    """A published commitment discount: term in days and the percentage range off a tier."""
    return {
        "term_days": d.term_days,
        "min_percent": d.min_percent,
        "max_percent": d.max_percent,
        "off": d.off.value,
        "note": d.note,
        "sources": source_refs(d.sources),
    }


def rating_record(r: Rating) -> Record:
    """An independent rating with its date and sources."""
    return {
        "rater": r.rater,
        "edition": r.edition,
        "tier": r.tier.value,
        "published_on": r.published_on.isoformat(),
        "note": r.note,
        "sources": source_refs(r.sources),
    }


def edition_record(e: RatingEdition) -> Record:
    """One edition of a rating: rater, edition, date and sources (the list of who it rated)."""
    return {
        "rater": e.rater,
        "edition": e.edition,
        "published_on": e.published_on.isoformat(),
        "sources": source_refs(e.sources),
    }


def storage_record(s: Storage) -> Record:
    """Shared storage facts; unknown values are None."""
    return {
        "shared_filesystem": s.shared_filesystem,
        "products": list(s.products),
        "throughput_gbs": s.throughput_gbs,
        "usd_per_gib_month": s.usd_per_gib_month,
        "egress_usd_per_gib": s.egress_usd_per_gib,
        "note": s.note,
    }


def topology_record(t: Topology) -> Record:
    """Topology claims; unknown values are None."""
    return {
        "non_blocking": t.non_blocking,
        "rail_optimized": t.rail_optimized,
        "locality": t.locality,
    }


def price_record(p: Price) -> Record:
    """One price: tier, USD per GPU-hour, term, as_of and its source."""
    return {
        "tier": p.tier.value,
        "usd_per_gpu_hour": p.usd_per_gpu_hour,
        "term": p.term,
        "term_days": p.term_days,
        "prepay": p.prepay,
        "as_of": p.as_of.isoformat(),
        "source": source_ref(p.source),
        "note": p.note,
    }


def conflict_record(c: Conflict) -> Record:
    """A recorded disagreement between sources: topic, note, what it is about, its sources."""
    return {
        "topic": c.topic,
        "note": c.note,
        "about": [a.value for a in c.about],
        "offers": list(c.offers),
        "sources": source_refs(c.sources),
    }


def on_demand_offered(record: Mapping[str, Any]) -> bool:
    """``Offer.on_demand_offered`` of an offer record: whether its on-demand price can start a
    cluster. The recorded fact decides (``on_demand_clusters``); when it is unknown, a recorded
    conflict about provisioning puts the price in doubt.

    >>> on_demand_offered({"provisioning": {"on_demand_clusters": False}})
    False
    >>> on_demand_offered({"provisioning": {}, "conflicts": [{"about": ["provisioning"]}]})
    False
    >>> on_demand_offered({"provisioning": {"on_demand_clusters": True},
    ...                    "conflicts": [{"about": ["provisioning"]}]})
    True
    >>> on_demand_offered({"provisioning": {"on_demand_clusters": None}, "conflicts": []})
    True
    """
    known = (record.get("provisioning") or {}).get("on_demand_clusters")
    if known is not None:
        return bool(known)
    return not any("provisioning" in (c.get("about") or ()) for c in record.get("conflicts") or ())


def headline_price(prices: Sequence[Mapping[str, Any]], *, on_demand: bool = True) -> Record | None:
    """The price a listing leads with: the lowest of the first uninterruptible tier priced.

    On-demand (unless ``on_demand`` is False: see ``on_demand_offered``), else reserved, else
    capacity block; an offer priced only as spot has none.

    >>> headline_price([{"tier": "spot", "usd_per_gpu_hour": 1.0, "as_of": "2026-01-01"},
    ...                 {"tier": "reserved", "usd_per_gpu_hour": 3.0, "as_of": "2026-01-02"}])
    {'tier': 'reserved', 'usd_per_gpu_hour': 3.0, 'as_of': '2026-01-02', 'term': None}
    >>> headline_price([{"tier": "spot", "usd_per_gpu_hour": 1.0, "as_of": "2026-01-01"}])
    >>> headline_price([{"tier": "on_demand", "usd_per_gpu_hour": 4.0, "as_of": "2026-01-01"}],
    ...                on_demand=False)
    """
    for tier in HEADLINE_TIER_VALUES:
        if tier == "on_demand" and not on_demand:
            continue
        priced = [p for p in prices if p["tier"] == tier]
        if priced:
            best = min(priced, key=lambda p: float(p["usd_per_gpu_hour"]))
            return {
                "tier": tier,
                "usd_per_gpu_hour": float(best["usd_per_gpu_hour"]),
                "as_of": str(best["as_of"]),
                "term": best.get("term"),
            }
    return None


def measured_fabric_record(m: MeasuredFabric, predicted_busbw_gbs: float | None) -> Record:
    """One published fabric measurement with the model's prediction for the same run.

    ``ratio`` is measured / predicted (None without a prediction); sources carry their dates.
    """
    return {
        "collective": m.collective,
        "message_bytes": m.message_bytes,
        "nodes": m.nodes,
        "gpus_per_node": m.gpus_per_node,
        "gpus": m.gpus,
        "busbw_gbs": m.busbw_gbs,
        "predicted_busbw_gbs": predicted_busbw_gbs,
        "ratio": round(m.busbw_gbs / predicted_busbw_gbs, 3) if predicted_busbw_gbs else None,
        "nccl_version": m.nccl_version,
        "tool": m.tool,
        "in_network_reduction": m.in_network_reduction,
        "degraded": m.degraded,
        "published_on": m.published_on.isoformat() if m.published_on else None,
        "note": m.note,
        "sources": source_refs(m.sources),
    }


def offer_record(
    offer: Offer,
    provider_name: str,
    ratings: Sequence[Rating] = (),
    predicted: Sequence[float | None] = (),
) -> Record:
    """The public offer record; ``ratings`` are its provider's (independent ratings).

    ``predicted`` holds the model's bus bandwidth for each ``measured_fabric`` entry, in order
    (``catalog.measured.predictions``); missing ones are None.
    """
    n = len(offer.measured_fabric)
    guesses = (list(predicted) + [None] * n)[:n]
    return {
        "id": offer.id,
        "provider": offer.provider,
        "provider_name": provider_name,
        "name": offer.name,
        "gpu": offer.gpu,
        "gpus_per_node": offer.gpus_per_node,
        "fabric": offer.fabric.value if offer.fabric else None,
        "fabric_generation": offer.fabric_generation,
        "per_node_gbps": offer.per_node_gbps,
        "gpudirect_rdma": offer.gpudirect_rdma,
        "min_nodes": offer.min_nodes,
        "max_nodes": offer.max_nodes,
        "max_nodes_by_quote": offer.max_nodes_by_quote,
        "regions": list(offer.regions),
        "countries": list(offer.countries),
        "topology": topology_record(offer.topology),
        "orchestration": orchestration_record(offer.orchestration),
        "provisioning": provisioning_record(offer.provisioning),
        "billing": billing_record(offer.billing),
        "discounts": [discount_record(d) for d in offer.discounts],
        "prices": [price_record(p) for p in offer.prices],
        "from_usd_per_gpu_hour": offer.from_usd_per_gpu_hour,
        "headline_price": headline_price(
            [price_record(p) for p in offer.prices], on_demand=offer.on_demand_offered
        ),
        "conflicts": [conflict_record(c) for c in offer.conflicts],
        "ratings": [rating_record(r) for r in ratings],
        "note": offer.note,
        "measured_fabric": [
            measured_fabric_record(m, g)
            for m, g in zip(offer.measured_fabric, guesses, strict=True)
        ],
        "sources": sources_record(offer.field_sources),
    }


def provider_record(provider: Provider, *, with_offers: bool = False) -> Record:
    """The public provider record; the detail view adds ``offers``."""
    record: Record = {
        "slug": provider.slug,
        "name": provider.name,
        "url": provider.url,
        "multi_node": provider.multi_node.value,
        "multi_node_evidence": provider.multi_node_evidence,
        "hq_country": provider.hq_country,
        "regions": list(provider.regions),
        "countries": list(provider.countries),
        "orchestration": orchestration_record(provider.orchestration),
        "provisioning": provisioning_record(provider.provisioning),
        "billing": billing_record(provider.billing),
        "storage": storage_record(provider.storage),
        "discounts": [discount_record(d) for d in provider.discounts],
        "ratings": [rating_record(r) for r in provider.ratings],
        "conflicts": [conflict_record(c) for c in provider.conflicts],
        "offer_count": len(provider.offers),
        "sources": sources_record(provider.field_sources),
    }
    if with_offers:
        record["offers"] = [
            offer_record(o, provider.name, provider.ratings) for o in provider.offers
        ]
    return record


def record_price(record: Mapping[str, Any], tier: str | None = None) -> float | None:
    """Lowest price of an offer record in ``tier``; None for any tier means the from-price.

    >>> r = {"from_usd_per_gpu_hour": 2.0, "prices": [
    ...     {"tier": "spot", "usd_per_gpu_hour": 2.0},
    ...     {"tier": "on_demand", "usd_per_gpu_hour": 6.0}]}
    >>> record_price(r), record_price(r, "on_demand"), record_price(r, "reserved")
    (2.0, 6.0, None)
    """
    if tier is None:
        value = record.get("from_usd_per_gpu_hour")
        return None if value is None else float(value)
    return min(
        (float(p["usd_per_gpu_hour"]) for p in record.get("prices") or () if p["tier"] == tier),
        default=None,
    )
