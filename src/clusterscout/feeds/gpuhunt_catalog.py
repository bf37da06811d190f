"""``gpuhunt``: the price catalog dstack publishes and its ``gpuhunt`` library reads.

Items are gpuhunt's own ``CatalogItem`` objects, parsed from its published CSV format
(``<provider>.csv`` inside ``<base>/<provider>/<version>/catalog.zip``) by gpuhunt's own row
loader. Unlike ``gpuhunt.storage.load``, which skips malformed rows with a warning, any bad
row here fails the whole feed, so a half-valid catalog is never applied.
"""

from __future__ import annotations

import csv
import io
import os
import threading
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import httpx

from clusterscout.feeds.base import FeedBatch, FeedError, FeedItem, per_gpu, positive_price
from clusterscout.feeds.tabular import read_rows, reject_duplicates

# gpuhunt's published catalog (gpuhunt._internal.catalog.CATALOG_URL); the same environment
# variable as gpuhunt's moves it elsewhere (a mirror, or a closed port in tests).
CATALOG_URL = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3"
CATALOG_URL_ENV = "GPUHUNT_CATALOG_URL"
# Providers gpuhunt publishes offline catalogs for (its OFFLINE_PROVIDERS); the others need
# their own API credentials and are out of scope here.
PUBLISHED_PROVIDERS = (
    "aws",
    "azure",
    "verda",
    "gcp",
    "lambdalabs",
    "nebius",
    "oci",
    "runpod",
    "cloudrift",
)
PROVIDER_ALIASES = {
    "lambdalabs": "lambda",
    "vastai": "vast-ai",
    "hotaisle": "hot-aisle",
    "datacrunch": "verda",
}
REQUIRED_COLUMNS = ("instance_name", "location", "price", "cpu", "memory", "gpu_count", "spot")
OPTIONAL_COLUMNS = (
    "gpu_name",
    "gpu_memory",
    "disk_size",
    "gpu_vendor",
    "flags",
    "cpu_arch",
    "provider_data",
)
DEFAULT_TIMEOUT_S = 10.0
# httpx timeouts do not cover name resolution, so the whole download also has a deadline.
DEFAULT_DEADLINE_S = 120.0


def our_provider(gpuhunt_provider: str) -> str:
    """Our provider slug for a gpuhunt provider name."""
    name = gpuhunt_provider.lower()
    return PROVIDER_ALIASES.get(name, name)


def items_to_feed(items: Iterable[Any], source_url: str, today: date) -> list[FeedItem]:
    """Map gpuhunt ``CatalogItem`` objects to feed items (USD per GPU-hour).

    Items without GPUs yield nothing; ``spot`` items become the ``spot`` tier.

    Raises:
        FeedError: for a price that is zero, negative or not finite.
    """
    out: list[FeedItem] = []
    for item in items:
        where = f"gpuhunt {item.provider} {item.instance_name} in {item.location}"
        price = positive_price(item.price, "price", where)
        if price is None or not item.gpu_count or not item.gpu_name:
            continue
        count = int(item.gpu_count)
        memory = float(item.gpu_memory) if item.gpu_memory else None
        out.append(
            FeedItem(
                tier="spot" if item.spot else "on_demand",
                usd_per_gpu_hour=per_gpu(price, count),
                source_url=source_url,
                as_of=today,
                provider=our_provider(str(item.provider)),
                instance_type=str(item.instance_name),
                gpu_name=str(item.gpu_name),
                gpu_memory_gib=memory,
                gpu_count=count,
                region=str(item.location),
                usd_per_instance_hour=price,
            )
        )
    return out


def parse_catalog_csv(text: str, provider: str, where: str) -> list[Any]:
    """gpuhunt ``CatalogItem`` objects from one published ``<provider>.csv``.

    Raises:
        FeedError: for an unknown layout, a truncated file, a bad row or a duplicate row.
    """
    from gpuhunt._internal.storage import item_from_row  # noqa: PLC0415 - optional dependency

    rows = read_rows(text, where, required=REQUIRED_COLUMNS, optional=OPTIONAL_COLUMNS)
    reject_duplicates(
        rows, lambda r: tuple(sorted(r.values.items())), lambda r: f"{where}: line {r.line}"
    )
    items = []
    for row in rows:
        try:
            items.append(item_from_row(row.values, provider=provider))
        except (ValueError, TypeError) as exc:
            msg = f"{where}: line {row.line}: {exc}"
            raise FeedError(msg) from None
    return items


