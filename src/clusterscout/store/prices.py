"""Price observations: append-only history and the current price derived from it."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, func, select, update

from clusterscout.catalog.records import headline_price, on_demand_offered, record_price
from clusterscout.domain.models import PriceTier
from clusterscout.store.tables import TIER_PRICE_COLUMNS, meta, offers, price_observations

CATALOG_FEED = "catalog"


@dataclass(frozen=True, slots=True)
class Observation:
    """One price seen for an offer, by a feed, at a time."""

    offer_id: str
    tier: str
    usd_per_gpu_hour: float
    as_of: date
    observed_at: datetime
    feed: str
    source_url: str
    term: str | None = None
    source_checked_on: date | None = None
    source_kind: str | None = None
    term_days: int | None = None
    prepay: bool | None = None
    note: str | None = None

    def row(self) -> dict[str, Any]:
        """Column values for an insert."""
        return {
            "offer_id": self.offer_id,
            "tier": self.tier,
            "term": self.term,
            "usd_per_gpu_hour": self.usd_per_gpu_hour,
            "as_of": self.as_of,
            "observed_at": self.observed_at,
            "feed": self.feed,
            "source_url": self.source_url,
            "source_checked_on": self.source_checked_on,
            "source_kind": self.source_kind,
            "term_days": self.term_days,
            "prepay": self.prepay,
            "note": self.note,
        }


def append(conn: Connection, observations: Sequence[Observation]) -> None:
    """Insert observations; history is never updated or deleted here."""
    if observations:
        conn.execute(price_observations.insert(), [o.row() for o in observations])


def _row_to_price(row: Any) -> dict[str, Any]:
    checked = row.source_checked_on or row.as_of
    return {
        "tier": row.tier,
        "usd_per_gpu_hour": row.usd_per_gpu_hour,
        "term": row.term,
        "term_days": row.term_days,
        "prepay": row.prepay,
        "as_of": row.as_of.isoformat(),
        "source": {
            "url": row.source_url,
            "checked_on": checked.isoformat(),
            # Rows recorded before migration 0004 have no kind: none of them can be vouched for.
            "kind": row.source_kind or "secondary",
            # A price's own date is its as_of; observations keep no separate page date.
            "published_on": None,
        },
        "note": row.note,
        "feed": row.feed,
        "observed_at": _iso(row.observed_at),
    }


def _iso(value: datetime) -> str:
    return value.isoformat()


def current_prices(conn: Connection, offer_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """Newest observation per (offer, tier, term), keyed by offer id.

    Newest means the latest ``as_of``, ties broken by ``observed_at`` then insertion order.
    """
    ids = list(offer_ids)
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if not ids:
        return out
    rows = conn.execute(
        select(price_observations)
        .where(price_observations.c.offer_id.in_(ids))
        .order_by(
            price_observations.c.offer_id,
            price_observations.c.as_of.desc(),
            price_observations.c.observed_at.desc(),
            price_observations.c.id.desc(),
        )
    ).all()
    seen: set[tuple[str, str, str | None]] = set()
    for row in rows:
        key = (row.offer_id, row.tier, row.term)
        if key in seen:
            continue
        seen.add(key)
        out[row.offer_id].append(_row_to_price(row))
    tier_order = {"on_demand": 0, "spot": 1, "capacity_block": 2, "reserved": 3}
    for prices in out.values():
        prices.sort(key=lambda p: (tier_order.get(p["tier"], 9), p["usd_per_gpu_hour"]))
    return out


def history(conn: Connection, offer_id: str) -> list[dict[str, Any]]:
    """Every observation of an offer, newest first."""
    rows = conn.execute(
        select(price_observations)
        .where(price_observations.c.offer_id == offer_id)
        .order_by(
            price_observations.c.observed_at.desc(),
            price_observations.c.as_of.desc(),
            price_observations.c.id.desc(),
        )
    ).all()
    return [_row_to_price(r) for r in rows]


def refresh_current(conn: Connection, offer_ids: Iterable[str]) -> None:
    """Rewrite the denormalised current prices (record JSON and from-price column) of offers."""
    ids = list(offer_ids)
    current = current_prices(conn, ids)
    rows = conn.execute(select(offers.c.id, offers.c.record_json).where(offers.c.id.in_(ids))).all()
    for row in rows:
        record = json.loads(row.record_json)
        prices = current.get(row.id, [])
        record["prices"] = prices
        low = min((p["usd_per_gpu_hour"] for p in prices), default=None)
        record["from_usd_per_gpu_hour"] = low
        offered = on_demand_offered(record)
        per_tier = {
            # An on-demand list price of clusters not rented on demand fails that tier's filter.
            column: record_price(record, tier.value)
            if offered or tier is not PriceTier.ON_DEMAND
            else None
            for tier, column in TIER_PRICE_COLUMNS.items()
        }
        headline = headline_price(prices, on_demand=offered)
        record["headline_price"] = headline
        if prices:
            record["sources"]["prices"] = list(
                {p["source"]["url"]: p["source"] for p in prices}.values()
            )
        conn.execute(
            update(offers)
            .where(offers.c.id == row.id)
            .values(
                record_json=json.dumps(record),
                from_usd_per_gpu_hour=low,
                headline_usd_per_gpu_hour=headline["usd_per_gpu_hour"] if headline else None,
                headline_as_of=date.fromisoformat(headline["as_of"]) if headline else None,
                **per_tier,
            )
        )


def with_freshness(
    prices: Iterable[dict[str, Any]], today: date, stale_after_days: int
) -> list[dict[str, Any]]:
    """Copies of price dicts with ``age_days`` (days since ``as_of``) and ``stale``.

    A price is stale when it is older than ``stale_after_days`` (Settings.stale_after_days,
    default 30). Used by the CLI, the API and the pages so all three mark the same prices.
    """
    out = []
    for p in prices:
        as_of = p["as_of"]
        day = as_of if isinstance(as_of, date) else date.fromisoformat(str(as_of))
        age = (today - day).days
        out.append({**p, "age_days": age, "stale": age > stale_after_days})
    return out


def price_history_view(
    conn: Connection, offer_id: str, today: date, stale_after_days: int
) -> dict[str, Any] | None:
    """Everything ``GET /api/v1/offers/{id}/prices`` and the price-history chart need.

    Returns None for an unknown offer. Otherwise::

        {"offer_id": str,
         "stale_after_days": int,
         "current": [price, ...],        # newest per tier and term, with age_days and stale
         "observations": [price, ...],   # every observation, newest first, with age_days, stale
         "series": [{"tier", "term", "points": [{"as_of", "usd_per_gpu_hour", "feed",
                                                  "observed_at"}, ...]}]}  # oldest point first

    Each price is ``{tier, usd_per_gpu_hour, term, as_of, source{url, checked_on}, note, feed,
    observed_at, age_days, stale}`` with ISO date strings. ``series`` has one line per (tier,
    term) for the chart; its points are in time order, so a text alternative can list them.
    """
    if conn.execute(select(offers.c.id).where(offers.c.id == offer_id)).first() is None:
        return None
    observations = with_freshness(history(conn, offer_id), today, stale_after_days)
    current = with_freshness(
        current_prices(conn, [offer_id]).get(offer_id, []), today, stale_after_days
    )
    lines: dict[tuple[str, str | None], list[dict[str, Any]]] = defaultdict(list)
    for p in reversed(observations):
        lines[(p["tier"], p["term"])].append(
            {
                "as_of": p["as_of"],
                "usd_per_gpu_hour": p["usd_per_gpu_hour"],
                "feed": p["feed"],
                "observed_at": p["observed_at"],
            }
        )
    series = [
        {"tier": tier, "term": term, "points": sorted(points, key=lambda q: q["as_of"])}
        for (tier, term), points in sorted(lines.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))
    ]
    return {
        "offer_id": offer_id,
        "stale_after_days": stale_after_days,
        "current": current,
        "observations": observations,
        "series": series,
    }


def stale_prices(conn: Connection, today: date, stale_after_days: int) -> list[dict[str, Any]]:
    """Current prices older than ``stale_after_days``, oldest first.

    Each is a price dict (see :func:`price_history_view`) plus ``offer_id`` and ``provider``.
    """
    rows = conn.execute(select(offers.c.id, offers.c.provider)).all()
    provider_of = {r.id: r.provider for r in rows}
    current = current_prices(conn, provider_of)
    out = [
        {**p, "offer_id": offer_id, "provider": provider_of[offer_id]}
        for offer_id, prices in current.items()
        for p in with_freshness(prices, today, stale_after_days)
        if p["stale"]
    ]
    out.sort(key=lambda p: (p["provider"], p["as_of"], p["offer_id"], p["tier"]))
    return out


def publish_data_version(conn: Connection) -> str:
    """Write the data version of what the database now serves, in the caller's transaction.

    It is the catalog's content hash (every data/ file, calibration included) plus, once feeds
    have added prices, a digest of those observations. Written in the same transaction as the
    data it describes, it is published atomically with it: a reader's snapshot holds both or
    neither. A rebuild of the same catalog keeps the feed part, so it never returns to the
    version that went with older prices; the same content always gives the same version.
    """
    rows = {
        r.key: r.value
        for r in conn.execute(
            select(meta.c.key, meta.c.value).where(
                meta.c.key.in_(("catalog_version", "data_version"))
            )
        )
    }
    catalog = rows.get("catalog_version") or rows.get("data_version", "unbuilt").split("+", 1)[0]
    count, newest, total = conn.execute(
        select(
            func.count(), func.max(price_observations.c.id), func.sum(price_observations.c.id)
        ).where(price_observations.c.feed != CATALOG_FEED)
    ).one()
    version = catalog
    if count:
        digest = hashlib.sha256(f"{count}:{newest}:{total}".encode()).hexdigest()[:8]
        version = f"{catalog}+{digest}"
    for key, value in (("catalog_version", catalog), ("data_version", version)):
        if key in rows:
            conn.execute(update(meta).where(meta.c.key == key).values(value=value))
        else:
            conn.execute(meta.insert().values(key=key, value=value))
    return str(version)


def every_observation(conn: Connection) -> list[dict[str, Any]]:
    """Every price observation of every stored offer, by offer, tier, term and time.

    Each is a price dict (see :func:`price_history_view`, without freshness) plus ``offer_id``,
    ``provider`` and ``current`` (the observation ``current_prices`` picks for its line).
    """
    provider_of = {r.id: r.provider for r in conn.execute(select(offers.c.id, offers.c.provider))}
    o = price_observations.c
    rows = conn.execute(
        select(price_observations)
        .where(o.offer_id.in_(list(provider_of)))
        .order_by(o.offer_id, o.tier, o.term, o.as_of, o.observed_at, o.id)
    ).all()
    # The newest of each line is the last one in this order (current_prices' ordering).
    last = {(r.offer_id, r.tier, r.term): r.id for r in rows}
    return [
        {
            **_row_to_price(r),
            "offer_id": r.offer_id,
            "provider": provider_of[r.offer_id],
            "current": last[(r.offer_id, r.tier, r.term)] == r.id,
        }
        for r in rows
    ]
