"""Apply feeds to the store: one transaction per feed, failures recorded, never half-applied."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from enum import StrEnum
from pathlib import Path

from sqlalchemy import Connection, Engine, insert

from clusterscout.feeds.base import Feed, FeedBatch, FeedError, FeedHeldError
from clusterscout.feeds.match import MatchResult, OfferIndex, Unmatched, match_items
from clusterscout.store.prices import (
    Observation,
    append,
    current_prices,
    publish_data_version,
    refresh_current,
)
from clusterscout.store.tables import feed_runs

# Prices equal to within this many USD per GPU-hour count as unchanged.
PRICE_EPSILON_USD = 1e-6
DEFAULT_MAX_PRICE_FACTOR = 2.0
"""A new price at least this many times the current one, or at most its inverse, is held."""
SHOWN_JUMPS = 5


class Stage(StrEnum):
    """Steps of one feed, in order: each advances its progress bar by one."""

    READ = "reading"
    MATCH = "matching"
    WRITE = "writing"
    DONE = "done"


STAGES = tuple(Stage)
OnStage = Callable[[str, Stage], None]


class ChangeKind(StrEnum):
    """How an observation compares with the offer's current price for that tier."""

    NEW = "new"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    # Dated before the current price: kept in the history, the current price stays.
    OLDER = "older"


@dataclass(frozen=True, slots=True)
class PriceChange:
    """One observation a feed added, against the price that was current before."""

    offer_id: str
    tier: str
    term: str | None
    old_usd_per_gpu_hour: float | None
    new_usd_per_gpu_hour: float
    kind: ChangeKind


@dataclass(slots=True)
class FeedReport:
    """What one feed did (or would have done, in a dry run)."""

    feed: str
    ok: bool
    message: str | None = None
    source: str | None = None
    rows_read: int = 0
    changes: list[PriceChange] = field(default_factory=list)
    unmatched: list[Unmatched] = field(default_factory=list)
    not_cluster_nodes: int = 0
    dry_run: bool = False
    held: bool = False

    def count(self, kind: ChangeKind) -> int:
        """Number of observations of one kind."""
        return sum(1 for c in self.changes if c.kind is kind)


def compare(conn: Connection, observations: Sequence[Observation]) -> list[PriceChange]:
    """Classify observations against the current prices (before they are appended)."""
    current = current_prices(conn, {o.offer_id for o in observations})
    before = {
        (offer_id, p["tier"], p["term"]): (float(p["usd_per_gpu_hour"]), str(p["as_of"]))
        for offer_id, prices in current.items()
        for p in prices
    }
    changes = []
    for o in observations:
        old, old_as_of = before.get((o.offer_id, o.tier, o.term), (None, ""))
        if old is None:
            kind = ChangeKind.NEW
        elif o.as_of.isoformat() < old_as_of:
            kind = ChangeKind.OLDER
        elif abs(old - o.usd_per_gpu_hour) <= PRICE_EPSILON_USD:
            kind = ChangeKind.UNCHANGED
        else:
            kind = ChangeKind.CHANGED
        changes.append(PriceChange(o.offer_id, o.tier, o.term, old, o.usd_per_gpu_hour, kind))
    return changes


def _record(conn: Connection, report: FeedReport, started: datetime, finished: datetime) -> None:
    conn.execute(
        insert(feed_runs).values(
            feed=report.feed,
            input=report.source,
            started_at=started,
            finished_at=finished,
            status="ok" if report.ok else ("held" if report.held else "failed"),
            message=report.message,
            rows_read=report.rows_read,
            new_prices=report.count(ChangeKind.NEW),
            changed_prices=report.count(ChangeKind.CHANGED),
            unchanged_prices=report.count(ChangeKind.UNCHANGED),
            unmatched_items=len(report.unmatched),
        )
    )


def jumps(changes: Sequence[PriceChange], factor: float) -> list[PriceChange]:
    """Changed prices that moved by ``factor`` or more, up or down, against the current one."""
    out = []
    for c in changes:
        old, new = c.old_usd_per_gpu_hour, c.new_usd_per_gpu_hour
        if c.kind is not ChangeKind.CHANGED or old is None or old <= 0 or new <= 0:
            continue
        if max(new / old, old / new) >= factor:
            out.append(c)
    return out


