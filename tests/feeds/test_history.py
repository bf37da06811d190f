"""History: observations accumulate, the newest is current, ages and staleness are marked."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from clusterscout.app.database import build
from clusterscout.catalog.filters import OfferFilter
from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.runner import run_feed
from clusterscout.store import queries
from clusterscout.store.prices import (
    current_prices,
    price_history_view,
    stale_prices,
    with_freshness,
)
from tests.feeds.conftest import FEEDS_CATALOG, observation_count

HEADER = "offer_id,tier,usd_per_gpu_hour,as_of,source_url\n"
URL = "https://nebius.com/prices"


def _refresh(engine: Engine, tmp_path: Path, price: float, as_of: str, day: int) -> None:
    path = tmp_path / f"p{day}.csv"
    path.write_text(f"{HEADER}nebius-h100-ib,on_demand,{price},{as_of},{URL}\n", encoding="utf-8")
    report = run_feed(engine, FileFeed(), path, now=datetime(2026, 11, day, 9, tzinfo=UTC))
    assert report.ok, report.message


def test_observations_accumulate_and_newest_is_current(engine: Engine, tmp_path: Path) -> None:
    before = observation_count(engine)
    _refresh(engine, tmp_path, 4.6, "2026-11-10", 10)
    _refresh(engine, tmp_path, 4.8, "2026-11-20", 20)
    _refresh(engine, tmp_path, 4.8, "2026-11-25", 25)  # unchanged price, fresher date
    assert observation_count(engine) == before + 3
    with engine.connect() as conn:
        [current] = current_prices(conn, ["nebius-h100-ib"])["nebius-h100-ib"]
        assert (current["usd_per_gpu_hour"], current["as_of"]) == (4.8, "2026-11-25")
        view = price_history_view(conn, "nebius-h100-ib", date(2026, 11, 30), 30)
        record = queries.list_offers(conn, OfferFilter(provider=("nebius",))).records
    assert view is not None
    assert [o["usd_per_gpu_hour"] for o in view["observations"]] == [4.8, 4.8, 4.6, 4.5]
    assert [o["feed"] for o in view["observations"]] == ["file", "file", "file", "catalog"]
    [series] = view["series"]
    assert [p["as_of"] for p in series["points"]] == [
        "2026-10-07",
        "2026-11-10",
        "2026-11-20",
        "2026-11-25",
    ]
    assert view["current"][0]["age_days"] == 5
    assert view["current"][0]["stale"] is False
    # The offer's denormalised record (listings, API) shows the current price.
    h100 = next(r for r in record if r["id"] == "nebius-h100-ib")
    assert h100["from_usd_per_gpu_hour"] == 4.8


def test_history_survives_a_catalog_rebuild(engine: Engine, tmp_path: Path) -> None:
    _refresh(engine, tmp_path, 4.6, "2026-11-10", 10)
    build(engine, FEEDS_CATALOG)
    with engine.connect() as conn:
        view = price_history_view(conn, "nebius-h100-ib", date(2026, 11, 30), 30)
        [current] = current_prices(conn, ["nebius-h100-ib"])["nebius-h100-ib"]
    assert view is not None
    assert sorted(o["feed"] for o in view["observations"]) == ["catalog", "file"]
    assert current["usd_per_gpu_hour"] == 4.6


def test_unknown_offer_has_no_history(engine: Engine) -> None:
    with engine.connect() as conn:
        assert price_history_view(conn, "nope", date(2026, 11, 30), 30) is None


def test_with_freshness_marks_old_prices() -> None:
    prices: list[dict[str, Any]] = [
        {"as_of": "2026-10-01"},
        {"as_of": date(2026, 11, 29)},
        {"as_of": "2026-10-31"},
    ]
    marked = with_freshness(prices, date(2026, 11, 30), 30)
    assert [(p["age_days"], p["stale"]) for p in marked] == [(60, True), (1, False), (30, False)]


def test_stale_prices_and_facts(engine: Engine, tmp_path: Path) -> None:
    today = date(2026, 11, 30)
    with engine.connect() as conn:
        stale = stale_prices(conn, today, 30)
        facts = queries.stale_facts(conn, today, 180)
    # Nebius prices are as of 2026-10-07 (54 days); OCI's as of 2026-11-01 (29 days) are not.
    assert {(p["offer_id"], p["age_days"]) for p in stale} == {
        ("nebius-h100-ib", 54),
        ("nebius-h200-ib", 54),
    }
    assert {p["provider"] for p in stale} == {"nebius"}
    assert [(f["provider"], f["scope"], f["field"]) for f in facts] == [
        ("nebius", "provider", "storage")
    ]
    assert facts[0]["checked_on"] == "2025-01-10"
    # A fresh observation takes the offer off the stale list.
    _refresh(engine, tmp_path, 4.5, "2026-11-29", 29)
    with engine.connect() as conn:
        stale = stale_prices(conn, today, 30)
        assert {p["offer_id"] for p in stale} == {"nebius-h200-ib"}
        assert stale_prices(conn, today, 60) == []


def test_a_price_refresh_gives_the_data_a_new_version(engine: Engine, tmp_path: Path) -> None:
    with engine.connect() as conn:
        built = queries.read_meta(conn)["data_version"]
    _refresh(engine, tmp_path, 4.6, "2026-11-10", 10)
    with engine.connect() as conn:
        first = queries.read_meta(conn)["data_version"]
    _refresh(engine, tmp_path, 4.7, "2026-11-11", 11)
    with engine.connect() as conn:
        second = queries.read_meta(conn)["data_version"]
    # Caches and ETags keyed on data_version must not serve the previous prices.
    assert len({built, first, second}) == 3
    assert first.startswith(built + "+")
    assert second.split("+")[0] == built
    # A rebuild keeps the refreshed prices, so it must not go back to the version of the
    # catalog prices (clients would keep their old ETags); the same content, same version.
    build(engine, FEEDS_CATALOG)
    with engine.connect() as conn:
        assert queries.read_meta(conn)["data_version"] == second
