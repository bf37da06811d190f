"""A buyer's journey: honest headline prices, unknown-aware filters and their chips."""

from __future__ import annotations

import re

from web_support import TestClient

from clusterscout.app.plans import on_demand_trusted, plan_offer


def _row(html: str, offer: str) -> str:
    return html.split(f'<tr id="offer-{offer}">')[1].split("</tr>", maxsplit=1)[0]


def test_api_states_the_headline_tier_and_spot_never_leads(client: TestClient) -> None:
    data = client.get("/api/v1/offers").json()["data"]
    a100 = next(o for o in data if o["id"] == "alpha-a100-ib")
    # Spot 0.79 is the lowest price of any tier, but the headline is on-demand 1.79.
    assert a100["from_usd_per_gpu_hour"] == 0.79
    assert a100["headline_price"]["tier"] == "on_demand"
    assert a100["headline_price"]["usd_per_gpu_hour"] == 1.79
    assert isinstance(a100["headline_price"]["stale"], bool)
    assert all(o["headline_price"] is None or o["headline_price"]["tier"] != "spot" for o in data)
    mi300x = next(o for o in data if o["id"] == "beta-mi300x-roce")
    assert mi300x["headline_price"]["tier"] == "reserved"
    # Row 1 of the default listing is a headline (never a spot) price.
    assert data[0]["headline_price"]["tier"] in {"on_demand", "reserved", "capacity_block"}


def test_spot_has_its_own_column_and_a_conflict_shows_a_badge(client: TestClient) -> None:
    row = _row(client.get("/de/multi-node/").text, "alpha-a100-ib")
    price = re.search(r'class="p1 num price">(.*?)</td>', row, re.S)
    spot = re.search(r'class="p1 num c-spot">(.*?)</td>', row, re.S)
    assert price and spot
    assert "1,79" in price.group(1)
    assert "0,79" in spot.group(1)
    assert '<span class="badge conflict">Quellen widersprechen sich</span>' in row
    assert "conflict" not in _row(client.get("/de/multi-node/").text, "alpha-h100-ib")


def test_portuguese_journey_says_what_unknowns_hide_and_includes_them(client: TestClient) -> None:
    url = "/pt/multi-node/?fabric=infiniband&gpu=H100-SXM-80GB"
    html = client.get(url).text
    assert '<h2 id="result-count">1 oferta</h2>' in html
    # beta-h100-pool states no fabric: one more offer if unknowns count, in one click.
    assert "1 oferta a mais onde um dado filtrado é desconhecido" in html
    link = re.search(r'<a href="([^"]+)" class="include-unknown">Incluí-las</a>', html)
    assert link
    href = link.group(1).replace("&amp;", "&")
    assert href == "?fabric=infiniband&gpu=H100-SXM-80GB&include_unknown=fabric"
    included = client.get("/pt/multi-node/" + href).text
    assert '<h2 id="result-count">2 ofertas</h2>' in included
    assert "offer-beta-h100-pool" in included
    # Its chip can drop them again, and each chip's remove link says what removing gives.
    assert "desconhecidos incluídos: removê-los" in included
    assert "Remover este filtro: 3 ofertas" in html


def test_true_or_unknown_reads_as_include_unknown(client: TestClient) -> None:
    short = client.get("/api/v1/offers?rdma=true_or_unknown").json()
    long = client.get("/api/v1/offers?rdma=true&include_unknown=rdma").json()
    assert [o["id"] for o in short["data"]] == [o["id"] for o in long["data"]]
    assert "beta-h100-pool" in {o["id"] for o in short["data"]}
    r = client.get("/api/v1/offers?include_unknown=gpu")
    assert r.status_code == 400
    assert r.json()["error"]["field"] == "include_unknown"


def test_live_region_and_drawer_carry_the_count_only(client: TestClient) -> None:
    html = client.get("/en/offers/").text
    assert '<p id="live-count" class="sr" aria-live="polite" aria-atomic="true"></p>' in html
    assert "aria-live" not in html.split('id="results"', 1)[1]
    assert '<span id="show-count">Show 5 results</span>' in html
    swap = client.get("/en/offers/?fabric=roce", headers={"hx-request": "true"}).text
    assert '<p id="live-count" hx-swap-oob="innerHTML">1 offer</p>' in swap
    assert '<span id="show-count" hx-swap-oob="true">Show 1 result</span>' in swap


def test_planner_passes_over_an_on_demand_price_in_doubt() -> None:
    record = {
        "id": "x-h100",
        "provider": "x",
        "gpu": "H100-SXM-80GB",
        "prices": [
            {"tier": "on_demand", "usd_per_gpu_hour": 3.9},
            {"tier": "reserved", "usd_per_gpu_hour": 2.5},
        ],
        "provisioning": {"on_demand_clusters": None},
        "conflicts": [{"about": ["price"]}],
    }
    assert on_demand_trusted(record)
    assert plan_offer(record).price_tier == "on_demand"
    conflicted = {**record, "conflicts": [{"about": ["price", "provisioning"]}]}
    assert not on_demand_trusted(conflicted)
    assert (plan_offer(conflicted).price_tier, plan_offer(conflicted).usd_per_gpu_hour) == (
        "reserved",
        2.5,
    )
    reserved_only = {**record, "provisioning": {"on_demand_clusters": False}}
    assert plan_offer(reserved_only).price_tier == "reserved"
    only_on_demand = {**conflicted, "prices": record["prices"][:1]}
    assert plan_offer(only_on_demand).usd_per_gpu_hour is None


def test_german_compare_starts_with_price_and_capacity_and_quotes_a_total(
    client: TestClient,
) -> None:
    html = client.get("/de/compare/?p=alpha&p=beta&gpus=64&months=6&start=2026-12-01").text
    first = html.split("<tbody", 2)[1]
    assert 'id="cmp-price"' in first
    assert "Preis auf Abruf, pro GPU-Stunde" in first
    assert "Größter Cluster" in first
    quote_table = html.split('class="quote-table"', 1)[1].split("</table>", 1)[0]
    # Alpha: A100 on demand, 1.79 x 64 GPUs x 182 days; Beta: reserved MI300X, paid up front.
    assert "500.398\u00a0$" in quote_table
    assert "im Voraus bezahlt" in quote_table
    assert "EUR" in quote_table and "BRL" in quote_table
    r = client.get("/de/compare/?p=alpha&p=beta&gpus=lots")
    assert r.status_code == 400
