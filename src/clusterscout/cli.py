"""The ``clusterscout`` command line (Typer): validate, build, query, compare, model, serve."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from clusterscout.catalog.exports import (
    OFFER_COLUMNS,
    PROVIDER_COLUMNS,
    offer_row,
    provider_row,
    to_csv,
)
from clusterscout.catalog.filters import FilterError
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Severity, has_errors
from clusterscout.catalog.records import record_price
from clusterscout.commands import model as model_commands
from clusterscout.commands.common import DatabaseOpt, engine_for, err, fail, out, settings_for
from clusterscout.commands.feeds import register as register_feeds
from clusterscout.domain.models import MultiNode
from clusterscout.services import (
    CatalogInvalidError,
    build,
    compare_records,
    find_offers,
    mark_freshness,
)
from clusterscout.store import queries
from clusterscout.store.db import DatabaseURLError, make_engine


class OneLineErrorGroup(TyperGroup):
    """The command group, with usage errors (bad flag value, unknown option) on one line.

    Typer draws a multi-line box; the contract is ``error: <message naming the flag>`` like
    every other error of the CLI, with exit code 2.
    """

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command; in standalone mode, print click errors as one line and exit."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except Exception as exc:
            # Click's exception classes, matched by shape: Typer vendors its own copy of
            # Click in recent versions and uses Click itself in older ones.
            name = type(exc).__name__
            if name == "NoArgsIsHelpError":
                sys.exit(2)  # the help was printed already
            if name == "Abort":
                err.print("aborted", highlight=False)
                sys.exit(1)
            format_message = getattr(exc, "format_message", None)
            exit_code = getattr(exc, "exit_code", None)
            if not callable(format_message) or not isinstance(exit_code, int):
                raise
            message = " ".join(str(format_message()).split())
            err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
            sys.exit(exit_code)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=OneLineErrorGroup,
    name="clusterscout",
    help="Compare and plan multi-node GPU cluster rentals, with a source for every fact.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
FormatOpt = Annotated[str, typer.Option("--format", help="table, json or csv.")]


def _choice(flag: str, value: str, allowed: tuple[str, ...]) -> str:
    value = value.strip().lower()
    if value not in allowed:
        raise fail(f"{flag}: {value!r} is not one of: {', '.join(allowed)}")
    return value


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _fmt(value: Any) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _table(title: str, rows: list[dict[str, Any]], columns: tuple[str, ...]) -> Table:
    table = Table(title=title, show_lines=False, header_style="bold")
    for col in columns:
        table.add_column(col.replace("_", " "), overflow="fold")
    for row in rows:
        table.add_row(*(_fmt(row[c]) for c in columns))
    return table


@app.command()
def validate(
    data_dir: Annotated[Path, typer.Argument(help="Catalog directory.")] = Path("data"),
    strict: Annotated[bool, typer.Option(help="Treat warnings as errors.")] = False,
) -> None:
    """Check the catalog and print every problem as ``file: key.path: message``."""
    result = load_catalog(data_dir)
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
    if has_errors(result.problems) or (strict and warnings):
        raise typer.Exit(1)


@app.command("build-db")
def build_db(
    database_url: DatabaseOpt = None,
    data_dir: Annotated[Path | None, typer.Option(help="Catalog directory.")] = None,
) -> None:
    """Load the catalog in one transaction; on any failure the old database stays as it was."""
    settings = settings_for(database_url)
    try:
        engine = make_engine(settings.resolved_database_url())
    except DatabaseURLError as exc:
        raise fail(f"--database-url: {exc}") from None
    try:
        stats, problems = build(engine, data_dir or settings.data_dir)
    except CatalogInvalidError as exc:
        for p in exc.problems:
            err.print(str(p), highlight=False, markup=False)
        raise fail("catalog has errors; the database was not changed", 1) from None
    warnings = len(problems)
    out.print(
        f"built {stats.providers} providers, {stats.offers} offers, {stats.prices} price "
        f"observations (data version {stats.data_version}; {warnings} warning(s))",
        highlight=False,
    )


def _emit(
    fmt: str,
    records: list[dict[str, Any]],
    flatten: Callable[[dict[str, Any]], dict[str, Any]],
    columns: tuple[str, ...],
    table_columns: tuple[str, ...],
    title: str,
) -> None:
    if fmt == "json":
        _print_json(records)
    elif fmt == "csv":
        sys.stdout.write(to_csv((flatten(r) for r in records), columns))
    else:
        out.print(_table(title, [flatten(r) for r in records], table_columns))


@app.command()
def providers(
    multi_node: Annotated[
        str | None, typer.Option("--multi-node", help="yes, no or unknown.")
    ] = None,
    fmt: FormatOpt = "table",
    database_url: DatabaseOpt = None,
) -> None:
    """List providers."""
    fmt = _choice("--format", fmt, ("table", "json", "csv"))
    status = None
    if multi_node is not None:
        status = MultiNode(_choice("--multi-node", multi_node, MultiNode.values()))
    with engine_for(database_url).connect() as conn:
        page = queries.list_providers(conn, status)
    _emit(
        fmt,
        page.records,
        provider_row,
        PROVIDER_COLUMNS,
        ("slug", "name", "multi_node", "hq_country", "offer_count"),
        f"{page.count} providers",
    )


@app.command()
def offers(
    multi_node: Annotated[str | None, typer.Option(help="true or false.")] = None,
    gpu: Annotated[list[str] | None, typer.Option(help="GPU model (repeatable).")] = None,
    fabric: Annotated[
        list[str] | None,
        typer.Option(help="infiniband, roce, efa, tcpxo, tcpx, ethernet (repeatable)."),
    ] = None,
    min_gbps: Annotated[str | None, typer.Option(help="Minimum Gbit/s per node.")] = None,
    rdma: Annotated[str | None, typer.Option(help="GPUDirect RDMA: true or false.")] = None,
    orchestration: Annotated[
        list[str] | None, typer.Option(help="slurm or kubernetes (repeatable).")
    ] = None,
    provisioning: Annotated[
        list[str] | None, typer.Option(help="on_demand, reserved or waitlist (repeatable).")
    ] = None,
    max_price: Annotated[str | None, typer.Option(help="Max USD per GPU-hour.")] = None,
    min_nodes: Annotated[str | None, typer.Option(help="Cluster size the offer reaches.")] = None,
    region: Annotated[str | None, typer.Option(help="Region substring.")] = None,
    provider: Annotated[list[str] | None, typer.Option(help="Provider slug (repeatable).")] = None,
    price_tier: Annotated[
        str | None,
        typer.Option(
            help="on_demand, reserved, spot or capacity_block: only offers priced in that tier; "
            "--max-price, the price sort and the table's price column then use it."
        ),
    ] = None,
    sort: Annotated[str, typer.Option(help="price, gbps, provider or nodes.")] = "price",
    fmt: FormatOpt = "table",
    database_url: DatabaseOpt = None,
) -> None:
    """List cluster offers that match every filter given."""
    fmt = _choice("--format", fmt, ("table", "json", "csv"))
    raw: dict[str, list[str]] = {
        "multi_node": [multi_node] if multi_node is not None else [],
        "gpu": gpu or [],
        "fabric": fabric or [],
        "min_gbps": [min_gbps] if min_gbps is not None else [],
        "rdma": [rdma] if rdma is not None else [],
        "orchestration": orchestration or [],
        "provisioning": provisioning or [],
        "max_price": [max_price] if max_price is not None else [],
        "min_nodes": [min_nodes] if min_nodes is not None else [],
        "region": [region] if region is not None else [],
        "provider": provider or [],
        "price_tier": [price_tier] if price_tier is not None else [],
        "sort": [sort],
    }
    with engine_for(database_url).connect() as conn:
        try:
            f, _, page = find_offers(conn, {k: v for k, v in raw.items() if v})
        except FilterError as exc:
            raise fail(f"--{exc.field.replace('_', '-')}: {exc.message}") from None
    mark_freshness(page.records, settings_for(database_url).stale_after_days)
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
        (
            "provider",
            "gpu",
            "fabric",
            "per_node_gbps",
            "gpudirect_rdma",
            "max_nodes",
            price_column,
        ),
        f"{page.count} offers",
    )


def _with_tier_price(tier: str, column: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """``offer_row`` plus ``column``: the lowest current price of ``tier``."""

    def flatten(record: dict[str, Any]) -> dict[str, Any]:
        row = offer_row(record)
        row[column] = record_price(record, tier)
        return row

    return flatten


def _yn(value: Any) -> str:
    return _fmt(value)


def compare_rows(records: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Checklist rows (label, one cell per provider) for a comparison."""

    def offers_summary(r: dict[str, Any]) -> str:
        parts = []
        for o in r["offers"]:
            gbps = _fmt(o["per_node_gbps"])
            price = o["from_usd_per_gpu_hour"]
            price_txt = f"${price:g}/GPU-h" if price is not None else "price unknown"
            parts.append(f"{o['gpu']} · {_fmt(o['fabric'])} {gbps} Gb/s · {price_txt}")
        return "\n".join(parts) or "none listed"

    def fabrics(r: dict[str, Any]) -> str:
        kinds = sorted({o["fabric"] for o in r["offers"] if o["fabric"]})
        return ", ".join(kinds) or "unknown"

    def rdma(r: dict[str, Any]) -> str:
        values = {o["gpudirect_rdma"] for o in r["offers"]}
        return ", ".join(sorted(_yn(v) for v in values)) or "unknown"

    def orch(r: dict[str, Any]) -> str:
        o = r["orchestration"]
        return (
            f"Slurm: {_yn(o['managed_slurm'])}; Kubernetes: {_yn(o['managed_kubernetes'])}; "
            f"NCCL set up: {_yn(o['nccl_preconfigured'])}"
        )

    def prov(r: dict[str, Any]) -> str:
        p = r["provisioning"]
        terms = ", ".join(p["reserved_terms"]) or "unknown"
        return (
            f"on-demand clusters: {_yn(p['on_demand_clusters'])}; reserved: "
            f"{_yn(p['reserved'])} ({terms}); waitlist: {_yn(p['waitlist'])}"
        )

    def billing(r: dict[str, Any]) -> str:
        b = r["billing"]
        return f"{_fmt(b['granularity'])}; minimum: {_fmt(b['minimum'])}"

    def storage(r: dict[str, Any]) -> str:
        s = r["storage"]
        products = ", ".join(s["products"]) or "unknown"
        return f"shared FS: {_yn(s['shared_filesystem'])}; {products}"

    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("multi-node", lambda r: r["multi_node"]),
        ("fabric", fabrics),
        ("GPUDirect RDMA", rdma),
        ("orchestration", orch),
        ("provisioning", prov),
        ("billing", billing),
        ("storage", storage),
        ("offers", offers_summary),
    ]
    return [(label, [fn(r) for r in records]) for label, fn in rows]


