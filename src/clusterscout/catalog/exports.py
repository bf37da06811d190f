"""Flat rows of offer and provider records for CSV and terminal tables."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any, Final

from clusterscout.catalog.measured import headline, run_label

OFFER_COLUMNS: Final = (
    "id",
    "provider",
    "gpu",
    "gpus_per_node",
    "fabric",
    "per_node_gbps",
    "gpudirect_rdma",
    "min_nodes",
    "max_nodes",
    "max_nodes_by_quote",
    "on_demand_clusters",
    "managed_slurm",
    "managed_kubernetes",
    "from_usd_per_gpu_hour",
    "price_tiers",
    "stale_prices",
    "measured_busbw_gbs",
    "measured_run",
    "predicted_busbw_gbs",
    "source_urls",
)

PROVIDER_COLUMNS: Final = (
    "slug",
    "name",
    "multi_node",
    "hq_country",
    "regions",
    "offer_count",
    "url",
    "source_urls",
)


FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")
"""First characters a spreadsheet may read as the start of a formula (OWASP CSV injection)."""


def _cell(value: Any) -> str:
    # CSV has no null: unknown is written as an empty cell, booleans as true/false.
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return safe_text_cell(value)
    return str(value)  # a number stays a number, negative ones included


def safe_text_cell(text: str) -> str:
    """``text`` for a CSV cell a spreadsheet shows as text: one that would start a formula
    gets a leading apostrophe (the OWASP rule for CSV injection; a spreadsheet hides it)."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _source_urls(record: dict[str, Any]) -> str:
    urls = dict.fromkeys(ref["url"] for refs in record["sources"].values() for ref in refs)
    return " ".join(urls)


def offer_row(record: dict[str, Any]) -> dict[str, Any]:
    """One offer record flattened to OFFER_COLUMNS (values keep their types)."""
    tiers = sorted({p["tier"] for p in record["prices"]})
    return {
        "id": record["id"],
        "provider": record["provider"],
        "gpu": record["gpu"],
        "gpus_per_node": record["gpus_per_node"],
        "fabric": record["fabric"],
        "per_node_gbps": record["per_node_gbps"],
        "gpudirect_rdma": record["gpudirect_rdma"],
        "min_nodes": record["min_nodes"],
        "max_nodes": record["max_nodes"],
        "max_nodes_by_quote": record["max_nodes_by_quote"],
        "on_demand_clusters": record["provisioning"]["on_demand_clusters"],
        "managed_slurm": record["orchestration"]["managed_slurm"],
        "managed_kubernetes": record["orchestration"]["managed_kubernetes"],
        "from_usd_per_gpu_hour": record["from_usd_per_gpu_hour"],
        "price_tiers": " ".join(tiers) or None,
        # Present only once freshness was marked (CLI and API do); None means not computed.
        "stale_prices": (
            sum(1 for p in record["prices"] if p.get("stale"))
            if all("stale" in p for p in record["prices"]) and record["prices"]
            else None
        ),
        **_measured_cells(record),
        "source_urls": _source_urls(record),
    }


def _measured_cells(record: dict[str, Any]) -> dict[str, Any]:
    # The run the planner would use when there is one, else the first published.
    runs = record.get("measured_fabric") or []
    best = headline(runs)
    if best is None:
        return {"measured_busbw_gbs": None, "measured_run": None, "predicted_busbw_gbs": None}
    return {
        "measured_busbw_gbs": best["busbw_gbs"],
        "measured_run": run_label(best),
        "predicted_busbw_gbs": best["predicted_busbw_gbs"],
    }


def provider_row(record: dict[str, Any]) -> dict[str, Any]:
    """One provider record flattened to PROVIDER_COLUMNS."""
    return {
        "slug": record["slug"],
        "name": record["name"],
        "multi_node": record["multi_node"],
        "hq_country": record["hq_country"],
        "regions": "; ".join(record["regions"]) or None,
        "offer_count": record["offer_count"],
        "url": record["url"],
        "source_urls": _source_urls(record),
    }


def to_csv(rows: Iterable[dict[str, Any]], columns: tuple[str, ...]) -> str:
    """Rows as CSV text with a header line."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row[c]) for c in columns])
    return buf.getvalue()
