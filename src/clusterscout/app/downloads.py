"""The whole catalog as versioned files: CSV and JSON per table, ``datapackage.json`` and a zip.

Every file name carries the data's build date and version
(``clusterscout-2026-12-01-1a2b3c4d5e6f/offers.csv``), so a citation names exactly the data it
used; the files change only with the data version (ADR 0016).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.app import offers
from clusterscout.catalog import datapackage
from clusterscout.catalog.datapackage import OFFERS, PRICES, PROVIDERS, TABLES, Table
from clusterscout.catalog.exports import offer_row, provider_row, to_csv
from clusterscout.store.prices import every_observation

PREFIX: Final = "clusterscout"
MEDIA_TYPES: Final = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "zip": "application/zip",
}
_UNSAFE: Final = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True, slots=True)
class Download:
    """One data version's files: ``name -> bytes`` (``offers.csv``, ``datapackage.json``, ...)."""

    stem: str
    built_on: str
    version: str
    files: dict[str, bytes]
    zip_bytes: bytes

    @property
    def zip_name(self) -> str:
        """``clusterscout-<date>-<version>.zip``."""
        return f"{self.stem}.zip"

    def sizes(self) -> dict[str, int]:
        """Bytes per file, the zip included."""
        return {**{n: len(b) for n, b in self.files.items()}, self.zip_name: len(self.zip_bytes)}


def stem_of(built_at: str, data_version: str) -> str:
    """``clusterscout-<build date>-<data version>`` with URL-safe characters only.

    >>> stem_of("2026-12-01T05:00:00+00:00", "1a2b3c+9f8e")
    'clusterscout-2026-12-01-1a2b3c-9f8e'
    """
    version = _UNSAFE.sub("-", data_version.lower()).strip("-") or "unbuilt"
    return f"{PREFIX}-{built_at[:10]}-{version}"


def _table_rows(conn: Connection) -> dict[str, list[dict[str, Any]]]:
    providers = [provider_row(r) for r in offers.list_providers(conn).records]
    offer_records = offers.find_offers(conn, {})[2].records
    prices = [
        {
            "offer_id": p["offer_id"],
            "provider": p["provider"],
            "tier": p["tier"],
            "term": p["term"],
            "term_days": p["term_days"],
            "usd_per_gpu_hour": p["usd_per_gpu_hour"],
            "as_of": p["as_of"],
            "source_url": p["source"]["url"],
            "source_kind": p["source"]["kind"],
            "source_checked_on": p["source"]["checked_on"],
            "feed": p["feed"],
            "observed_at": _utc(p["observed_at"]),
            "current": p["current"],
        }
        for p in every_observation(conn)
    ]
    return {
        PROVIDERS.name: _only(PROVIDERS, providers),
        OFFERS.name: _only(OFFERS, [offer_row(r) for r in offer_records]),
        PRICES.name: prices,
    }


def _only(table: Table, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{c: row[c] for c in table.column_names} for row in rows]


def _utc(stamp: str) -> str:
    """ISO 8601 in UTC with a ``Z`` (the Table Schema ``datetime`` default format)."""
    moment = datetime.fromisoformat(stamp)
    if moment.tzinfo is None:  # SQLite returns naive values; they were written in UTC
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build(conn: Connection, data_version: str, built_at: str, homepage: str) -> Download:
    """Every file of the download of the data ``conn`` reads.

    Args:
        conn: a read of the database (one snapshot, so all tables are of one version).
        data_version: that snapshot's data version.
        built_at: when the data was built (ISO 8601).
        homepage: the downloads page URL written into ``datapackage.json``.
    """
    stem = stem_of(built_at, data_version)
    rows = _table_rows(conn)
    files: dict[str, bytes] = {}
    for table in TABLES:
        files[f"{table.name}.csv"] = to_csv(rows[table.name], table.column_names).encode()
        files[f"{table.name}.json"] = _json(rows[table.name])
    package = datapackage.descriptor(
        TABLES,
        version=data_version,
        created=_utc(built_at),
        homepage=homepage,
        files={t.name: t.name for t in TABLES},
    )
    files["datapackage.json"] = _json(package)
    return Download(stem, built_at[:10], data_version, files, _zip(stem, built_at, files))


def _json(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=1) + "\n").encode()


def _zip(stem: str, built_at: str, files: dict[str, bytes]) -> bytes:
    # The build time as every entry's time: the same data always gives the same bytes (ETag).
    moment = datetime.fromisoformat(built_at)
    stamp = (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(f"{stem}/{name}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name])
    return buf.getvalue()
