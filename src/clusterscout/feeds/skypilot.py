"""``skypilot-csv``: SkyPilot's public catalog format (``catalogs/v8/<cloud>/vms.csv``).

Column order varies by cloud; ``GpuInfo`` is a Python literal (not JSON); ``Price`` and
``SpotPrice`` are USD per instance-hour, converted here to USD per GPU-hour.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from clusterscout.feeds.base import FeedBatch, FeedError, FeedItem, per_gpu, positive_price
from clusterscout.feeds.tabular import CsvRow, read_rows, read_text, reject_duplicates

CATALOG_URL = "https://github.com/skypilot-org/skypilot-catalog/blob/master/catalogs/v8"
REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
OPTIONAL_COLUMNS = (
    "vCPUs",
    "MemoryGiB",
    "GpuInfo",
    "SpotPrice",
    "AvailabilityZone",
    "Generation",
)
# SkyPilot cloud directory names that differ from our provider slugs.
CLOUD_TO_PROVIDER = {
    "cudo": "cudo-compute",
    "do": "digitalocean",
    "ibm": "ibm-cloud",
    "primeintellect": "prime-intellect",
    "scp": "samsung-sds-cloud",
    "vast": "vast-ai",
}
# SkyPilot accelerator names that are not aliases in gpus.toml.
ACCELERATOR_ALIASES = {"H100-MEGA": "H100"}


def cloud_of(path: Path) -> str:
    """The SkyPilot cloud a file belongs to: ``<cloud>/vms.csv`` or ``<cloud>-vms*.csv``.

    Raises:
        FeedError: when the name says nothing about the cloud.
    """
    if path.name == "vms.csv" and path.parent.name:
        cloud = path.parent.name
    elif "-vms" in path.name:
        cloud = path.name.split("-vms", 1)[0]
    else:
        msg = (
            f"{path}: cannot tell the cloud from the file name; "
            "name it <cloud>/vms.csv or <cloud>-vms.csv"
        )
        raise FeedError(msg)
    return cloud.lower()


def _gpu_memory_gib(raw: str, where: str) -> float | None:
    if not raw:
        return None
    try:
        info: Any = ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        msg = f"{where}: GpuInfo is not a Python literal: {raw[:60]!r}"
        raise FeedError(msg) from None
    try:
        mib = info["Gpus"][0]["MemoryInfo"]["SizeInMiB"]
        return round(float(mib) / 1024, 1)
    except (KeyError, IndexError, TypeError, ValueError):
        msg = f"{where}: GpuInfo has no Gpus[0].MemoryInfo.SizeInMiB: {raw[:60]!r}"
        raise FeedError(msg) from None


def _gpu_count(raw: str, where: str) -> float:
    if not raw:
        return 0.0
    try:
        count = float(raw)
    except ValueError:
        msg = f"{where}: AcceleratorCount {raw!r} is not a number"
        raise FeedError(msg) from None
    if count < 0:
        msg = f"{where}: AcceleratorCount {raw!r} is negative"
        raise FeedError(msg)
    return count


def parse(
    text: str, where: str, provider: str, source_url: str, today: date
) -> tuple[list[FeedItem], int]:
    """Feed items from the text of one ``vms.csv`` (one per GPU row and priced tier), and the
    number of data rows read.

    CPU-only rows and fractional-GPU rows are validated but yield no item.

    Raises:
        FeedError: for any problem in the file; nothing is returned then.
    """
    rows = read_rows(
        text,
        where,
        required=REQUIRED_COLUMNS,
        optional=OPTIONAL_COLUMNS,
        require_final_newline=True,
    )

    def key(r: CsvRow) -> tuple[str, str, str]:
        return (r.get("InstanceType"), r.get("Region"), r.get("AvailabilityZone"))

    reject_duplicates(rows, key, lambda r: f"{where}: line {r.line}")
    items: list[FeedItem] = []
    for row in rows:
        at = f"{where}: line {row.line}"
        if not row.get("InstanceType") or not row.get("Region"):
            msg = f"{at}: InstanceType and Region must not be empty"
            raise FeedError(msg)
        on_demand = positive_price(row.get("Price"), "Price", at)
        spot = positive_price(row.get("SpotPrice"), "SpotPrice", at)
        count = _gpu_count(row.get("AcceleratorCount"), at)
        memory = _gpu_memory_gib(row.get("GpuInfo"), at)
        name = row.get("AcceleratorName")
        if not name or count == 0 or not count.is_integer():
            continue
        for tier, price in (("on_demand", on_demand), ("spot", spot)):
            if price is None:
                continue
            items.append(
                _item(row, provider, source_url, today, tier, price, int(count), name, memory)
            )
    return items, len(rows)


def _item(
    row: CsvRow,
    provider: str,
    source_url: str,
    today: date,
    tier: str,
    price: float,
    count: int,
    name: str,
    memory: float | None,
) -> FeedItem:
    region = row.get("Region")
    zone = row.get("AvailabilityZone")
    return FeedItem(
        tier=tier,
        usd_per_gpu_hour=per_gpu(price, count),
        source_url=source_url,
        as_of=today,
        provider=provider,
        instance_type=row.get("InstanceType"),
        gpu_name=ACCELERATOR_ALIASES.get(name, name),
        gpu_memory_gib=memory,
        gpu_count=count,
        region=f"{region}/{zone}" if zone else region,
        usd_per_instance_hour=price,
        line=row.line,
    )


@dataclass(frozen=True, slots=True)
class SkypilotCsvFeed:
    """Reads one SkyPilot ``vms.csv`` given with ``--input``."""

    name: str = "skypilot-csv"
    needs_input: bool = True
    summary: str = "SkyPilot catalog vms.csv (v8): per-instance prices of one cloud"

    def fetch(self, source: Path | None, *, today: date) -> FeedBatch:
        """Read and validate the file; see :func:`parse`."""
        if source is None:
            msg = "skypilot-csv needs --input PATH (a SkyPilot vms.csv)"
            raise FeedError(msg)
        cloud = cloud_of(source)
        text = read_text(source)
        provider = CLOUD_TO_PROVIDER.get(cloud, cloud)
        url = f"{CATALOG_URL}/{cloud}/vms.csv"
        items, rows = parse(text, source.name, provider, url, today)
        return FeedBatch(tuple(items), rows, str(source))
