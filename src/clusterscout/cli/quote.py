"""``clusterscout quote``: N GPUs for M months, totalled per provider (``GET /api/v1/quote``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from clusterscout.app import quote_service
from clusterscout.cli.options import (
    choice,
    database_url_option,
    engine_for,
    format_option,
    reporting,
    settings_for,
)
from clusterscout.cli.output import Column, out, print_json, print_table

TIERS = {
    "on_demand": "on-demand",
    "reserved": "reserved",
    "capacity_block": "capacity block",
    "discount": "commitment discount",
}


def _money(total: dict[str, Any], currency: str) -> str:
    amount = total.get(currency)
    if amount is None:
        return "—"
    low, high = round(amount["low"]), round(amount["high"])
    text = f"{low:,} {currency}"
    return text if low == high else f"{low:,} – {high:,} {currency}"


def _how(option: dict[str, Any]) -> str:
    parts = [TIERS.get(option["tier"], option["tier"]), option["offer_id"]]
    if option["term_days"]:
        parts.append(f"term {option['term_days']} days")
    if option["billed_beyond_run"]:
        parts.append(f"pays {option['billed_hours']:,.0f} h (minimum or whole terms)")
    if option["prepay"]:
        parts.append("paid up front")
    if not option["capacity_known"]:
        parts.append("largest cluster unknown")
    return "; ".join(parts)


@click.command("quote")
@click.option("--gpus", default="64", show_default=True, metavar="N", help="GPUs at once.")
@click.option(
    "--months",
    default="6",
    show_default=True,
    metavar="M",
    help="Calendar months from --start (a fraction counts 730 hours per month).",
)
@click.option("--gpu", default=None, metavar="GPU", help="Only this GPU model (alias: H100).")
@click.option("--start", default=None, metavar="YYYY-MM-DD", help="First day (default: today).")
@click.option(
    "--currency",
    default="USD",
    show_default=True,
    metavar="USD|EUR|BRL",
    help="Currency of the table (JSON has all three).",
)
@click.option("--all-options", is_flag=True, help="List every option, not only the cheapest.")
@format_option("table", ("table", "json"))
@database_url_option
def quote(
    gpus: str,
    months: str,
    gpu: str | None,
    start: str | None,
    currency: str,
    all_options: bool,
    fmt: str,
    database_url: str | None,
) -> None:
    """Total per provider for N GPUs over M months, or why there is none.

    Each published way to buy the run counts (on-demand, reserved and capacity-block terms,
    commitment discounts): a run shorter than a term or minimum pays it whole, "up to X% off"
    gives a range. Amounts in USD, with EUR and BRL from the catalog's dated ECB rates.
    """
    fmt = choice("--format", fmt, ("table", "json"))
    settings = settings_for(database_url)
    raw = {"gpus": gpus, "months": months, "gpu": gpu, "start": start}
    with engine_for(database_url).connect() as conn, reporting():
        currency = quote_service.parse_currency(currency)
        asked = quote_service.parse_request(conn, raw, datetime.now(UTC).date())
        rates = quote_service.rates_of(settings.data_dir)
        body = quote_service.quote(conn, asked, rates)
    if fmt == "json":
        print_json(body)
        return
    meta = body["meta"]
    title = (
        f"{meta['gpus']} × {meta['gpu'] or 'any GPU'} for {meta['months']:g} months, "
        f"{meta['start']} to {meta['end']}"
    )
    rows = []
    for p in body["data"]:
        options = p["options"] if all_options else p["options"][:1]
        if not options:
            reason = p["reason"] or ""
            if p["largest_gpus"]:
                reason += f" ({p['largest_gpus']:,} GPUs)"
            rows.append([p["name"], "—", reason])
        rows.extend([p["name"], _money(o["total"], currency), _how(o)] for o in options)
    print_table(title, [Column("provider"), Column("total", right=True), Column("how")], rows)
    rates_meta = meta["exchange_rates"]
    if rates_meta and currency != "USD":
        out.print(
            f"ECB reference rates of {rates_meta['date']}: 1 EUR = {rates_meta['usd_per_eur']} "
            f"USD = {rates_meta['brl_per_eur']} BRL; providers bill in their own currency.",
            highlight=False,
        )


COMMANDS: tuple[click.Command, ...] = (quote,)
