"""Catalog commands: validate, build-db, providers, offers, compare and coverage."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from clusterscout.app import coverage as coverage_service
from clusterscout.app import database, directory, offers, texts
from clusterscout.app.fields import OFFER_FILTERS
from clusterscout.catalog.directory import DIRECTORY_COLUMNS, directory_row
from clusterscout.catalog.exports import (
    OFFER_COLUMNS,
    offer_row,
    to_csv,
)
from clusterscout.catalog.problems import Problem, Severity, has_errors, warning_summary
from clusterscout.catalog.records import record_price
from clusterscout.cli.options import (
    choice,
    database_url_option,
    engine_for,
    fail,
    field_options,
    field_values,
    format_option,
    reporting,
    settings_for,
)
from clusterscout.cli.output import Column, err, out, print_json, print_table, text

DATA_DIR_HELP = "Catalog directory (default: the catalog shipped with clusterscout)."


@click.command()
@click.argument("data_dir", required=False, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
def validate(data_dir: Path | None, strict: bool) -> None:
    """Check the catalog and print every problem as "file: key.path: message"."""
    result = database.validate(data_dir or settings_for(None).data_dir)
    for problem in result.problems:
        out.print(str(problem), highlight=False, markup=False)
    errors = sum(1 for p in result.problems if p.severity is Severity.ERROR)
    warnings = len(result.problems) - errors
    catalog = result.catalog
    summary = (
        f"{len(catalog.providers)} providers, {len(catalog.offers)} offers, "
        f"{len(catalog.gpus)} GPUs, {len(catalog.fabrics)} fabrics; "
        if catalog
        else ""
    )
    err.print(f"{summary}{errors} error(s), {warnings} warning(s)", highlight=False)
    _print_warning_kinds(result.problems, None, err)
    if has_errors(result.problems) or (strict and warnings):
        raise click.exceptions.Exit(1)


@click.command("build-db")
@database_url_option
@click.option("--data-dir", "--data", type=click.Path(path_type=Path), help=DATA_DIR_HELP)
def build_db(database_url: str | None, data_dir: Path | None) -> None:
    """Load the catalog in one transaction; on any failure the old database stays as it was."""
    settings = settings_for(database_url)
    with reporting():
        engine = database.engine_for_url(settings.resolved_database_url())
    try:
        stats, problems = database.build(engine, data_dir or settings.data_dir)
    except database.CatalogInvalidError as exc:
        for p in exc.problems:
            err.print(str(p), highlight=False, markup=False)
        raise fail("catalog has errors; the database was not changed", 1) from None
    out.print(
        f"built {stats.providers} providers, {stats.offers} offers, {stats.prices} price "
        f"observations (data version {stats.data_version}; {len(problems)} warning(s))",
        highlight=False,
    )
    listing = "clusterscout validate" + (f" {data_dir}" if data_dir else "")
    _print_warning_kinds(problems, listing, out)


def _print_warning_kinds(problems: list[Problem], listing: str | None, console: Console) -> None:
    """Warnings counted by kind, with what each kind means for users; none blocks a build."""
    groups = warning_summary(problems)
    if not groups:
        return
    where = f"; `{listing}` lists each one" if listing else ""
    console.print(f"warnings by kind (warnings never block a build{where}):", highlight=False)
    width = max(len(g.label) for g in groups)
    for g in groups:
        console.print(
            f"  {g.count:>4}  {g.label:<{width}}  {g.meaning}: {g.matters}",
            highlight=False,
            markup=False,
        )


@click.command("catalog-texts")
@click.argument(
    "data_dir", type=click.Path(path_type=Path, file_okay=False, dir_okay=True, exists=True)
)
def catalog_texts(data_dir: Path) -> None:
    """Regenerate DATA_DIR/locale/catalog.pot from the catalog's free text and merge it into
    each language's catalog.po: new texts arrive untranslated, removed ones are dropped."""
    with reporting():
        progress = texts.update_files(data_dir)
    for p in progress:
        out.print(f"{p.lang}: {p.translated} of {p.total} texts translated", highlight=False)


def _emit(
    fmt: str,
    records: list[dict[str, Any]],
    flatten: Callable[[dict[str, Any]], dict[str, Any]],
    columns: tuple[str, ...],
    table_columns: tuple[str, ...],
    title: str,
) -> None:
    if fmt == "json":
        print_json(records)
    elif fmt == "csv":
        sys.stdout.write(to_csv((flatten(r) for r in records), columns))
    else:
        rows = [flatten(r) for r in records]
        print_table(
            title,
            [
                Column(c.replace("_", " "), right=c.endswith(("gbps", "nodes", "hour")))
                for c in table_columns
            ],
            [[text(row[c]) for c in table_columns] for row in rows],
        )


DIRECTORY_FILTERS = tuple(f for f in OFFER_FILTERS if f.name != "multi_node")
"""The offer filters the directory takes as is (its ``--multi-node`` is three-valued)."""


