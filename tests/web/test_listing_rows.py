"""Listing rows are kept rendered, per data version, language, price tier, day and reference
workload."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine
from web_support import TestClient

from clusterscout.app.database import build
from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.runner import run_feed
from clusterscout.settings import Settings
from clusterscout.web.app import create_app

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
OFFER = "alpha-h100-ib"


def _row(html: str, offer: str = OFFER) -> str:
    found = re.search(rf'<tr id="offer-{offer}">.*?</tr>', html, re.S)
    assert found, f"no row for {offer}"
    return found.group(0)


def test_a_row_is_rendered_in_the_page_language(client: TestClient) -> None:
    english = _row(client.get("/en/offers/?provider=alpha").text)
    german = _row(client.get("/de/offers/?provider=alpha").text)
    assert 'href="/en/providers/alpha/"' in english
    assert 'href="/de/providers/alpha/"' in german
    assert "/en/" not in german


def test_a_row_shows_the_price_of_the_chosen_tier(client: TestClient) -> None:
    # The same offer's row, kept once per price tier: on-demand 2.99, reserved 2.29.
    headline = _row(client.get("/en/offers/?provider=alpha").text)
    reserved = _row(client.get("/en/offers/?price_tier=reserved&provider=alpha").text)
    assert "2.99" in headline
    assert "2.99" not in reserved
    assert "2.29" in reserved


def test_a_row_is_kept_apart_per_reference_workload(client: TestClient) -> None:
    def cells(html: str) -> list[str]:
        return re.findall(r'class="p1 num ref-eff">(.*?)</td>', _row(html), re.S)

    url = "/en/multi-node/?provider=alpha"
    plain = client.get(url).text
    small = client.get(f"{url}&ref=8b-fsdp-4").text
    large = client.get(f"{url}&ref=405b-3d-64").text
    assert cells(plain) == []
    assert len(cells(small)) == len(cells(large)) == 1
    assert cells(small) != cells(large)  # 4 nodes and 64 nodes do not scale alike
    assert client.get(f"{url}&ref=8b-fsdp-4").text == small
    assert client.get(url).text == plain


def test_a_row_follows_a_price_change(fresh_engine: Engine, tmp_path: Path) -> None:
    build(fresh_engine, FIXTURE)
    url = fresh_engine.url.render_as_string(hide_password=False)
    app = create_app(Settings(database_url=url, data_dir=FIXTURE, public_url="http://testserver"))
    client = TestClient(app)
    before = _row(client.get("/en/offers/?provider=alpha").text)
    prices = client.get(f"/api/v1/offers/{OFFER}/prices").json()["current"]
    old = next(p["usd_per_gpu_hour"] for p in prices if p["tier"] == "on_demand")
    new = f"{old + 0.37:.2f}"
    feed = tmp_path / "prices.csv"
    feed.write_text(
        "offer_id,tier,usd_per_gpu_hour,as_of,source_url\n"
        f"{OFFER},on_demand,{new},{datetime.now(UTC).date()},https://alpha.example/prices\n",
        encoding="utf-8",
    )
    assert run_feed(fresh_engine, FileFeed(), feed).ok
    after = _row(client.get("/en/offers/?provider=alpha").text)
    assert new not in before
    assert new in after
    app.state.cs.engine.dispose()
