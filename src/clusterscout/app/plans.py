"""Plans: the planner over the catalog's multi-node offers, from a plan body of the fields table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.app.estimates import require_finite, stored_calibration
from clusterscout.app.inputs import parse_plan
from clusterscout.app.offers import find_offers, gpu_names, gpu_specs
from clusterscout.catalog.filters import OfferFilter
from clusterscout.catalog.measured import usable
from clusterscout.catalog.records import record_price
from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.model.planner.plan import plan
from clusterscout.model.planner.request import PlanRequest
from clusterscout.model.planner.results import FabricBasis, PlanOffer, PlanResult

TIER_PREFERENCE: Final = ("on_demand", "reserved", "capacity_block", "spot")
"""Which price the planner uses: what a buyer can actually pay for a multi-week run, in order."""


def _chosen_price(
    record: Mapping[str, Any], tiers: Sequence[str] = TIER_PREFERENCE
) -> tuple[float | None, str | None]:
    for tier in tiers:
        price = record_price(record, tier)
        if price is not None:
            return price, tier
    return None, None


def on_demand_trusted(record: Mapping[str, Any]) -> bool:
    """False when the offer's on-demand price cannot be taken as on-demand.

    That is when its provisioning says there are no on-demand clusters, or a recorded source
    conflict about its provisioning concerns it (Crusoe's list prices against its
    reservation-only FAQ, for one).
    """
    if (record.get("provisioning") or {}).get("on_demand_clusters") is False:
        return False
    return not any("provisioning" in (c.get("about") or ()) for c in record.get("conflicts") or ())


def minimum_hours(record: Mapping[str, Any], tier: str | None) -> float | None:
    """Least hours a run of this offer pays: its billing minimum, or the chosen price's term.

    A termed price (a 2-week 1-Click Cluster, a 1-year reservation) is paid for its whole term.
    """
    billing = (record.get("billing") or {}).get("minimum_hours")
    terms = [
        24 * p["term_days"]
        for p in record.get("prices") or ()
        if p["tier"] == tier
        and p.get("term_days")
        and p["usd_per_gpu_hour"] == record_price(record, tier)
    ]
    found = [h for h in (billing, *terms) if h]
    return max(found) if found else None


def reach(record: Mapping[str, Any]) -> int | None:
    """The most nodes an offer record sells, listed or by quote; None when unknown."""
    counts = [n for n in (record.get("max_nodes"), record.get("max_nodes_by_quote")) if n]
    return max(counts) if counts else None


def fabric_basis(record: Mapping[str, Any]) -> FabricBasis | None:
    """The published all-reduce run a plan's network figure rests on, or None.

    Only a run with the model's prediction beside it counts (``catalog.measured.usable``):
    the planner scales the advertised bandwidth by measured / predicted, capped at 1.
    """
    m = usable(record.get("measured_fabric") or [])
    if m is None or not m["predicted_busbw_gbs"]:
        return None
    return FabricBasis(
        busbw_gbs=m["busbw_gbs"],
        predicted_busbw_gbs=m["predicted_busbw_gbs"],
        factor=min(1.0, m["busbw_gbs"] / m["predicted_busbw_gbs"]),
        collective=m["collective"],
        nodes=m["nodes"],
        gpus_per_node=m["gpus_per_node"],
        message_bytes=m["message_bytes"],
        source_url=m["sources"][0]["url"],
    )


def plan_offer(record: Mapping[str, Any], tier: str | None = None) -> PlanOffer:
    """The planner's view of an offer record: reach, fabric and the price a run would pay.

    The price is ``tier``'s when given, else the first tier of ``TIER_PREFERENCE`` it has. An
    on-demand price is passed over when sources say the offer has no on-demand clusters or
    disagree about its provisioning: a run could not be started at that price.
    """
    tiers: Sequence[str] = (tier,) if tier else TIER_PREFERENCE
    if not on_demand_trusted(record):
        tiers = [t for t in tiers if t != "on_demand"]
    price, tier = _chosen_price(record, tiers)
    fabric = record.get("fabric")
    advertised = record.get("per_node_gbps")
    basis = fabric_basis(record) if advertised else None
    return PlanOffer(
        offer_id=record["id"],
        provider=record["provider"],
        gpu=record["gpu"],
        gpus_per_node=record.get("gpus_per_node"),
        fabric=FabricKind(fabric) if fabric else None,
        per_node_gbps=advertised * basis.factor if advertised and basis else advertised,
        gpudirect_rdma=record.get("gpudirect_rdma"),
        max_nodes=reach(record),
        usd_per_gpu_hour=price,
        price_tier=tier,
        minimum_hours=minimum_hours(record, tier),
        advertised_gbps=advertised if basis else None,
        measured=basis,
    )


def plan_inputs(
    conn: Connection, body: Any
) -> tuple[PlanRequest, OfferFilter, list[dict[str, Any]]]:
    """The request, the offer filter and the offer records of a plan body.

    Raises:
        InputError: naming the field at fault (filters included).
    """
    request, filter_params = parse_plan(body)
    f, _, page = find_offers(conn, filter_params)
    return request, f, page.records


def rentable_gpus(conn: Connection) -> tuple[GpuSpec, ...]:
    """GPU models that some offer sells; the verdict is about what can be rented.

    Falls back to every known GPU when no offer names one (an empty catalog).
    """
    offered = set(gpu_names(conn))
    specs = gpu_specs(conn)
    return tuple(g for g in specs if g.name in offered) or specs


def run_plan(conn: Connection, body: Any) -> PlanResult:
    """Plan a training job over the catalog's multi-node offers.

    Raises:
        InputError: naming the field at fault.
        CalibrationError: when the database has no calibration.
    """
    request, f, records = plan_inputs(conn, body)
    tier = f.price_tier.value if f.price_tier else None
    offers = [plan_offer(r, tier) for r in records]
    result = plan(request, offers, rentable_gpus(conn), stored_calibration(conn))
    require_finite(result, "plan")
    return result
