"""Application services shared by the CLI, the web app and the Python API."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, inspect

from clusterscout.catalog.calibration import parse_calibration
from clusterscout.catalog.checks import gpu_index
from clusterscout.catalog.filters import OfferFilter, SortKey, parse_filter, parse_sort
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Problem, has_errors
from clusterscout.domain.ids import normalise_gpu_key
from clusterscout.domain.models import GpuSpec
from clusterscout.settings import Settings
from clusterscout.store import migrate, queries
from clusterscout.store.build import BuildStats, build_database, data_version, ensure_schema
from clusterscout.store.db import DatabaseURLError, make_engine
from clusterscout.store.prices import with_freshness
from clusterscout.store.queries import Page


class CatalogInvalidError(Exception):
    """The catalog has errors; nothing was written."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(f"catalog has {sum(1 for _ in problems)} problem(s)")
        self.problems = problems


def build(engine: Engine, data_dir: Path) -> tuple[BuildStats, list[Problem]]:
    """Validate ``data_dir`` and load it; raises CatalogInvalidError before touching the DB."""
    result = load_catalog(data_dir)
    if result.catalog is None or has_errors(result.problems):
        raise CatalogInvalidError(result.problems)
    calibration_path = data_dir / "calibration.toml"
    calibration = None
    if calibration_path.is_file():
        calibration = calibration_path.read_text(encoding="utf-8")
        parse_calibration(calibration, str(calibration_path))  # refuse to store a broken one
    stats = build_database(engine, result.catalog, data_version(data_dir), calibration)
    return stats, result.problems


def is_built(engine: Engine) -> bool:
    """True when the database has the catalog tables."""
    return inspect(engine).has_table("offers")


def open_engine(settings: Settings, *, build_if_missing: bool = True) -> Engine:
    """Engine for the configured database, building it from data/ first when it is empty.

    A database built by an older release is migrated to the current schema first (the
    migrations are additive and fill new columns from the stored records), so reads never
    meet a missing column.
    """
    engine = make_engine(
        settings.resolved_database_url(), query_time_limit_ms=settings.query_time_limit_ms
    )
    if not is_built(engine):
        if build_if_missing:
            build(engine, settings.data_dir)
    elif needs_migration(engine):
        ensure_schema(engine)
    return engine


def needs_migration(engine: Engine) -> bool:
    """True when the database's schema revision is older than the code's.

    Raises:
        DatabaseURLError: when the database was migrated by a newer release than this one.
    """
    with engine.connect() as conn:
        current = migrate.current_revision(conn)
    if not migrate.is_known(current):
        msg = f"the database schema ({current}) is newer than this clusterscout; upgrade it"
        raise DatabaseURLError(msg)
    return current != migrate.head_revision()


def gpu_specs(conn: Connection) -> tuple[GpuSpec, ...]:
    """GPU reference data stored with the build."""
    raw = queries.read_meta(conn).get("gpus_json")
    if not raw:
        return ()
    specs = []
    for item in json.loads(raw):
        item["aliases"] = tuple(item.get("aliases") or ())
        item["sources"] = ()
        specs.append(GpuSpec(**item))
    return tuple(specs)


@dataclass(frozen=True, slots=True)
class GpuResolver:
    """Maps canonical names and aliases (case-insensitive) to canonical GPU names."""

    index: Mapping[str, str]

    @classmethod
    def from_specs(cls, specs: Sequence[GpuSpec], extra: Sequence[str] = ()) -> GpuResolver:
        """Index specs' names and aliases plus any extra canonical names."""
        index = {k: g.name for k, g in gpu_index(tuple(specs)).items()}
        for name in extra:
            index.setdefault(normalise_gpu_key(name), name)
        return cls(index)

    def __call__(self, raw: str) -> str | None:
        return self.index.get(normalise_gpu_key(raw))


def resolver_for(conn: Connection) -> GpuResolver:
    """GPU resolver over the stored reference data and every GPU that has an offer."""
    return GpuResolver.from_specs(gpu_specs(conn), queries.gpu_names(conn))


def parse_offer_query(
    conn: Connection, params: Mapping[str, Sequence[str]]
) -> tuple[OfferFilter, SortKey]:
    """Filter and sort from raw parameters (query string or CLI), validated against the store."""
    params = dict(params)
    sort = parse_sort(_last(params.pop("sort", [])))
    known = queries.provider_slugs(conn)
    return parse_filter(params, resolver_for(conn), known.__contains__), sort


def _last(values: Sequence[str]) -> str | None:
    return values[-1] if values else None


def find_offers(
    conn: Connection,
    params: Mapping[str, Sequence[str]],
    limit: int | None = None,
    offset: int = 0,
) -> tuple[OfferFilter, SortKey, Page]:
    """Parse, then run the one offer query."""
    f, sort = parse_offer_query(conn, params)
    return f, sort, queries.list_offers(conn, f, sort, limit, offset)


def compare_records(conn: Connection, slugs: Sequence[str]) -> list[dict[str, Any]]:
    """Provider records (with offers) for a comparison, sorted by slug, duplicates removed.

    Raises:
        ValueError: when fewer than two or more than four distinct providers are asked for, or
            a slug is unknown.
    """
    wanted = sorted(dict.fromkeys(s.strip().lower() for s in slugs if s.strip()))
    known = queries.provider_slugs(conn)
    missing = [s for s in wanted if s not in known]
    if missing:
        msg = f"unknown provider(s): {', '.join(missing)}"
        raise ValueError(msg)
    if not 2 <= len(wanted) <= 4:
        msg = f"compare needs 2 to 4 distinct providers, got {len(wanted)}"
        raise ValueError(msg)
    return queries.get_providers(conn, wanted)


def mark_freshness(
    records: list[dict[str, Any]], stale_after_days: int, today: date | None = None
) -> list[dict[str, Any]]:
    """Add ``age_days`` and ``stale`` to every price of offer records (in place; returned).

    Provider detail records are handled too: their offers' prices are marked.
    """
    today = today or datetime.now(UTC).date()
    for record in records:
        if "prices" in record:
            record["prices"] = with_freshness(record["prices"], today, stale_after_days)
        for offer in record.get("offers", []):
            offer["prices"] = with_freshness(offer["prices"], today, stale_after_days)
    return records
