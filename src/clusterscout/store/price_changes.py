"""Price changes: consecutive observations of one offer, tier and term whose price differs."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from clusterscout.store.tables import offers, price_observations, providers


def price_changes(
    conn: Connection, provider: str | None = None, gpu: str | None = None
) -> list[dict[str, Any]]:
    """Every price change in the history, newest first, optionally of one provider or GPU.

    Observations of an offer, tier and term are read in time order (``as_of``, then
    ``observed_at`` and insertion order, as ``current_prices`` picks the newest); each one whose
    price differs from the one before is a change. Each change is ``{on (ISO date), offer_id,
    provider, provider_name, gpu, tier, term, old_usd_per_gpu_hour, new_usd_per_gpu_hour,
    source_url, feed}``.
    """
    o, p = offers, price_observations
    query = (
        select(
            p.c.offer_id,
            p.c.tier,
            p.c.term,
            p.c.usd_per_gpu_hour,
            p.c.as_of,
            p.c.source_url,
            p.c.feed,
            o.c.provider,
            o.c.provider_name,
            o.c.gpu,
        )
        .join(o, o.c.id == p.c.offer_id)
        .order_by(p.c.offer_id, p.c.tier, p.c.term, p.c.as_of, p.c.observed_at, p.c.id)
    )
    if provider is not None:
        query = query.where(o.c.provider == provider)
    if gpu is not None:
        query = query.where(o.c.gpu == gpu)
    out: list[dict[str, Any]] = []
    previous: Any = None
    for row in conn.execute(query):
        same_line = previous is not None and (previous.offer_id, previous.tier, previous.term) == (
            row.offer_id,
            row.tier,
            row.term,
        )
        if same_line and row.usd_per_gpu_hour != previous.usd_per_gpu_hour:
            out.append(
                {
                    "on": row.as_of.isoformat(),
                    "offer_id": row.offer_id,
                    "provider": row.provider,
                    "provider_name": row.provider_name,
                    "gpu": row.gpu,
                    "tier": row.tier,
                    "term": row.term,
                    "old_usd_per_gpu_hour": previous.usd_per_gpu_hour,
                    "new_usd_per_gpu_hour": row.usd_per_gpu_hour,
                    "source_url": row.source_url,
                    "feed": row.feed,
                }
            )
        previous = row
    out.sort(key=lambda c: (c["on"], c["offer_id"], c["tier"]), reverse=True)
    return out


def offer_gpus(conn: Connection) -> dict[str, tuple[str, str]]:
    """``offer id -> (provider slug, GPU)`` of every stored offer."""
    rows = conn.execute(select(offers.c.id, offers.c.provider, offers.c.gpu))
    return {r.id: (r.provider, r.gpu) for r in rows}


def provider_names(conn: Connection) -> dict[str, str]:
    """``provider slug -> name`` of every stored provider."""
    return {r.slug: r.name for r in conn.execute(select(providers.c.slug, providers.c.name))}
