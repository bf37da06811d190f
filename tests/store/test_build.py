"""Building the store: one transaction, idempotent, failed loads change nothing; both backends."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, func, select, text

from clusterscout.app.database import CatalogInvalidError, build, needs_migration, open_engine
from clusterscout.catalog.filters import OfferFilter, SortKey
from clusterscout.catalog.load import load_catalog
from clusterscout.domain.models import PriceTier
from clusterscout.settings import Settings
from clusterscout.store import migrate, queries
from clusterscout.store.build import build_database
from clusterscout.store.db import DatabaseURLError, make_engine
from clusterscout.store.migrate import current_revision, head_revision
from clusterscout.store.tables import metadata, offers, price_observations, providers


def _snapshot(engine: Engine) -> tuple[dict[str, int], str]:
    """Row counts and a content hash of every catalog table."""
    counts: dict[str, int] = {}
    digest = hashlib.sha256()
    with engine.connect() as conn:
        for table in (providers, offers, price_observations):
            counts[table.name] = conn.execute(select(func.count()).select_from(table)).scalar_one()
            cols = [c for c in table.c if c.name not in {"id", "observed_at"}] or list(table.c)
            for row in conn.execute(select(*cols).order_by(*cols[:2])):
                digest.update(repr(tuple(row)).encode())
    return counts, digest.hexdigest()


def test_build_loads_everything(fresh_engine: Engine, fixture_data_dir: Path) -> None:
    stats, problems = build(fresh_engine, fixture_data_dir)
    assert (stats.providers, stats.offers, stats.prices) == (3, 5, 5)
    assert problems == []
    with fresh_engine.connect() as conn:
        assert current_revision(conn) == head_revision()
        page = queries.list_offers(conn, OfferFilter(multi_node=True), SortKey.PRICE)
        assert [r["id"] for r in page.records] == [
            "alpha-a100-ib",
            "beta-mi300x-roce",
            "alpha-h100-ib",
            "beta-h100-eth",  # no price sorts last
            "beta-h100-pool",
        ]
        h100 = page.records[2]
        assert h100["sources"]["per_node_gbps"] == [
            {
                "url": "https://alpha.example.com/clusters",
                "checked_on": "2026-11-20",
                "kind": "primary",
                "published_on": None,
            }
        ]
        assert h100["from_usd_per_gpu_hour"] == 2.29
        assert queries.read_meta(conn)["data_version"] == stats.data_version


def test_rebuild_is_idempotent(fresh_engine: Engine, fixture_data_dir: Path) -> None:
    build(fresh_engine, fixture_data_dir)
    first = _snapshot(fresh_engine)
    build(fresh_engine, fixture_data_dir)
    assert _snapshot(fresh_engine) == first


def test_invalid_catalog_leaves_database_unchanged(
    fresh_engine: Engine, fixture_data_dir: Path, tmp_path: Path
) -> None:
    build(fresh_engine, fixture_data_dir)
    before = _snapshot(fresh_engine)
    broken = tmp_path / "data"
    shutil.copytree(fixture_data_dir, broken)
    path = broken / "providers" / "alpha.toml"
    path.write_text(path.read_text().replace("usd_per_gpu_hour = 2.99", "usd_per_gpu_hour = -1"))
    with pytest.raises(CatalogInvalidError) as info:
        build(fresh_engine, broken)
    assert any("usd_per_gpu_hour" in p.path for p in info.value.problems)
    assert _snapshot(fresh_engine) == before


def test_failure_mid_load_rolls_back(
    fresh_engine: Engine, fixture_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(fresh_engine, fixture_data_dir)
    before = _snapshot(fresh_engine)
    catalog = load_catalog(fixture_data_dir).catalog
    assert catalog is not None

    import clusterscout.store.build as build_module

    def explode(*_: object) -> None:
        raise RuntimeError("disk full")

    # Fails after the old rows were deleted and the new ones inserted, inside the transaction.
    monkeypatch.setattr(build_module, "refresh_current", explode)
    with pytest.raises(RuntimeError, match="disk full"):
        build_database(fresh_engine, catalog, "x")
    assert _snapshot(fresh_engine) == before


def test_migrations_match_the_table_definitions(
    fresh_engine: Engine, fixture_data_dir: Path
) -> None:
    build(fresh_engine, fixture_data_dir)
    with fresh_engine.connect() as conn:
        ctx = MigrationContext.configure(conn)
        diff = [d for d in compare_metadata(ctx, metadata) if d[0] != "remove_table"]
    assert diff == []


def test_migration_0003_fills_tier_prices_of_an_existing_database(
    fresh_engine: Engine, fixture_data_dir: Path
) -> None:
    build(fresh_engine, fixture_data_dir)
    with fresh_engine.begin() as conn:
        migrate.downgrade(conn, "0002")
        assert "usd_on_demand" not in {c["name"] for c in _columns(conn)}
        migrate.upgrade(conn)
    with fresh_engine.connect() as conn:
        rows = {
            r.id: (r.usd_on_demand, r.usd_reserved, r.usd_spot)
            for r in conn.execute(
                select(
                    offers.c.id, offers.c.usd_on_demand, offers.c.usd_reserved, offers.c.usd_spot
                )
            )
        }
        cheapest = queries.list_offers(conn, OfferFilter(price_tier=PriceTier.RESERVED))
    # From the fixture's record prices: on-demand 2.99 and reserved 2.29 for alpha-h100-ib.
    assert rows["alpha-h100-ib"] == (2.99, 2.29, None)
    assert rows["beta-h100-eth"] == (None, None, None)
    assert [r["id"] for r in cheapest.records] == ["beta-mi300x-roce", "alpha-h100-ib"]


def test_migration_0007_fills_the_clustermax_tier_and_offer_ratings(
    fresh_engine: Engine, fixture_data_dir: Path
) -> None:
    build(fresh_engine, fixture_data_dir)
    with fresh_engine.connect() as conn:
        built = {r.id: (r.clustermax_tier, r.record_json) for r in conn.execute(select(offers))}
    with fresh_engine.begin() as conn:
        migrate.downgrade(conn, "0006")
        assert "clustermax_tier" not in {c["name"] for c in _columns(conn)}
        old = conn.execute(select(offers.c.record_json)).scalars().first()
        assert old is not None
        assert "ratings" not in json.loads(old)
        migrate.upgrade(conn)
    with fresh_engine.connect() as conn:
        migrated = {r.id: (r.clustermax_tier, r.record_json) for r in conn.execute(select(offers))}
    # The migration reaches what a fresh build writes: alpha gold, beta not rated in 3.0.
    assert {k: v[0] for k, v in migrated.items()} == {k: v[0] for k, v in built.items()}
    assert migrated["alpha-h100-ib"][0] == "gold"
    assert migrated["beta-h100-eth"][0] == "not_rated"
    for offer_id, (_tier, record) in migrated.items():
        assert json.loads(record)["ratings"] == json.loads(built[offer_id][1])["ratings"]


def test_migration_0009_fills_the_checklist_facts(
    fresh_engine: Engine, fixture_data_dir: Path
) -> None:
    build(fresh_engine, fixture_data_dir)
    names = (
        "nccl_preconfigured",
        "billing_granularity",
        "shared_storage",
        "non_blocking",
        "rail_optimized",
        "locality_stated",
    )

    def facts(conn: Any) -> dict[str, tuple[Any, ...]]:
        columns = [offers.c.id, *(offers.c[n] for n in names)]
        return {r[0]: tuple(r[1:]) for r in conn.execute(select(*columns))}

    with fresh_engine.connect() as conn:
        built = facts(conn)
    with fresh_engine.begin() as conn:
        migrate.downgrade(conn, "0008")
        assert not set(names) & {c["name"] for c in _columns(conn)}
        migrate.upgrade(conn)
    with fresh_engine.connect() as conn:
        migrated = facts(conn)
    # The migration reaches what a fresh build writes, from the stored records alone.
    assert migrated == built
    assert migrated["alpha-h100-ib"] == (True, "per_minute", True, True, True, None)
    assert migrated["beta-mi300x-roce"] == (False, "per_month", False, False, None, True)


def test_opening_an_older_database_migrates_it_before_reading(
    tmp_path: Path, fixture_data_dir: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    settings = Settings(database_url=url, data_dir=fixture_data_dir)
    engine = open_engine(settings)
    with engine.begin() as conn:
        migrate.downgrade(conn, "0002")  # as a database built by the previous release
    assert needs_migration(engine)
    engine.dispose()
    engine = open_engine(settings)
    assert not needs_migration(engine)
    with engine.connect() as conn:
        page = queries.list_offers(conn, OfferFilter(price_tier=PriceTier.ON_DEMAND))
    assert {r["id"] for r in page.records} == {"alpha-h100-ib", "alpha-a100-ib"}
    engine.dispose()


def test_a_database_from_a_newer_release_is_refused_clearly(
    tmp_path: Path, fixture_data_dir: Path
) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'new.sqlite3'}", data_dir=fixture_data_dir
    )
    open_engine(settings).dispose()
    engine = make_engine(settings.resolved_database_url())
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    with pytest.raises(DatabaseURLError, match=r"schema \(9999\) is newer than this clusterscout"):
        open_engine(settings)


def _columns(conn: Any) -> list[dict[str, Any]]:
    from sqlalchemy import inspect

    return list(inspect(conn).get_columns("offers"))


def test_sqlite_time_limit_interrupts_long_queries(tmp_path: Path) -> None:
    from sqlalchemy.exc import OperationalError

    from clusterscout.store.db import make_engine

    engine = make_engine(f"sqlite:///{tmp_path / 'x.sqlite3'}", query_time_limit_ms=50)
    slow = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT count(*) FROM c WHERE x < 1e12"
    )
    with engine.connect() as conn, pytest.raises(OperationalError, match="interrupted"):
        conn.execute(text(slow))
    engine.dispose()


def test_records_read_in_a_snapshot_are_the_stored_ones_and_never_shared(
    fresh_engine: Engine, fixture_data_dir: Path
) -> None:
    from clusterscout.app.database import open_snapshot
    from clusterscout.store.tables import meta

    build(fresh_engine, fixture_data_dir)
    asks = [
        (OfferFilter(), SortKey.PRICE, None, 0),
        (OfferFilter(rdma=True), SortKey.GBPS, 3, 1),
        (OfferFilter(provider=("nope",)), SortKey.NODES, 5, 0),
        (OfferFilter(), SortKey.PROVIDER, 2, 10_000),
    ]
    with fresh_engine.connect() as conn:  # outside a snapshot: decoded from each row
        plain = [queries.list_offers(conn, *ask) for ask in asks]
    snap = open_snapshot(fresh_engine)
    try:
        for ask, expected in zip(asks, plain, strict=True):
            assert queries.list_offers(snap.conn, *ask) == expected
        first = queries.list_offers(snap.conn, OfferFilter()).records[0]
        first["prices"] = []  # as mark_freshness does, on the caller's copy
        first.clear()
        assert queries.list_offers(snap.conn, OfferFilter()) == plain[0]
    finally:
        snap.close()
    # A new data version (as a refresh writes one) is read afresh, not served from memory.
    one = plain[0].records[0]
    changed = {**one, "notes": "changed in this test"}
    with fresh_engine.begin() as conn:
        conn.execute(
            offers.update().where(offers.c.id == one["id"]).values(record_json=json.dumps(changed))
        )
        conn.execute(meta.update().where(meta.c.key == "data_version").values(value="v-test"))
    snap = open_snapshot(fresh_engine)
    try:
        assert snap.data_version == "v-test"
        found = queries.list_offers(snap.conn, OfferFilter()).records
        assert found[0] == changed
    finally:
        snap.close()
