"""The quote over the real catalog: a total or a labelled reference for every provider that
sells the GPU, ranked by total, every figure saying what it rests on and how old it is."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from web_support import TestClient

from clusterscout.catalog.records import on_demand_offered

QUERY = "/api/v1/quote?gpus=64&months=6&gpu=H100"


@pytest.fixture(scope="module")
def answer(real: TestClient) -> dict[str, Any]:
    r = real.get(QUERY)
    assert r.status_code == 200
    return r.json()


def test_every_provider_with_an_h100_cluster_offer_gets_a_total_or_a_reference(
    real: TestClient, answer: dict[str, Any]
) -> None:
    offers = real.get("/api/v1/offers?limit=1000&gpu=H100&multi_node=true").json()["data"]
    sellers = {o["provider"] for o in offers}
    assert len(sellers) > 20
    by_slug = {p["provider"]: p for p in answer["data"]}
    for slug in sellers:
        p = by_slug[slug]
        fits = p["why_not"] != "too_small"
        assert p["best"] is not None or p["reference"] is not None or not fits, slug
    assert answer["meta"]["totals"] + answer["meta"]["references"] >= len(sellers) - sum(
        1 for s in sellers if by_slug[s]["why_not"] == "too_small"
    )


def test_totals_are_ranked_cheapest_first_and_references_follow(answer: dict[str, Any]) -> None:
    data = answer["data"]
    ranked = [p for p in data if p["rank"] is not None]
    assert [p["rank"] for p in ranked] == list(range(1, len(ranked) + 1))
    assert data[: len(ranked)] == ranked  # every total before any reference or reason
    lows = [p["best"]["total"]["USD"]["low"] for p in ranked]
    assert lows == sorted(lows)
    assert [p["cheapest"] for p in data].count(True) == 1 and ranked[0]["cheapest"]
    refs = [p for p in data if p["rank"] is None and p["reference"]]
    medians = [p["reference"]["median_total"]["USD"]["low"] for p in refs]
    assert medians == sorted(medians)
    assert all(p["best"] is None and not p["options"] for p in refs)


def test_a_reference_is_labelled_and_spans_the_market(answer: dict[str, Any]) -> None:
    refs = [p["reference"] for p in answer["data"] if p["reference"]]
    assert refs
    hours = answer["meta"]["hours"]
    for ref in refs:
        assert ref["basis"] == "market_reference"
        assert "not the provider's price" in ref["label"]
        assert ref["prices"] >= 2
        assert ref["billed_hours"] >= hours
        low, high = ref["total"]["USD"]["low"], ref["total"]["USD"]["high"]
        assert low == pytest.approx(ref["low_usd_per_gpu_hour"] * 64 * ref["billed_hours"], 0.01)
        assert high == pytest.approx(ref["high_usd_per_gpu_hour"] * 64 * ref["billed_hours"], 0.01)
        assert low <= ref["median_total"]["USD"]["low"] <= high


def test_every_option_says_its_basis_and_dates_its_price(
    real: TestClient, answer: dict[str, Any]
) -> None:
    today = date.fromisoformat(answer["meta"]["today"])
    stale_after = answer["meta"]["stale_after_days"]
    offers = {o["id"]: o for o in real.get("/api/v1/offers?limit=1000").json()["data"]}
    expected_basis = {
        "on_demand": "list_price",
        "reserved": "reserved_term",
        "capacity_block": "capacity_block",
        "discount": "commitment_discount",
    }
    for p in answer["data"]:
        for o in p["options"]:
            assert o["basis"] == expected_basis[o["tier"]]
            age = (today - date.fromisoformat(o["as_of"])).days
            assert (o["age_days"], o["stale"]) == (age, age > stale_after)
            offer = offers[o["offer_id"]]
            if o["tier"] == "on_demand":
                # An on-demand list price is only used where clusters are rented on demand.
                assert on_demand_offered(offer)
            if o["tier"] != "discount":
                prices = [x for x in offer["prices"] if x["tier"] == o["tier"]]
                assert o["usd_per_gpu_hour"] in {x["usd_per_gpu_hour"] for x in prices}
                assert o["source"] in {x["source"]["url"] for x in prices}


def test_a_run_shorter_than_a_term_pays_the_term(real: TestClient) -> None:
    week = real.get("/api/v1/quote?gpus=64&months=0.25&gpu=H100").json()
    termed = [
        o
        for p in week["data"]
        for o in p["options"]
        if o["term_days"] and 24 * o["term_days"] > week["meta"]["hours"]
    ]
    assert termed
    for o in termed:
        assert o["billed_beyond_run"]
        assert o["billed_hours"] >= 24 * o["term_days"]
        assert o["total"]["USD"]["low"] == pytest.approx(
            o["usd_per_gpu_hour"] * 64 * o["billed_hours"], rel=1e-3
        )


def test_a_list_price_of_clusters_not_rented_on_demand_is_shown_never_totalled(
    real: TestClient, answer: dict[str, Any]
) -> None:
    offers = {o["id"]: o for o in real.get("/api/v1/offers?limit=1000").json()["data"]}
    shown = [(p, x) for p in answer["data"] for x in p["list_prices_not_bookable"]]
    assert shown, "the catalog has on-demand list prices of reservation-only clusters"
    for p, x in shown:
        assert p["best"] is None
        assert not on_demand_offered(offers[x["offer_id"]])
        assert x["usd_per_gpu_hour"] in {
            q["usd_per_gpu_hour"]
            for q in offers[x["offer_id"]]["prices"]
            if q["tier"] == "on_demand"
        }
    page = real.get("/en/quote/?gpus=64&months=6&gpu=H100").text
    for p, _ in shown:
        line = page.split(f'data-provider="{p["provider"]}"', 1)[1].split("</li>", 1)[0]
        assert "does not rent clusters on demand" in line
