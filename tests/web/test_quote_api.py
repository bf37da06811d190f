"""GET /api/v1/quote: a total or a reason per provider, every published term, bad input 4xx."""

from __future__ import annotations

import pytest
from web_support import TestClient

QUERY = "/api/v1/quote?gpus=64&months=6&start=2026-12-01"


def _by_slug(client: TestClient, query: str = QUERY) -> dict[str, dict]:  # type: ignore[type-arg]
    r = client.get(query)
    assert r.status_code == 200, r.text
    return {p["provider"]: p for p in r.json()["data"]}


def test_every_provider_gets_a_total_or_a_reason(client: TestClient) -> None:
    body = client.get(QUERY).json()
    assert body["count"] == len(body["data"]) >= 3
    for p in body["data"]:
        assert (p["best"] is None) == (p["why_not"] is not None), p
        assert p["best"] is None or p["best"] == p["options"][0]
    # Providers with a total come first, cheapest first.
    totals = [p["best"]["total"]["USD"]["low"] for p in body["data"] if p["best"]]
    assert totals == sorted(totals)
    assert all(p["best"] is None for p in body["data"][len(totals) :])


def test_the_run_is_182_days_and_each_total_is_price_times_gpus_times_billed_hours(
    client: TestClient,
) -> None:
    meta = client.get(QUERY).json()["meta"]
    assert (meta["start"], meta["end"], meta["hours"]) == ("2026-12-01", "2027-06-01", 4368)
    alpha = _by_slug(client)["alpha"]["best"]
    # A100 on demand at 1.79 USD per GPU-hour, 64 GPUs, 182 days.
    assert alpha["tier"] == "on_demand"
    assert alpha["total"]["USD"] == {"low": 500398.08, "high": 500398.08}
    assert not alpha["billed_beyond_run"]


def test_a_term_longer_than_the_run_is_paid_whole_and_says_so(client: TestClient) -> None:
    beta = _by_slug(client)["beta"]
    reserved = next(o for o in beta["options"] if o["tier"] == "reserved")
    # 182-day term, prepaid, but beta bills at least 4,380 hours: more than the 4,368-hour run.
    assert (reserved["term_days"], reserved["prepay"]) == (182, True)
    assert reserved["billed_hours"] == 4380
    assert reserved["billed_beyond_run"]
    assert reserved["total"]["USD"]["low"] == pytest.approx(1.99 * 64 * 4380, abs=0.01)


def test_eur_and_brl_come_from_the_dated_rates(client: TestClient) -> None:
    body = client.get(QUERY).json()
    rates = body["meta"]["exchange_rates"]
    assert rates["date"] and rates["sources"]
    total = _by_slug(client)["alpha"]["best"]["total"]
    eur = total["USD"]["low"] / rates["usd_per_eur"]
    assert total["EUR"]["low"] == pytest.approx(eur, abs=0.01)
    assert total["BRL"]["low"] == pytest.approx(eur * rates["brl_per_eur"], abs=0.05)


def test_a_gpu_nobody_offers_in_that_size_gives_reasons(client: TestClient) -> None:
    quotes = _by_slug(client, "/api/v1/quote?gpus=100000&months=1&gpu=H100")
    assert {p["why_not"] for p in quotes.values()} <= {"no_offer", "no_price", "too_small"}
    assert all(p["reason"] for p in quotes.values())
    too_small = [p for p in quotes.values() if p["why_not"] == "too_small"]
    assert too_small and all(p["largest_gpus"] < 100000 for p in too_small)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("gpus=lots", "gpus"),
        ("gpus=0", "gpus"),
        ("months=-1", "months"),
        ("months=61", "months"),
        ("start=2027-02-30", "start"),
        ("start=9999-12-01", "start"),
        ("gpu=Z9000", "gpu"),
        ("gpus=8&gpus=16", "gpus"),
        ("currency=XYZ", "currency"),
        ("foo=1", "foo"),
    ],
)
def test_bad_input_is_400_naming_the_parameter(client: TestClient, query: str, field: str) -> None:
    r = client.get(f"/api/v1/quote?{query}")
    assert r.status_code == 400, r.text
    assert r.json()["error"]["field"] == field


def test_the_quote_is_in_the_openapi_document(client: TestClient) -> None:
    doc = client.get("/api/v1/openapi.json").json()
    names = {p["name"] for p in doc["paths"]["/api/v1/quote"]["get"]["parameters"]}
    assert names == {"gpus", "months", "start", "gpu", "currency"}
