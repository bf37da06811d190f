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


BASES = {
    "list_price": "on-demand list price x run (no commitment price published)",
    "reserved_term": "reserved term",
    "capacity_block": "capacity block",
    "commitment_discount": "commitment discount on the list price",
}


def _how(option: dict[str, Any]) -> str:
    parts = [BASES.get(option["basis"], option["basis"]), option["offer_id"]]
    if option["term_days"]:
        parts.append(f"term {option['term_days']} days")
    if option["billed_beyond_run"]:
        parts.append(f"pays {option['billed_hours']:,.0f} h (minimum or whole terms)")
    if option["prepay"]:
        parts.append("paid up front")
    if not option["capacity_known"]:
        parts.append("largest cluster unknown")
    if option["as_of"]:
        age = f"price of {option['as_of']}, {option['age_days']:,} days old"
        parts.append(f"{age}, STALE" if option["stale"] else age)
    return "; ".join(parts)


def _reference(ref: dict[str, Any]) -> str:
    return (
        f"no price a run can be bought at; {ref['label']}: "
        f"median {ref['median_usd_per_gpu_hour']:.2f} USD "
        f"(range {ref['low_usd_per_gpu_hour']:.2f}-{ref['high_usd_per_gpu_hour']:.2f}) per "
        f"GPU-hour, {ref['tier'].replace('_', '-')} prices of {ref['prices']} {ref['gpu']} offers"
    )


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
    raw = {"gpus": gpus, "months": months, "gpu": gpu, "start": start, "currency": currency}
    today = datetime.now(UTC).date()
    with engine_for(database_url).connect() as conn, reporting():
        asked = quote_service.parse_request(conn, raw, today)
        currency = asked.currency
        rates = quote_service.rates_of(settings.data_dir)
        body = quote_service.quote(
            conn, asked, rates, today=today, stale_after_days=settings.stale_after_days
        )
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
        rank = "" if p["rank"] is None else f"{p['rank']}" + (" cheapest" if p["cheapest"] else "")
        if not options:
            closed = "".join(
                f"; lists {x['gpu']} at {x['usd_per_gpu_hour']:.2f} USD/GPU-h on demand "
                f"({x['as_of']}), but does not rent clusters on demand"
                for x in p["list_prices_not_bookable"]
            )
            if p["reference"]:
                ref = p["reference"]
                rows.append(
                    [rank, p["name"], _money(ref["total"], currency), _reference(ref) + closed]
                )
                continue
            reason = p["reason"] or ""
            if p["largest_gpus"]:
                reason += f" ({p['largest_gpus']:,} GPUs)"
            rows.append([rank, p["name"], "—", reason + closed])
        rows.extend([rank, p["name"], _money(o["total"], currency), _how(o)] for o in options)
    columns = [Column("#"), Column("provider"), Column("total", right=True), Column("how")]
    print_table(title, columns, rows)
    rates_meta = meta["exchange_rates"]
    if rates_meta and currency != "USD":
        out.print(
            f"ECB reference rates of {rates_meta['date']}: 1 EUR = {rates_meta['usd_per_eur']} "
            f"USD = {rates_meta['brl_per_eur']} BRL; providers bill in their own currency.",
            highlight=False,
        )


COMMANDS: tuple[click.Command, ...] = (quote,)