@click.command()
@click.option(
    "--multi-node",
    "multi_node",
    multiple=True,
    metavar="yes|no|unknown",
    help="Multi-node status: yes, no or unknown (repeatable; any of them).",
)
@field_options(DIRECTORY_FILTERS)
@click.option("--sort", default="name", show_default=True, metavar="name|offers|price|facts")
@format_option("table", ("table", "json", "csv"))
@database_url_option
def providers(
    multi_node: tuple[str, ...], sort: str, fmt: str, database_url: str | None, **filters: Any
) -> None:
    """List providers: the directory, with the offer filters (a provider passes when one of
    its offers does)."""
    fmt = choice("--format", fmt, ("table", "json", "csv"))
    params = {
        k: v if isinstance(v, list) else [v]
        for k, v in field_values(filters, DIRECTORY_FILTERS).items()
    }
    params["multi_node"] = list(multi_node)
    params["sort"] = [sort]
    with engine_for(database_url).connect() as conn, reporting():
        found = directory.directory(conn, params)
    _emit(
        fmt,
        found.rows,
        directory_row,
        DIRECTORY_COLUMNS,
        (
            "slug",
            "name",
            "multi_node",
            "fabrics",
            "clustermax",
            "offer_count",
            "cheapest_usd_per_gpu_hour",
            "cheapest_as_of",
            "facts_known",
        ),
        f"{len(found.rows)} of {found.total} providers",
    )


def _with_tier_price(tier: str, column: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """``offer_row`` plus ``column``: the lowest current price of ``tier``."""

    def flatten(record: dict[str, Any]) -> dict[str, Any]:
        row = offer_row(record)
        row[column] = record_price(record, tier)
        return row

    return flatten


@click.command("offers")
@field_options(OFFER_FILTERS)
@click.option("--sort", default="price", show_default=True, metavar="price|gbps|provider|nodes")
@format_option("table", ("table", "json", "csv"))
@database_url_option
def list_offers(sort: str, fmt: str, database_url: str | None, **filters: Any) -> None:
    """List cluster offers that match every filter given."""
    fmt = choice("--format", fmt, ("table", "json", "csv"))
    params = {
        k: v if isinstance(v, list) else [v]
        for k, v in field_values(filters, OFFER_FILTERS).items()
    }
    with engine_for(database_url).connect() as conn, reporting():
        f, _, page = offers.find_offers(conn, {**params, "sort": [sort]})
    offers.mark_freshness(page.records, settings_for(database_url).stale_after_days)
    price_column = "from_usd_per_gpu_hour"
    flatten: Callable[[dict[str, Any]], dict[str, Any]] = offer_row
    if f.price_tier is not None:
        # The table shows the price the filter and sort used; JSON and CSV keep the records.
        price_column = f"{f.price_tier.value}_usd_per_gpu_hour"
        flatten = _with_tier_price(f.price_tier.value, price_column)
    _emit(
        fmt,
        page.records,
        flatten,
        OFFER_COLUMNS,
        ("provider", "gpu", "fabric", "per_node_gbps", "gpudirect_rdma", "max_nodes", price_column),
        f"{page.count} offers",
    )


def compare_rows(
    records: list[dict[str, Any]], editions: Sequence[dict[str, Any]] = ()
) -> list[tuple[str, list[str]]]:
    """Checklist rows (label, one cell per provider) for a comparison.

    ``editions`` are the catalog's rating editions: one absent from a provider's ratings shows
    as "not rated" (not as unknown).
    """

    def offers_summary(r: dict[str, Any]) -> str:
        parts = []
        for o in r["offers"]:
            gbps = text(o["per_node_gbps"])
            price = o["from_usd_per_gpu_hour"]
            price_txt = f"${price:g}/GPU-h" if price is not None else "price unknown"
            parts.append(f"{o['gpu']} · {text(o['fabric'])} {gbps} Gb/s · {price_txt}")
        return "\n".join(parts) or "none listed"

    def fabrics(r: dict[str, Any]) -> str:
        kinds = sorted({o["fabric"] for o in r["offers"] if o["fabric"]})
        return ", ".join(kinds) or "unknown"

    def rdma(r: dict[str, Any]) -> str:
        values = {o["gpudirect_rdma"] for o in r["offers"]}
        return ", ".join(sorted(text(v) for v in values)) or "unknown"

    def orch(r: dict[str, Any]) -> str:
        o = r["orchestration"]
        return (
            f"Slurm: {text(o['managed_slurm'])}; Kubernetes: {text(o['managed_kubernetes'])}; "
            f"NCCL set up: {text(o['nccl_preconfigured'])}"
        )

    def prov(r: dict[str, Any]) -> str:
        p = r["provisioning"]
        terms = ", ".join(p["reserved_terms"]) or "unknown"
        return (
            f"on-demand clusters: {text(p['on_demand_clusters'])}; reserved: "
            f"{text(p['reserved'])} ({terms}); waitlist: {text(p['waitlist'])}"
        )

    def billing(r: dict[str, Any]) -> str:
        b = r["billing"]
        return f"{text(b['granularity'])}; minimum: {text(b['minimum'])}"

    def storage(r: dict[str, Any]) -> str:
        s = r["storage"]
        products = ", ".join(s["products"]) or "unknown"
        return f"shared FS: {text(s['shared_filesystem'])}; {products}"

    def ratings(r: dict[str, Any]) -> str:
        tiers = {(x["rater"], x["edition"]): x["tier"] for x in r.get("ratings") or ()}
        keys = [(e["rater"], e["edition"]) for e in editions] or list(tiers)
        return "\n".join(f"{k[0]} {k[1]}: {tiers.get(k, 'not rated')}" for k in keys) or "none"

    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("multi-node", lambda r: r["multi_node"]),
        ("fabric", fabrics),
        ("GPUDirect RDMA", rdma),
        ("orchestration", orch),
        ("provisioning", prov),
        ("billing", billing),
        ("storage", storage),
        ("ratings", ratings),
        ("offers", offers_summary),
    ]
    return [(label, [fn(r) for r in records]) for label, fn in rows]


