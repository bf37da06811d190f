"""Price commands: ``refresh`` (from feeds) and ``stale`` (facts and prices to re-check)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from clusterscout.app import prices
from clusterscout.app.prices import (
    FACTS_STALE_AFTER_DAYS,
    OLD_PAGE_AFTER_DAYS,
    STAGES,
    ChangeKind,
    FeedReport,
    Stage,
)
from clusterscout.cli.options import (
    choice,
    database_url_option,
    engine_for,
    fail,
    format_option,
    settings_for,
)
from clusterscout.cli.output import Column, err, out, print_json, print_table

# How many unmatched items the summary lists per feed; the rest are counted.
UNMATCHED_SHOWN = 20


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:,.4g}"


def _summary(report: FeedReport) -> None:
    title = f"{report.feed}{' (dry run: nothing written)' if report.dry_run else ''}"
    if not report.ok:
        what = "held" if report.held else "failed"
        err.print(
            f"[red]✗ {title} {what}; nothing changed:[/red] {report.message}", highlight=False
        )
        return
    counts = ", ".join(
        f"{report.count(kind)} {kind.value}"
        for kind in (ChangeKind.NEW, ChangeKind.CHANGED, ChangeKind.UNCHANGED)
    )
    if older := report.count(ChangeKind.OLDER):
        counts += f", {older} older than the current price (history only)"
    out.print(
        f"[green]✓[/green] {title}: {report.rows_read} rows read from {report.source}; "
        f"prices {counts}; {len(report.unmatched)} unmatched; "
        f"{report.not_cluster_nodes} not 8-GPU cluster nodes",
        highlight=False,
    )
    moved = [c for c in report.changes if c.kind is not ChangeKind.UNCHANGED]
    if moved:
        rows = []
        for c in moved:
            delta = ""
            if c.kind is ChangeKind.OLDER:
                delta = "older: history only"
            elif c.old_usd_per_gpu_hour:
                pct = (c.new_usd_per_gpu_hour / c.old_usd_per_gpu_hour - 1) * 100
                delta = f"{pct:+.1f}%"
            tier = c.tier + (f" ({c.term})" if c.term else "")
            rows.append(
                [
                    c.offer_id,
                    tier,
                    _money(c.old_usd_per_gpu_hour),
                    _money(c.new_usd_per_gpu_hour),
                    delta or c.kind.value,
                ]
            )
        print_table(
            f"{report.feed}: new and changed prices (USD per GPU-hour)",
            [Column(h) for h in ("offer", "tier", "before", "now", "change")],
            rows,
        )
    if report.unmatched:
        print_table(
            f"{report.feed}: unmatched items (no offer updated)",
            [Column("item"), Column("reason")],
            [[u.item.label(), u.reason] for u in report.unmatched[:UNMATCHED_SHOWN]],
        )
        if len(report.unmatched) > UNMATCHED_SHOWN:
            out.print(f"… and {len(report.unmatched) - UNMATCHED_SHOWN} more unmatched items")


def _as_of(value: str | None, today: date) -> date | None:
    """The ``--as-of`` date, or a usage error naming the flag."""
    if value is None:
        return None
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        raise fail(f"--as-of: {value!r} is not a date (YYYY-MM-DD)") from None
    if day > today:
        raise fail(f"--as-of: {day.isoformat()} is after today ({today.isoformat()})")
    return day


@click.command()
@click.option(
    "--source",
    default=prices.ALL_FEEDS,
    show_default=True,
    help=f"Feed to run: {', '.join(prices.feed_names())}, or all (feeds needing no input).",
)
@click.option(
    "--input",
    "input_path",
    type=click.Path(path_type=Path),
    help="File the feed reads (required by skypilot-csv and file).",
)
@click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
@click.option(
    "--allow-price-jumps",
    is_flag=True,
    help="Apply prices that halve or double (or more) against the current ones; without it "
    "such a feed is held and nothing of it is applied.",
)
@click.option(
    "--allow-missing-newline",
    is_flag=True,
    help="Read a CSV file whose last line has no newline; without it the file is held, "
    "since its last line may have been cut short.",
)
@click.option(
    "--as-of",
    metavar="YYYY-MM-DD",
    help="Date of prices the input leaves undated, e.g. when a catalog file was published; "
    "default today. Older prices join the history without displacing newer ones.",
)
@database_url_option
def refresh(
    source: str,
    input_path: Path | None,
    dry_run: bool,
    allow_price_jumps: bool,
    allow_missing_newline: bool,
    as_of: str | None,
    database_url: str | None,
) -> None:
    """Refresh prices from feeds: one transaction per feed; exit 1 when any feed failed."""
    try:
        feeds = prices.select_feeds(source, input_path is not None)
    except (KeyError, ValueError) as exc:
        raise fail(f"--source: {exc.args[0]}") from None
    now = datetime.now(UTC)
    dated = _as_of(as_of, now.date())
    engine = engine_for(database_url)
    tasks: dict[str, TaskID] = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[stage]}"),
        TimeElapsedColumn(),
        console=err,
    ) as progress:
        for feed in feeds:
            tasks[feed.name] = progress.add_task(feed.name, total=len(STAGES), stage="waiting")

        def on_stage(name: str, stage: Stage) -> None:
            progress.update(tasks[name], completed=STAGES.index(stage) + 1, stage=stage.value)

        reports = prices.refresh(
            engine,
            feeds,
            input_path,
            dry_run=dry_run,
            now=now,
            as_of=dated,
            on_stage=on_stage,
            allow_price_jumps=allow_price_jumps,
            allow_missing_newline=allow_missing_newline,
        )
    engine.dispose()
    for report in reports:
        _summary(report)
    if not reports:
        out.print("no feed to run: every feed needs --input (give --source NAME --input PATH)")
    if any(not r.ok for r in reports):
        raise click.exceptions.Exit(1)


@click.command()
@click.option(
    "--days",
    type=click.IntRange(min=1),
    help="Prices older than this many days are stale (default: stale_after_days, 30).",
)
@format_option("table", ("table", "json"))
@database_url_option
def stale(days: int | None, fmt: str, database_url: str | None) -> None:
    """List stale facts (sources checked over 180 days ago) and stale prices, by provider."""
    fmt = choice("--format", fmt, ("table", "json"))
    settings = settings_for(database_url)
    limit = days or settings.stale_after_days
    today = datetime.now(UTC).date()
    engine = engine_for(database_url)
    with engine.connect() as conn:
        found = prices.stale(conn, today, limit)
    engine.dispose()
    if fmt == "json":
        print_json(
            {
                "today": today.isoformat(),
                "facts_stale_after_days": FACTS_STALE_AFTER_DAYS,
                "prices_stale_after_days": limit,
                "old_page_after_days": OLD_PAGE_AFTER_DAYS,
                "facts": found.facts,
                "prices": found.prices,
                "old_pages": found.old_pages,
            }
        )
        return
    _stale_tables(found.facts, found.prices, limit)
    # Re-reading an old post refreshes checked_on, not the evidence: count those facts too.
    out.print(
        f"{len(found.old_pages)} fact(s) rest only on pages dated over "
        f"{OLD_PAGE_AFTER_DAYS // 365} years ago (listed with --format json)",
        highlight=False,
    )


def _stale_tables(facts: list[dict[str, Any]], found: list[dict[str, Any]], limit: int) -> None:
    providers = sorted({f["provider"] for f in facts} | {p["provider"] for p in found})
    columns = [Column(h) for h in ("kind", "what", "date", "age (days)", "source")]
    for provider in providers:
        rows = []
        for f in (f for f in facts if f["provider"] == provider):
            where = "" if f["scope"] == "provider" else f"{f['scope']}: "
            rows.append(
                ["fact", f"{where}{f['field']}", f["checked_on"], str(f["age_days"]), f["url"]]
            )
        for p in (p for p in found if p["provider"] == provider):
            what = f"{p['offer_id']}: {p['tier']} {_money(p['usd_per_gpu_hour'])}/GPU-h"
            rows.append(["price", what, p["as_of"], str(p["age_days"]), p["source"]["url"]])
        print_table(provider, columns, rows)
    out.print(
        f"{len(facts)} stale fact(s) (checked over {FACTS_STALE_AFTER_DAYS} days ago), "
        f"{len(found)} stale price(s) (as of over {limit} days ago) "
        f"across {len(providers)} provider(s)",
        highlight=False,
    )


COMMANDS: tuple[click.Command, ...] = (refresh, stale)
