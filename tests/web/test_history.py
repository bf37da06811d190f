"""Price history API, freshness marks in API records and pages, the provider price chart."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import date

import pytest
from web_support import LANGS, TestClient, visible_text

from clusterscout.web import viewmodels
from clusterscout.web.schemas import PriceHistoryOut, ProviderDetailOut


@pytest.fixture
def on_nov_25(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(viewmodels, "today", lambda: date(2026, 11, 25))


def test_history_lists_every_observation_newest_first(client: TestClient, on_nov_25: None) -> None:
    r = client.get("/api/v1/offers/alpha-h100-ib/prices")
    assert r.status_code == 200
    body = r.json()
    PriceHistoryOut.model_validate(body)
    assert body["count"] == len(body["data"]) == 2
    stamps = [(p["observed_at"], p["as_of"]) for p in body["data"]]
    assert stamps == sorted(stamps, reverse=True)
    assert {p["tier"] for p in body["current"]} == {"on_demand", "reserved"}
    assert body["meta"]["offer_id"] == "alpha-h100-ib"
    assert body["meta"]["stale_after_days"] == 30
    assert body["meta"]["data_version"]
    for p in body["data"]:
        assert p["age_days"] == 5
        assert p["stale"] is False
        assert p["source"]["url"].startswith("https://alpha.example.com/")
    series = {(s["tier"], s["term"]): s["points"] for s in body["series"]}
    assert series[("reserved", "1 year")][0]["usd_per_gpu_hour"] == 2.29


def test_history_of_an_unknown_offer_is_a_404_error_shape(client: TestClient) -> None:
    r = client.get("/api/v1/offers/no-such-offer/prices")
    assert r.status_code == 404
    error = r.json()["error"]
    assert error == {
        "code": "not_found",
        "message": "unknown offer 'no-such-offer'",
        "field": "offer_id",
    }


def test_history_rejects_query_parameters(client: TestClient) -> None:
    r = client.get("/api/v1/offers/alpha-h100-ib/prices?limit=3")
    assert r.status_code == 400
    assert r.json()["error"]["field"] == "limit"


def test_history_is_documented_in_openapi(client: TestClient) -> None:
    spec = client.get("/api/v1/openapi.json").json()
    op = spec["paths"]["/api/v1/offers/{offer_id}/prices"]["get"]
    assert {"200", "404"} <= set(op["responses"])
    assert "age_days" in spec["components"]["schemas"]["PriceOut"]["required"]


def test_offer_records_carry_age_and_staleness(client: TestClient, on_nov_25: None) -> None:
    data = client.get("/api/v1/offers?provider=beta&limit=99").json()["data"]
    prices = {r["id"]: r["prices"] for r in data}
    (roce,) = prices["beta-mi300x-roce"]
    assert roce["age_days"] == 41
    assert roce["stale"] is True


def test_provider_detail_offers_carry_freshness(client: TestClient) -> None:
    # Answers are cached per day, so this test uses the real clock rather than a patched one.
    body = client.get("/api/v1/providers/alpha").json()
    ProviderDetailOut.model_validate(body)
    for offer in body["offers"]:
        for p in offer["prices"]:
            age = (viewmodels.today() - date.fromisoformat(p["as_of"])).days
            assert p["age_days"] == age
            assert p["stale"] is (age > 30)


def test_stale_limit_follows_the_clock(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(viewmodels, "today", lambda: date(2027, 1, 30))
    body = client.get("/api/v1/offers/alpha-a100-ib/prices").json()
    assert body["data"][0]["age_days"] == 71
    assert body["data"][0]["stale"] is True


@pytest.mark.parametrize("lang", LANGS)
def test_provider_page_has_a_price_chart_and_table_per_offer(client: TestClient, lang: str) -> None:
    html = client.get(f"/{lang}/providers/alpha/").text
    assert html.count('class="price-chart"') == 2
    assert f'src="/{lang}/providers/alpha/prices/alpha-h100-ib.svg"' in html
    assert html.count('<table class="history">') == 2
    assert 'alt="' in html.split('class="price-chart"')[1]


def test_provider_page_marks_stale_prices(client: TestClient, on_nov_25: None) -> None:
    html = client.get("/en/providers/beta/?view=history-test").text
    text = visible_text(html.split('id="price-history"')[1])
    assert "41 days" in text
    assert "stale" in text


def test_price_chart_is_an_svg_with_its_own_policy(client: TestClient) -> None:
    r = client.get("/fr/providers/alpha/prices/alpha-h100-ib.svg")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert r.headers["content-security-policy"].startswith("default-src 'none'")
    root = ET.fromstring(r.content)  # noqa: S314 - our own output
    assert root.tag.endswith("svg")
    assert "<script" not in r.text
    assert "Historique des prix" in r.text


@pytest.mark.parametrize(
    "path",
    [
        "/en/providers/beta/prices/alpha-h100-ib.svg",
        "/en/providers/alpha/prices/nope.svg",
        "/en/providers/nope/prices/alpha-h100-ib.svg",
        "/xx/providers/alpha/prices/alpha-h100-ib.svg",
    ],
)
def test_price_chart_of_another_providers_offer_is_404(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 404
