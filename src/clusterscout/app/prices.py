"""Prices over time: an offer's history, stale facts and prices, and refreshing from feeds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection, Engine

from clusterscout.catalog.checks import STALE_AFTER_DAYS
from clusterscout.feeds import registry
from clusterscout.feeds.base import Feed
from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.runner import (
    DEFAULT_MAX_PRICE_FACTOR,
    STAGES,
    ChangeKind,
    FeedReport,
    OnStage,
    Stage,
    run_feeds,
)
from clusterscout.store import queries
from clusterscout.store.prices import price_history_view, stale_prices

__all__ = [
    "ALL_FEEDS",
    "FACTS_STALE_AFTER_DAYS",
    "OLD_PAGE_AFTER_DAYS",
    "STAGES",
    "ChangeKind",
    "Feed",
    "FeedReport",
    "Stage",
    "Staleness",
    "feed_names",
    "history",
    "refresh",
    "select_feeds",
    "stale",
]

ALL_FEEDS: Final = registry.ALL
FACTS_STALE_AFTER_DAYS: Final = STALE_AFTER_DAYS
OLD_PAGE_AFTER_DAYS: Final = 730
"""A page dated over two years ago may describe hardware or terms that have since changed."""


def history(
    conn: Connection, offer_id: str, today: date, stale_after_days: int
) -> dict[str, Any] | None:
    """Every price observation of an offer (newest first), the current ones and the series."""
    return price_history_view(conn, offer_id, today, stale_after_days)


@dataclass(frozen=True, slots=True)
class Staleness:
    """What to re-check: facts not read lately, prices not observed lately, old pages."""

    facts: list[dict[str, Any]]
    prices: list[dict[str, Any]]
    old_pages: list[dict[str, Any]]


def stale(conn: Connection, today: date, prices_after_days: int) -> Staleness:
    """Facts checked over FACTS_STALE_AFTER_DAYS ago, prices older than the given days, and
    facts resting only on pages dated over OLD_PAGE_AFTER_DAYS ago."""
    return Staleness(
        facts=queries.stale_facts(conn, today, FACTS_STALE_AFTER_DAYS),
        prices=stale_prices(conn, today, prices_after_days),
        old_pages=queries.old_page_facts(conn, today, OLD_PAGE_AFTER_DAYS),
    )


def feed_names() -> list[str]:
    """The feeds ``refresh`` can run, sorted."""
    return registry.names()


def select_feeds(source: str, has_input: bool) -> list[Feed]:
    """The feeds named by ``source`` (``all``: every feed that needs no input file).

    Raises:
        KeyError: for an unknown name.
        ValueError: for ``all`` together with an input file.
    """
    return registry.select_feeds(source, has_input)


def refresh(
    engine: Engine,
    feeds: Sequence[Feed],
    source: Path | None,
    *,
    dry_run: bool,
    now: datetime,
    as_of: date | None,
    on_stage: OnStage,
    allow_price_jumps: bool = False,
    allow_missing_newline: bool = False,
) -> list[FeedReport]:
    """Apply each feed in a transaction of its own; a failed feed never stops the next.

    A feed whose prices move by DEFAULT_MAX_PRICE_FACTOR or more, or a CSV file without a
    final newline, is held (nothing applied) unless the matching ``allow_*`` flag is set.
    """
    if allow_missing_newline:
        feeds = [replace(f, allow_missing_newline=True) if isinstance(f, FileFeed) else f
                 for f in feeds]  # fmt: skip
    return run_feeds(
        engine,
        feeds,
        source,
        dry_run=dry_run,
        now=now,
        as_of=as_of,
        on_stage=on_stage,
        max_price_factor=None if allow_price_jumps else DEFAULT_MAX_PRICE_FACTOR,
    )