@app.command()
def compare(
    slugs: Annotated[list[str], typer.Argument(help="2 to 4 provider slugs.")],
    fmt: FormatOpt = "table",
    database_url: DatabaseOpt = None,
) -> None:
    """Show providers side by side on the buyer's checklist."""
    fmt = _choice("--format", fmt, ("table", "json"))
    with engine_for(database_url).connect() as conn:
        try:
            records = compare_records(conn, slugs)
        except ValueError as exc:
            raise fail(str(exc)) from None
    mark_freshness(records, settings_for(database_url).stale_after_days)
    if fmt == "json":
        _print_json(records)
        return
    table = Table(title="Checklist", show_lines=True, header_style="bold")
    table.add_column("")
    for r in records:
        table.add_column(r["name"], overflow="fold")
    for label, cells in compare_rows(records):
        table.add_row(label, *cells)
    out.print(table)


@app.command()
def serve(
    host: Annotated[str, typer.Option(envvar="HOST")] = "127.0.0.1",
    port: Annotated[int, typer.Option(envvar="PORT")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    database_url: DatabaseOpt = None,
) -> None:
    """Run the web site and the JSON API (builds the SQLite database first if missing)."""
    import os  # noqa: PLC0415

    import uvicorn  # noqa: PLC0415

    settings = settings_for(database_url)
    engine_for(database_url).dispose()  # builds when missing; fails early with a clear message
    if settings.database_url:
        os.environ["CLUSTERSCOUT_DATABASE_URL"] = settings.database_url
    out.print(f"serving on http://{host}:{port}/", highlight=False)
    uvicorn.run(
        "clusterscout.web.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
    )


model_commands.register(app, engine_for)
register_feeds(app)


def main() -> None:  # pragma: no cover
    """Entry point for ``python -m``."""
    app()
