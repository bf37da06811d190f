"""The database: open it (building or migrating as needed), build it from a catalog, validate."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Connection, Engine, inspect

from clusterscout.catalog.brackets import (
    BRACKETS_META_KEY,
    brackets_json,
    check_offers,
    load_brackets,
)
from clusterscout.catalog.calibration import parse_calibration
from clusterscout.catalog.changes import load_changes
from clusterscout.catalog.launch_data import load_launch
from clusterscout.catalog.load import LoadResult, load_catalog
from clusterscout.catalog.problems import Problem, has_errors
from clusterscout.catalog.texts import CatalogText, catalog_texts, launch_texts
from clusterscout.catalog.translations import translation_problems, translation_tables
from clusterscout.domain.models import CatalogData
from clusterscout.settings import Settings
from clusterscout.store import migrate, queries
from clusterscout.store.build import BuildStats, build_database, data_version, ensure_schema
from clusterscout.store.db import (
    THREADS_PER_PROCESS,
    DatabaseURLError,
    make_engine,
    snapshot_connection,
)

__all__ = [
    "THREADS_PER_PROCESS",
    "BuildStats",
    "CatalogInvalidError",
    "DatabaseURLError",
    "Snapshot",
    "build",
    "build_meta",
    "engine_for_url",
    "is_built",
    "needs_migration",
    "open_engine",
    "open_snapshot",
    "translatable_texts",
    "validate",
]


class CatalogInvalidError(Exception):
    """The catalog has errors; nothing was written."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(f"catalog has {len(problems)} problem(s)")
        self.problems = problems


def validate(data_dir: Path) -> LoadResult:
    """Load and check the catalog in ``data_dir``, the translations of its free text
    (``data_dir/locale``), ``launch.toml`` and ``changes.toml``; every problem is in the result.

    ``launch.toml`` (launch files) and ``changes.toml`` (the changes page and feeds) are read
    from the data folder, not the database, but their problems belong in every validate run.
    """
    result = load_catalog(data_dir)
    if result.catalog is not None:
        launch_problems: list[Problem] = []
        knowledge = load_launch(data_dir, launch_problems, result.catalog)
        texts = catalog_texts(result.catalog) + launch_texts(knowledge)
        result.problems.extend(translation_problems(data_dir, texts))
        result.problems.extend(launch_problems)
        brackets, _ = load_brackets(data_dir, result.catalog.gpus, result.problems)
        result.problems.extend(check_offers(brackets, result.catalog.offers))
        load_changes(data_dir, result.problems, result.catalog, datetime.now(UTC).date())
    return result


def translatable_texts(data_dir: Path, catalog: CatalogData) -> list[CatalogText]:
    """The catalog's free text and the launch notes pages show, in file order (the texts
    ``data_dir/locale`` translates); launch.toml problems are left to ``validate``."""
    return catalog_texts(catalog) + launch_texts(load_launch(data_dir, [], None))


def build(engine: Engine, data_dir: Path) -> tuple[BuildStats, list[Problem]]:
    """Validate ``data_dir`` and load it with its translations; raises CatalogInvalidError
    before touching the DB."""
    result = validate(data_dir)
    if result.catalog is None or has_errors(result.problems):
        raise CatalogInvalidError(result.problems)
    calibration_path = data_dir / "calibration.toml"
    calibration = None
    if calibration_path.is_file():
        calibration = calibration_path.read_text(encoding="utf-8")
        parse_calibration(calibration, str(calibration_path))  # refuse to store a broken one
    # Read again (validate checked it): the planner reads the brackets from the build.
    brackets = load_brackets(data_dir, result.catalog.gpus, [])
    translations = translation_tables(data_dir, translatable_texts(data_dir, result.catalog))
    stats = build_database(
        engine,
        result.catalog,
        data_version(data_dir),
        calibration,
        translations,
        extra_meta={BRACKETS_META_KEY: json.dumps(brackets_json(brackets))},
    )
    return stats, result.problems


def engine_for_url(url: str, *, query_time_limit_ms: int | None = None) -> Engine:
    """An engine for ``url`` (nothing is built).

    Raises:
        DatabaseURLError: when the URL cannot be used.
    """
    return make_engine(url, query_time_limit_ms=query_time_limit_ms)


def is_built(engine: Engine) -> bool:
    """True when the database has the catalog tables."""
    return inspect(engine).has_table("offers")


def open_engine(settings: Settings, *, build_if_missing: bool = True) -> Engine:
    """Engine for the configured database, building it from the catalog first when it is empty.

    A database built by an older release is migrated to the current schema first (the
    migrations are additive and fill new columns from the stored records), so reads never
    meet a missing column.
    """
    engine = make_engine(
        settings.resolved_database_url(),
        query_time_limit_ms=settings.query_time_limit_ms,
        pool_size=settings.db_pool_size,
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


def build_meta(conn: Connection) -> dict[str, str]:
    """What the build recorded: ``data_version``, ``built_at`` (empty when unbuilt)."""
    raw = queries.read_meta(conn)
    return {
        "data_version": raw.get("data_version", "unbuilt"),
        "built_at": raw.get("built_at", ""),
    }


@dataclass(slots=True)
class Snapshot:
    """One consistent read of the database: a connection and the data version it sees.

    Everything read through ``conn`` belongs to ``data_version``, because the version is
    written in the same transaction as the data and read here in the same snapshot.
    """

    conn: Connection
    data_version: str
    built_at: str

    def close(self) -> None:
        """End the read and return the connection to the pool."""
        self.conn.info.pop(queries.VERSION_KEY, None)
        self.conn.close()


def open_snapshot(engine: Engine) -> Snapshot:
    """Start a consistent read; the caller closes it (``Snapshot.close``)."""
    conn = snapshot_connection(engine)
    try:
        raw = queries.read_versions(conn)
    except Exception:
        conn.close()
        raise
    version = raw.get("data_version", "unbuilt")
    conn.info[queries.VERSION_KEY] = version
    return Snapshot(conn, version, raw.get("built_at", ""))
