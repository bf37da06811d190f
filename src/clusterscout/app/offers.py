"""Catalog queries: offers by the fields table's filters, providers, comparisons, freshness."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Connection

from clusterscout.app.inputs import parse_offer_filter
from clusterscout.catalog.filters import OfferFilter, SortKey, parse_sort
from clusterscout.domain.errors import InputError
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import GpuSpec, MultiNode
from clusterscout.domain.regions import RegionIndex
from clusterscout.store import queries, tally
from clusterscout.store.prices import with_freshness
from clusterscout.store.queries import Page
from clusterscout.store.tally import Tally

__all__ = [
    "Page",
    "Tally",
    "compare_offer_records",
    "compare_records",
    "count_offers",
    "find_offers",
    "gpu_index",
    "gpu_names",
    "gpu_specs",
    "list_providers",
    "mark_freshness",
    "parse_offer_query",
    "provider",
    "rating_editions",
    "region_index",
    "tallies",
]

MAX_COMPARED_OFFERS = 6
"""Offers side by side on the compare page: six columns still read on a laptop."""

COUNTED_COLUMNS = frozenset({"gpu", "fabric", "provider", "clustermax"})
"""Filters whose facet counts are one tally per value of a column (the others: one tally per
value, each with that value ticked)."""


def gpu_specs(conn: Connection) -> tuple[GpuSpec, ...]:
    """GPU reference data stored with the build."""
    return queries.gpu_specs(conn)


def gpu_index(conn: Connection) -> GpuIndex:
    """The GPU index over the stored reference data and every GPU that has an offer."""
    return queries.gpu_index(conn)


def gpu_names(conn: Connection) -> list[str]:
    """GPU models that have at least one offer."""
    return queries.gpu_names(conn)


def parse_offer_query(
    conn: Connection, params: Mapping[str, Sequence[str]]
) -> tuple[OfferFilter, SortKey]:
    """Filter and sort from raw parameters (query string or CLI), validated against the store."""
    params = dict(params)
    sort_values = params.pop("sort", [])
    sort = parse_sort(sort_values[-1] if sort_values else None)
    known = queries.provider_slugs(conn)
    f = parse_offer_filter(
        params, gpu_index(conn).canonical, known.__contains__, queries.region_index(conn)
    )
    return f, sort


def find_offers(
    conn: Connection,
    params: Mapping[str, Sequence[str]],
    limit: int | None = None,
    offset: int = 0,
) -> tuple[OfferFilter, SortKey, Page]:
    """Parse, then run the one offer query."""
    f, sort = parse_offer_query(conn, params)
    return f, sort, queries.list_offers(conn, f, sort, limit, offset)


def region_index(conn: Connection) -> RegionIndex:
    """Areas, countries and provider regions stored with the build."""
    return queries.region_index(conn)


def count_offers(conn: Connection, f: OfferFilter) -> int:
    """How many offers match ``f``."""
    return queries.count_offers(conn, f)


def tallies(conn: Connection, asks: Sequence[Tally]) -> list[dict[str | None, int]]:
    """Counts from the in-memory fact index: per ask, offers per value of its column (``None``:
    the value is unknown, or the ask has no column and this is its one count)."""
    return tally.tallies(conn, asks)


def list_providers(conn: Connection, multi_node: MultiNode | None = None) -> Page:
    """Providers, optionally by multi-node status, by name."""
    return queries.list_providers(conn, multi_node)


def provider(conn: Connection, slug: str) -> dict[str, Any] | None:
    """One provider with its offers, or None."""
    return queries.get_provider(conn, slug)


def rating_editions(conn: Connection) -> list[dict[str, Any]]:
    """Editions of independent ratings in the catalog, newest first: ``{rater, edition,
    published_on, sources}``. A provider absent from an edition was not rated in it."""
    return queries.rating_editions(conn)


def compare_records(conn: Connection, slugs: Sequence[str]) -> list[dict[str, Any]]:
    """Provider records (with offers) for a comparison, sorted by slug, duplicates removed.

    Raises:
        InputError: (field ``provider``) when fewer than two or more than four distinct
            providers are asked for, or a slug is unknown.
    """
    wanted = sorted(dict.fromkeys(s.strip().lower() for s in slugs if s.strip()))
    known = queries.provider_slugs(conn)
    missing = [s for s in wanted if s not in known]
    if missing:
        raise InputError("provider", f"unknown provider(s): {', '.join(missing)}")
    if not 2 <= len(wanted) <= 4:
        msg = f"compare needs 2 to 4 distinct providers, got {len(wanted)}"
        raise InputError("provider", msg)
    return queries.get_providers(conn, wanted)


def compare_offer_records(conn: Connection, ids: Sequence[str]) -> list[dict[str, Any]]:
    """Offer records for a comparison, in the order asked, duplicates removed.

    Raises:
        InputError: (field ``o``) when no id or more than ``MAX_COMPARED_OFFERS`` distinct
            ids are asked for, or an id is unknown.
    """
    wanted = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
    if not 1 <= len(wanted) <= MAX_COMPARED_OFFERS:
        msg = f"compare needs 1 to {MAX_COMPARED_OFFERS} distinct offer ids, got {len(wanted)}"
        raise InputError("o", msg)
    by_id = {r["id"]: r for r in queries.list_offers(conn, OfferFilter(), SortKey.PRICE).records}
    missing = [i for i in wanted if i not in by_id]
    if missing:
        raise InputError("o", f"unknown offer id(s): {', '.join(m[:80] for m in missing)}")
    return [by_id[i] for i in wanted]


def mark_freshness(
    records: list[dict[str, Any]], stale_after_days: int, today: date | None = None
) -> list[dict[str, Any]]:
    """Add ``age_days`` and ``stale`` to every price of offer records (in place; returned).

    Provider detail records are handled too: their offers' prices are marked.
    """
    today = today or datetime.now(UTC).date()
    for record in records:
        for offer in [record, *record.get("offers", [])]:
            if "prices" in offer:
                offer["prices"] = with_freshness(offer["prices"], today, stale_after_days)
            if offer.get("headline_price"):
                (offer["headline_price"],) = with_freshness(
                    [offer["headline_price"]], today, stale_after_days
                )
                offer["headline_price"].pop("age_days")
    return records