def _hold_jumps(changes: Sequence[PriceChange], factor: float) -> None:
    found = jumps(changes, factor)
    if not found:
        return
    shown = "; ".join(
        f"{c.offer_id} {c.tier}{f' ({c.term})' if c.term else ''}: "
        f"{c.old_usd_per_gpu_hour:g} -> {c.new_usd_per_gpu_hour:g}"
        for c in found[:SHOWN_JUMPS]
    )
    more = f" and {len(found) - SHOWN_JUMPS} more" if len(found) > SHOWN_JUMPS else ""
    msg = (
        f"held: {len(found)} price(s) moved by {factor:g}x or more against the current price "
        f"({shown}{more}); nothing was applied. If they are right, run again with "
        "--allow-price-jumps"
    )
    raise FeedHeldError(msg)


def _apply(
    conn: Connection,
    feed: Feed,
    batch: FeedBatch,
    observed_at: datetime,
    on_stage: OnStage,
    max_price_factor: float | None,
) -> tuple[MatchResult, list[PriceChange]]:
    on_stage(feed.name, Stage.MATCH)
    index = OfferIndex.load(conn)
    result = match_items(batch.items, index, feed=feed.name, observed_at=observed_at)
    changes = compare(conn, result.observations)
    if max_price_factor is not None:
        _hold_jumps(changes, max_price_factor)
    on_stage(feed.name, Stage.WRITE)
    append(conn, result.observations)
    refresh_current(conn, {o.offer_id for o in result.observations})
    if result.observations:
        publish_data_version(conn)
    return result, changes


def _noop(_feed: str, _stage: Stage) -> None:
    return None


def run_feed(
    engine: Engine,
    feed: Feed,
    source: Path | None = None,
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    as_of: date | None = None,
    on_stage: OnStage = _noop,
    max_price_factor: float | None = DEFAULT_MAX_PRICE_FACTOR,
) -> FeedReport:
    """Read, match and apply one feed in a single transaction.

    A price that moves by ``max_price_factor`` or more against the current one holds the
    whole feed (FeedHeldError: nothing applied); None lets every change through.

    ``as_of`` dates the prices the input leaves undated (default: the day of ``now``); a
    backdated price is kept in the history but does not displace a newer current price.
    Any exception (from reading, matching or writing) rolls the transaction back, so the feed
    changes nothing; the failure and its message are then recorded in ``feed_runs`` in a
    transaction of their own. A dry run does everything, then rolls back and records nothing.
    """
    started = now or datetime.now(UTC)
    report = FeedReport(feed.name, ok=True, source=str(source) if source else None)
    report.dry_run = dry_run
    try:
        on_stage(feed.name, Stage.READ)
        batch = feed.fetch(source, today=as_of or started.date())
        report.source = batch.source
        report.rows_read = batch.rows_read
        with engine.connect() as conn:
            transaction = conn.begin()
            try:
                result, changes = _apply(conn, feed, batch, started, on_stage, max_price_factor)
                report.changes = changes
                report.unmatched = result.unmatched
                report.not_cluster_nodes = result.not_cluster_nodes
                if not dry_run:
                    _record(conn, report, started, datetime.now(UTC))
            except BaseException:
                transaction.rollback()
                raise
            if dry_run:
                transaction.rollback()
            else:
                transaction.commit()
    except Exception as exc:  # any failure of a feed is reported, never raised
        report = FeedReport(
            feed.name,
            ok=False,
            message=str(exc) if isinstance(exc, FeedError) else f"{type(exc).__name__}: {exc}",
            source=report.source,
            rows_read=report.rows_read,
            dry_run=dry_run,
            held=isinstance(exc, FeedHeldError),
        )
        if not dry_run:
            with engine.begin() as conn:
                _record(conn, report, started, datetime.now(UTC))
    on_stage(feed.name, Stage.DONE)
    return report


def run_feeds(
    engine: Engine,
    feeds: Sequence[Feed],
    source: Path | None = None,
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    as_of: date | None = None,
    on_stage: OnStage = _noop,
    max_price_factor: float | None = DEFAULT_MAX_PRICE_FACTOR,
) -> list[FeedReport]:
    """Apply each feed independently; a failed feed never stops the next one."""
    return [
        run_feed(
            engine,
            f,
            source,
            dry_run=dry_run,
            now=now,
            as_of=as_of,
            on_stage=on_stage,
            max_price_factor=max_price_factor,
        )
        for f in feeds
    ]
