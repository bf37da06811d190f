"""``clusterscout refresh`` and ``clusterscout stale``: price feeds and freshness."""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from clusterscout.catalog.checks import STALE_AFTER_DAYS
from clusterscout.commands.common import DatabaseOpt, engine_for, err, fail, out, settings_for
from clusterscout.feeds import registry
from clusterscout.feeds.runner import STAGES, ChangeKind, FeedReport, Stage, run_feeds
from clusterscout.store import queries
from clusterscout.store.prices import stale_prices

# How many unmatched items the summary lists per feed; the rest are counted.
UNMATCHED_SHOWN = 20


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:,.4g}"


def _summary(report: FeedReport) -> None:
    title = f"{report.feed}{' (dry run: nothing written)' if report.dry_run else ''}"
    if not report.ok:
        err.print(
            f"[red]✗ {title} failed; nothing changed:[/red] {report.message}", highlight=False
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
        table = Table(title=f"{report.feed}: new and changed prices (USD per GPU-hour)")
        for col in ("offer", "tier", "before", "now", "change"):
            table.add_column(col, overflow="fold")
        for c in moved:
            delta = ""
            if c.kind is ChangeKind.OLDER:
                delta = "older: history only"
            elif c.old_usd_per_gpu_hour:
                pct = (c.new_usd_per_gpu_hour / c.old_usd_per_gpu_hour - 1) * 100
                delta = f"{pct:+.1f}%"
            tier = c.tier + (f" ({c.term})" if c.term else "")
            table.add_row(
                c.offer_id,
                tier,
                _money(c.old_usd_per_gpu_hour),
                _money(c.new_usd_per_gpu_hour),
                delta or c.kind.value,
            )
        out.print(table)
    if report.unmatched:
        table = Table(title=f"{report.feed}: unmatched items (no offer updated)")
        table.add_column("item", overflow="fold")
        table.add_column("reason", overflow="fold")
        for u in report.unmatched[:UNMATCHED_SHOWN]:
            table.add_row(u.item.label(), u.reason)
        out.print(table)
        if len(report.unmatched) > UNMATCHED_SHOWN:
            out.print(f"… and {len(report.unmatched) - UNMATCHED_SHOWN} more unmatched items")


def _as_of(text: str | None, today: date) -> date | None:
    """The ``--as-of`` date, or a usage error naming the flag."""
    if text is None:
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise fail(f"--as-of: {text!r} is not a date (YYYY-MM-DD)") from None
    if day > today:
        raise fail(f"--as-of: {day.isoformat()} is after today ({today.isoformat()})")
    return day


def refresh(
    source: Annotated[
        str,
        typer.Option(
            "--source",
            help=f"Feed to run: {', '.join(registry.names())}, or all (feeds needing no input).",
        ),
    ] = registry.ALL,
    input_path: Annotated[
        Path | None,
        typer.Option("--input", help="File the feed reads (required by skypilot-csv and file)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would change; write nothing.")
    ] = False,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="Date (YYYY-MM-DD) of prices the input leaves undated, e.g. when a catalog "
            "file was published; default today. Older prices join the history without "
            "displacing newer ones.",
        ),
    ] = None,
    database_url: DatabaseOpt = None,
) -> None:
    """Refresh prices from feeds: one transaction per feed; exit 1 when any feed failed."""
    try:
        feeds = registry.select_feeds(source, input_path is not None)
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

        reports = run_feeds(
            engine,
            feeds,
            input_path,
            dry_run=dry_run,
            now=now,
            as_of=dated,
            on_stage=on_stage,
        )
    engine.dispose()
    for report in reports:
        _summary(report)
    if not reports:
        out.print("no feed to run: every feed needs --input (give --source NAME --input PATH)")
    if any(not r.ok for r in reports):
        raise typer.Exit(1)


def stale(
    days: Annotated[
        int | None,
        typer.Option(
            "--days",
            min=1,
            help="Prices older than this many days are stale (default: stale_after_days, 30).",
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    database_url: DatabaseOpt = None,
) -> None:
    """List stale facts (sources checked over 180 days ago) and stale prices, by provider."""
    fmt = fmt.strip().lower()
    if fmt not in {"table", "json"}:
        raise fail(f"--format: {fmt!r} is not one of: table, json")
    settings = settings_for(database_url)
    limit = days or settings.stale_after_days
    today = datetime.now(UTC).date()
    engine = engine_for(database_url)
    with engine.connect() as conn:
        facts = queries.stale_facts(conn, today, STALE_AFTER_DAYS)
        prices = stale_prices(conn, today, limit)
    engine.dispose()
    if fmt == "json":
        data = {
            "today": today.isoformat(),
            "facts_stale_after_days": STALE_AFTER_DAYS,
            "prices_stale_after_days": limit,
            "facts": facts,
            "prices": prices,
        }
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return
    _stale_tables(facts, prices, limit)


def _stale_tables(facts: list[dict[str, Any]], prices: list[dict[str, Any]], limit: int) -> None:
    providers = sorted({f["provider"] for f in facts} | {p["provider"] for p in prices})
    for provider in providers:
        table = Table(title=provider, header_style="bold")
        for col in ("kind", "what", "date", "age (days)", "source"):
            table.add_column(col, overflow="fold")
        for f in (f for f in facts if f["provider"] == provider):
            where = "" if f["scope"] == "provider" else f"{f['scope']}: "
            table.add_row(
                "fact", f"{where}{f['field']}", f["checked_on"], str(f["age_days"]), f["url"]
            )
        for p in (p for p in prices if p["provider"] == provider):
            what = f"{p['offer_id']}: {p['tier']} {_money(p['usd_per_gpu_hour'])}/GPU-h"
            table.add_row("price", what, p["as_of"], str(p["age_days"]), p["source"]["url"])
        out.print(table)
    out.print(
        f"{len(facts)} stale fact(s) (checked over {STALE_AFTER_DAYS} days ago), "
        f"{len(prices)} stale price(s) (as of over {limit} days ago) "
        f"across {len(providers)} provider(s)",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``refresh`` and ``stale`` to the ``clusterscout`` app."""
    app.command("refresh")(refresh)
    app.command("stale")(stale)
