"""Plans: the planner over the catalog's multi-node offers, from a plan body of the fields table."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.app.estimates import require_finite, stored_calibration
from clusterscout.app.inputs import parse_plan
from clusterscout.app.market import market_references, on_demand_trusted
from clusterscout.app.offers import find_offers, gpu_names, gpu_specs, list_providers
from clusterscout.catalog.brackets import BRACKETS_META_KEY, Brackets, brackets_from_json
from clusterscout.catalog.filters import OfferFilter
from clusterscout.catalog.measured import usable
from clusterscout.catalog.records import record_price
from clusterscout.catalog.reliability import default_reliability
from clusterscout.domain.brackets import FabricBracket, NodeSize, assume_network, node_size_for
from clusterscout.domain.errors import InputError
from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.model.planner.plan import plan
from clusterscout.model.planner.request import PlanRequest
from clusterscout.model.planner.results import FabricBasis, PlanOffer, PlanResult
from clusterscout.store import queries

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


_BILLING_STEP_HOURS: Final = {
    "per_hour": 1.0,
    "per_day": 24.0,
    "per_week": 168.0,
    "per_month": 730.0,
}
"""Billing granularities that round a run up (finer ones are not worth modelling)."""


def reach(record: Mapping[str, Any]) -> int | None:
    """The most nodes an offer record sells, listed or by quote; None when unknown."""
    counts = [n for n in (record.get("max_nodes"), record.get("max_nodes_by_quote")) if n]
    return max(counts) if counts else None


def price_as_of(record: Mapping[str, Any], tier: str | None, price: float | None) -> str | None:
    """The observation date of the price a plan uses (the newest of equal prices), or None."""
    days = [
        str(p["as_of"])
        for p in record.get("prices") or ()
        if p["tier"] == tier
        and p.get("as_of")
        and price is not None
        and float(p["usd_per_gpu_hour"]) == price
    ]
    return max(days) if days else None


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


def plan_offer(
    record: Mapping[str, Any],
    tier: str | None = None,
    brackets: Sequence[FabricBracket] = (),
    buyer_price: float | None = None,
    sizes: Sequence[NodeSize] = (),
    storage: Mapping[str, Any] | None = None,
) -> PlanOffer:
    """The planner's view of an offer record: reach, fabric and the price a run would pay.

    The price is ``tier``'s when given, else the first tier of ``TIER_PREFERENCE`` it has. An
    on-demand price is passed over when sources say the offer has no on-demand clusters or
    disagree about its provisioning: a run could not be started at that price. A buyer's price
    (a quote the buyer holds) replaces it. Unknown network facts are assumed from ``brackets``
    (``assume_network``), and an unstated node size from its generation's standard board
    (``sizes``); known ones are kept.
    """
    tiers: Sequence[str] = (tier,) if tier else TIER_PREFERENCE
    if not on_demand_trusted(record):
        tiers = [t for t in tiers if t != "on_demand"]
    price, tier = _chosen_price(record, tiers)
    as_of = price_as_of(record, tier, price)
    source = None if price is None else "published"
    if buyer_price is not None:
        price, tier, as_of, source = buyer_price, None, None, "buyer"
    fabric = record.get("fabric")
    kind = FabricKind(fabric) if fabric else None
    assumed = assume_network(
        brackets, record["gpu"], kind, record.get("per_node_gbps"), record.get("gpudirect_rdma")
    )
    billing = record.get("billing") or {}
    step = _BILLING_STEP_HOURS.get(billing.get("granularity") or "")
    term = minimum_hours(record, tier)
    per_node = record.get("gpus_per_node")
    size = node_size_for(sizes, record["gpu"]) if per_node is None else None
    advertised = record.get("per_node_gbps")
    basis = fabric_basis(record) if advertised else None
    return PlanOffer(
        offer_id=record["id"],
        provider=record["provider"],
        gpu=record["gpu"],
        gpus_per_node=size.gpus_per_node if size else per_node,
        gpus_per_node_assumed=size is not None,
        fabric=FabricKind(fabric) if fabric else None,
        per_node_gbps=advertised * basis.factor if advertised and basis else advertised,
        gpudirect_rdma=record.get("gpudirect_rdma"),
        max_nodes=reach(record),
        usd_per_gpu_hour=price,
        price_tier=tier,
        minimum_hours=term,
        billing_increment_hours=step,
        billing_known=bool(billing.get("granularity") or term),
        assumed=assumed,
        price_source=source,
        price_as_of=as_of,
        storage_usd_per_gib_month=(storage or {}).get("usd_per_gib_month"),
        egress_usd_per_gib=(storage or {}).get("egress_usd_per_gib"),
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
    # ``prices`` names offers, not a job or a filter: run_plan reads it once the offers are known.
    rest = {k: v for k, v in body.items() if k != "prices"} if isinstance(body, Mapping) else body
    request, filter_params = parse_plan(rest)
    f, _, page = find_offers(conn, filter_params)
    return request, f, page.records


def rentable_gpus(conn: Connection) -> tuple[GpuSpec, ...]:
    """GPU models that some offer sells; the verdict is about what can be rented.

    Falls back to every known GPU when no offer names one (an empty catalog).
    """
    offered = set(gpu_names(conn))
    specs = gpu_specs(conn)
    return tuple(g for g in specs if g.name in offered) or specs


def stored_brackets(conn: Connection) -> Brackets:
    """The fabric brackets and node sizes saved with the build (none when built without)."""
    raw = queries.meta_value(conn, BRACKETS_META_KEY)
    if not raw:
        return (), ()
    return queries.per_version(conn, "brackets", lambda: brackets_from_json(json.loads(raw)))


MAX_BUYER_PRICE: Final = 1000.0
"""USD per GPU-hour above which an entered price is taken for a typo (no GPU rents near it)."""


def buyer_prices(body: Any, records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """``prices`` of a plan body: offer id -> USD per GPU-hour the buyer was quoted.

    Raises:
        InputError: (field ``prices``) for a non-object, an offer the plan does not consider,
            or a price that is not a positive number up to ``MAX_BUYER_PRICE``.
    """
    raw = body.get("prices") if isinstance(body, Mapping) else None
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError("prices", "prices must be an object of offer id -> USD per GPU-hour")
    known = {str(r["id"]) for r in records}
    out: dict[str, float] = {}
    for offer_id, value in raw.items():
        if offer_id not in known:
            msg = f"{offer_id!r} is not an offer this plan considers"
            raise InputError("prices", msg)
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise InputError("prices", f"{offer_id!r} needs a number")
        try:
            usd = float(value)
        except ValueError:
            raise InputError("prices", f"{offer_id!r} needs a number") from None
        if not (0 < usd <= MAX_BUYER_PRICE):  # also refuses NaN
            msg = f"{offer_id!r} must be above 0 and at most {MAX_BUYER_PRICE:g} USD"
            raise InputError("prices", msg)
        out[str(offer_id)] = usd
    return out


def market_records(conn: Connection) -> list[dict[str, Any]]:
    """Every multi-node offer record: what a market reference is drawn from."""
    _, _, page = find_offers(conn, {"multi_node": ["true"]})
    return page.records


def run_plan(conn: Connection, body: Any) -> PlanResult:
    """Plan a training job over the catalog's multi-node offers.

    Raises:
        InputError: naming the field at fault.
        CalibrationError: when the database has no calibration.
    """
    request, f, records = plan_inputs(conn, body)
    tier = f.price_tier.value if f.price_tier else None
    brackets, sizes = stored_brackets(conn)
    entered = buyer_prices(body, records)
    # The all-in cost needs each provider's storage and egress prices.
    storage = {p["slug"]: p.get("storage") for p in list_providers(conn, None).records}
    offers = [
        plan_offer(r, tier, brackets, entered.get(r["id"]), sizes, storage.get(r["provider"]))
        for r in records
    ]
    result = plan(
        request, offers, rentable_gpus(conn), stored_calibration(conn), default_reliability()
    )
    if result.on_request:
        refs = market_references(market_records(conn))
        wanted = {o.offer.gpu for o in result.on_request}
        result = replace(
            result,
            market_references={g: r.to_dict() for g, r in refs.items() if g in wanted},
        )
    require_finite(result, "plan")
    return result