def _zip_items(data: bytes, where: str, only: str | None = None) -> list[tuple[str, Any]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        msg = f"{where}: not a zip archive ({exc}); the download looks truncated"
        raise FeedError(msg) from None
    names = [n for n in archive.namelist() if n.endswith(".csv")]
    if only is not None:
        names = [n for n in names if n == f"{only}.csv"]
        if not names:
            msg = f"{where}: no {only}.csv inside the archive"
            raise FeedError(msg)
    out: list[tuple[str, Any]] = []
    with archive:
        for name in names:
            provider = Path(name).stem
            try:
                text = archive.read(name).decode("utf-8")
            except (zipfile.BadZipFile, UnicodeDecodeError, OSError) as exc:
                msg = f"{where}: {name}: cannot read ({exc})"
                raise FeedError(msg) from None
            out.extend((provider, i) for i in parse_catalog_csv(text, provider, f"{where}:{name}"))
    return out


def load_path(path: Path) -> list[tuple[str, Any]]:
    """(provider, CatalogItem) pairs from a recorded catalog: ``.csv``, ``.zip`` or directory.

    Raises:
        FeedError: when the path is missing or any file in it is bad.
    """
    if path.is_dir():
        files = sorted(path.glob("*.csv"))
        if not files:
            msg = f"{path}: no <provider>.csv files in this directory"
            raise FeedError(msg)
        return [pair for f in files for pair in load_path(f)]
    if not path.exists():
        msg = f"{path}: no such file"
        raise FeedError(msg)
    if path.suffix == ".zip":
        return _zip_items(path.read_bytes(), str(path))
    if path.suffix == ".csv":
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            msg = f"{path}: cannot read: {exc}"
            raise FeedError(msg) from None
        return [(path.stem, i) for i in parse_catalog_csv(text, path.stem, path.name)]
    msg = f"{path}: expected a gpuhunt <provider>.csv, a catalog.zip or a directory"
    raise FeedError(msg)


def _get(client: httpx.Client, url: str) -> httpx.Response:
    try:
        response = client.get(url)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        msg = f"cannot download {url}: {type(exc).__name__}: {exc}"
        raise FeedError(msg) from None
    return response


@dataclass(frozen=True, slots=True)
class GpuhuntFeed:
    """Downloads gpuhunt's published catalogs (or reads a recorded one from ``--input``).

    Every request has a short timeout, and the first failed download fails the feed: without
    network the feed fails within seconds instead of hanging.
    """

    name: str = "gpuhunt"
    needs_input: bool = False
    summary: str = "dstack gpuhunt published catalogs (aws, azure, gcp, lambda, nebius, oci, ...)"
    providers: Sequence[str] = PUBLISHED_PROVIDERS
    timeout_s: float = DEFAULT_TIMEOUT_S
    deadline_s: float = DEFAULT_DEADLINE_S
    base_url: str | None = None
    transport: httpx.BaseTransport | None = field(default=None, repr=False)

    def catalog_url(self) -> str:
        """Where the published catalogs are read from."""
        return (self.base_url or os.environ.get(CATALOG_URL_ENV) or CATALOG_URL).rstrip("/")

    def fetch(self, source: Path | None, *, today: date) -> FeedBatch:
        """Read a recorded catalog, or download the published one; validate everything."""
        base = self.catalog_url()
        if source is not None:
            pairs = load_path(source)
            items = [
                f for provider, i in pairs for f in items_to_feed([i], f"{base}/{provider}", today)
            ]
            return FeedBatch(tuple(items), len(pairs), str(source))
        outcome: list[FeedBatch | BaseException] = []

        def work() -> None:
            try:
                outcome.append(self._download(base, today))
            except BaseException as exc:  # re-raised in the caller's thread
                outcome.append(exc)

        # A daemon thread: if the network hangs past the deadline, the CLI can still exit.
        worker = threading.Thread(target=work, name="gpuhunt-download", daemon=True)
        worker.start()
        worker.join(self.deadline_s)
        if not outcome:
            msg = f"{base}: no complete answer within {self.deadline_s:g} s"
            raise FeedError(msg)
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    def _download(self, base: str, today: date) -> FeedBatch:
        timeout = httpx.Timeout(self.timeout_s, connect=min(self.timeout_s, 5.0))
        items: list[FeedItem] = []
        rows = 0
        with httpx.Client(timeout=timeout, transport=self.transport) as client:
            for provider in self.providers:
                version = _get(client, f"{base}/{provider}/version").text.strip()
                if not version or "/" in version or len(version) > 64:
                    msg = f"{base}/{provider}/version: unexpected version {version[:40]!r}"
                    raise FeedError(msg)
                url = f"{base}/{provider}/{version}/catalog.zip"
                pairs = _zip_items(_get(client, url).content, url, only=provider)
                rows += len(pairs)
                items.extend(items_to_feed((i for _, i in pairs), url, today))
        return FeedBatch(tuple(items), rows, base)


def write_catalog_csv(items: Iterable[Any], path: Path) -> None:
    """Write gpuhunt items in its published CSV format, using gpuhunt's own serialiser."""
    from gpuhunt._internal.storage import (  # noqa: PLC0415 - optional dependency
        CATALOG_V2_FIELDS,
        item_to_row,
    )

    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CATALOG_V2_FIELDS)
        writer.writeheader()
        for item in items:
            writer.writerow(item_to_row(item))
