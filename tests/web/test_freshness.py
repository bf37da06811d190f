"""Freshness: one data version over everything served, published with the data, in every answer."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from live import serving
from sqlalchemy import Engine
from web_support import TestClient

from clusterscout.app.database import build
from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.runner import run_feed
from clusterscout.settings import Settings
from clusterscout.store.db import make_engine
from clusterscout.web.app import create_app

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
OFFER = "alpha-h100-ib"
PRICES = f"/api/v1/offers/{OFFER}/prices"
LISTING = "/api/v1/offers?provider=alpha&limit=5"


def _feed(engine: Engine, tmp: Path, price: float) -> None:
    path = tmp / f"prices-{price}.csv"
    path.write_text(
        "offer_id,tier,usd_per_gpu_hour,as_of,source_url\n"
        f"{OFFER},on_demand,{price},{datetime.now(UTC).date()},https://alpha.example/prices\n",
        encoding="utf-8",
    )
    report = run_feed(engine, FileFeed(), path)
    assert report.ok, report.message


def _on_demand(prices: list[dict[str, Any]]) -> float:
    return float(next(p["usd_per_gpu_hour"] for p in prices if p["tier"] == "on_demand"))


def _seen(r: httpx.Response | Any) -> tuple[str, float]:
    body = r.json()
    if "current" in body:
        return body["meta"]["data_version"], _on_demand(body["current"])
    offer = next(o for o in body["data"] if o["id"] == OFFER)
    return body["meta"]["data_version"], _on_demand(offer["prices"])


def test_refresh_then_build_db_serves_the_new_price_with_a_new_etag(
    fresh_engine: Engine, tmp_path: Path
) -> None:
    build(fresh_engine, FIXTURE)
    url = fresh_engine.url.render_as_string(hide_password=False)
    settings = Settings(database_url=url, data_dir=FIXTURE, public_url="http://testserver")
    app = create_app(settings)
    client = TestClient(app)
    before = client.get(PRICES)
    old_version, old_price = _seen(before)
    new_price = round(old_price + 0.2, 2)
    _feed(fresh_engine, tmp_path, new_price)
    stats, _ = build(fresh_engine, FIXTURE)
    after = client.get(PRICES)
    version, price = _seen(after)
    assert price == new_price
    assert version == stats.data_version != old_version
    assert after.headers["etag"] != before.headers["etag"]
    # A client holding the old ETag gets the new answer, not 304.
    assert client.get(PRICES, headers={"If-None-Match": before.headers["etag"]}).status_code == 200
    assert _seen(client.get(LISTING)) == (version, price)
    assert f"{price:.2f}" in client.get("/en/providers/alpha/").text
    app.state.cs.engine.dispose()


def test_the_same_content_keeps_its_version_and_a_new_catalog_changes_it(
    fresh_engine: Engine, tmp_path: Path
) -> None:
    first, _ = build(fresh_engine, FIXTURE)
    again, _ = build(fresh_engine, FIXTURE)
    assert again.data_version == first.data_version
    _feed(fresh_engine, tmp_path, 3.33)
    fed, _ = build(fresh_engine, FIXTURE)
    assert fed.data_version.startswith(first.data_version + "+")
    # The calibration is served too (plans): changing it changes the version.
    changed = tmp_path / "catalog"
    changed.mkdir()
    for src in FIXTURE.rglob("*"):
        if src.is_file():
            dst = changed / src.relative_to(FIXTURE)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
    calibration = changed / "calibration.toml"
    calibration.write_text(calibration.read_text(encoding="utf-8") + "\n# edited\n")
    recal, _ = build(fresh_engine, changed)
    assert recal.data_version.split("+")[0] != first.data_version


def test_every_answer_matches_the_version_it_carries_while_data_changes(tmp_path: Path) -> None:
    db = tmp_path / "live.sqlite3"
    engine = make_engine(f"sqlite:///{db}")
    build(engine, FIXTURE)
    env = {"CLUSTERSCOUT_DATABASE_URL": f"sqlite:///{db}", "CLUSTERSCOUT_DATA_DIR": str(FIXTURE)}
    seen: list[tuple[str, float, str, str]] = []
    failures: list[str] = []
    stop = threading.Event()

    def read(base: str) -> None:
        with httpx.Client(base_url=base, timeout=30) as c:
            while not stop.is_set():
                for path in (PRICES, LISTING):
                    r = c.get(path)
                    if r.status_code != 200:
                        failures.append(f"{path}: {r.status_code} {r.text[:200]}")
                        continue
                    seen.append((*_seen(r), path, r.headers["etag"]))

    with serving(env, tmp_path / "server.log") as base:
        readers = [threading.Thread(target=read, args=(base,)) for _ in range(4)]
        for t in readers:
            t.start()
        published: dict[str, float] = {}
        with httpx.Client(base_url=base) as c:
            version, price = _seen(c.get(PRICES))
            published[version] = price
            for step in range(1, 7):
                price = round(3.0 + step / 10, 2)
                _feed(engine, tmp_path, price)
                stats, _ = build(engine, FIXTURE)
                # The very next request already carries the new version and price.
                version, served = _seen(c.get(PRICES))
                assert (version, served) == (stats.data_version, price)
                published[version] = price
        stop.set()
        for t in readers:
            t.join()
    engine.dispose()
    assert not failures, failures[:5]
    assert len(published) == 7
    etags: dict[tuple[str, str], str] = {}
    for version, price, path, etag in seen:
        # Every answer shows exactly the data of the version it names ...
        assert published.get(version) == price, (version, price)
        # ... and one version of one URL always has one ETag.
        assert etags.setdefault((version, path), etag) == etag