@click.command()
@click.argument("slugs", nargs=-1, required=True)
@format_option("table", ("table", "json"))
@database_url_option
def compare(slugs: tuple[str, ...], fmt: str, database_url: str | None) -> None:
    """Show providers side by side on the buyer's checklist."""
    fmt = choice("--format", fmt, ("table", "json"))
    with engine_for(database_url).connect() as conn, reporting(flags=False):
        records = offers.compare_records(conn, slugs)
        editions = offers.rating_editions(conn)
    offers.mark_freshness(records, settings_for(database_url).stale_after_days)
    if fmt == "json":
        print_json(records)
        return
    print_table(
        "Checklist",
        [Column(""), *(Column(r["name"]) for r in records)],
        [[label, *cells] for label, cells in compare_rows(records, editions)],
        show_lines=True,
    )


def _pct(share: dict[str, Any]) -> str:
    value = share["share"]
    return "—" if value is None else f"{value * 100:.0f}%"


@click.command("coverage")
@format_option("table", ("table", "json"))
@database_url_option
def coverage(fmt: str, database_url: str | None) -> None:
    """What the catalog knows about multi-node offers, overall and per provider.

    Providers by multi-node status; per offer fact the share known; the share of facts with a
    primary source; the share of stale prices.
    """
    fmt = choice("--format", fmt, ("table", "json"))
    settings = settings_for(database_url)
    with engine_for(database_url).connect() as conn:
        report = coverage_service.coverage(conn, _today(), settings.stale_after_days)
    body = report.to_dict()
    if fmt == "json":
        print_json(body)
        return
    status = body["providers"]["multi_node"]
    overall = body["multi_node_offers"]
    print_table(
        f"Providers: {body['providers']['total']}",
        [Column("multi-node"), Column("providers", right=True)],
        [[k, str(v)] for k, v in status.items()],
    )
    rows = [[name, f"{s['count']}/{s['total']}", _pct(s)] for name, s in overall["facts"].items()]
    for label, key in (("primary-sourced facts", "primary_sourced_facts"),
                       ("stale prices", "stale_prices")):  # fmt: skip
        rows.append([label, _count(overall[key]), _pct(overall[key])])
    print_table(
        f"Multi-node offers: {overall['offers']} (prices stale after "
        f"{body['stale_after_days']} days)",
        [Column("fact known"), Column("offers", right=True), Column("share", right=True)],
        rows,
    )
    print_table(
        "By provider (multi-node offers)",
        [Column("provider"), *(Column(h, right=True) for h, _ in PROVIDER_COVERAGE_COLUMNS)],
        [
            [p["slug"], *(cell(p) for _, cell in PROVIDER_COVERAGE_COLUMNS)]
            for p in body["by_provider"]
            if p["offers"]
        ],
    )


PROVIDER_COVERAGE_COLUMNS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("offers", lambda p: str(p["offers"])),
    ("GPUs/node", lambda p: _pct(p["facts"]["gpus_per_node"])),
    ("fabric", lambda p: _pct(p["facts"]["fabric"])),
    ("Gbit/s", lambda p: _pct(p["facts"]["per_node_gbps"])),
    ("RDMA", lambda p: _pct(p["facts"]["gpudirect_rdma"])),
    ("price", lambda p: _pct(p["facts"]["on_demand_or_reserved_price"])),
    ("primary", lambda p: _pct(p["primary_sourced_facts"])),
    ("stale prices", lambda p: _pct(p["stale_prices"])),
)


def _count(share: dict[str, Any]) -> str:
    return f"{share['count']}/{share['total']}"


def _today() -> date:
    """Today in UTC (prices age by calendar day)."""
    return datetime.now(UTC).date()


COMMANDS: tuple[click.Command, ...] = (
    validate,
    build_db,
    catalog_texts,
    providers,
    list_offers,
    compare,
    coverage,
)
