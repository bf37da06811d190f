"""One truth per fact: for EVERY offer of the real catalog, the listing (HTML and JSON), the
compare page, the planner and the API say the same fabric, Gbit/s, RDMA and headline price."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from web_support import TestClient

from clusterscout.app.plans import plan_offer
from clusterscout.catalog.records import on_demand_offered
from clusterscout.web.cells import FABRIC_LABELS

TIER_WORDS = {"on_demand": "on-demand", "reserved": "reserved", "capacity_block": "capacity block"}


@pytest.fixture(scope="module")
def api_offers(real: TestClient) -> dict[str, dict[str, Any]]:
    body = real.get("/api/v1/offers?limit=1000").json()
    assert body["count"] == len(body["data"]) > 100
    return {o["id"]: o for o in body["data"]}


def _text(fragment: str) -> str:
    """The value of a cell: its ``v`` or ``unknown`` span (sources and badges left out)."""
    m = re.search(
        r'<(?:span|summary) class="(?:v|unknown)"[^>]*>(.*?)</(?:span|summary)>', fragment
    )
    assert m, fragment[:300]
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip()


def _listing_rows(real: TestClient, total: int) -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    page = 1
    while len(rows) < total:
        query = "sort=provider" if page == 1 else f"page={page}&sort=provider"
        r = real.get(f"/en/offers/?{query}")
        assert r.status_code == 200, r.headers.get("location")
        page_html = r.text
        found = re.findall(r'<tr id="offer-([^"]+)">(.*?)</tr>', page_html, re.S)
        assert found, f"page {page} has no rows"
        for offer_id, row in found:
            cells = dict(
                re.findall(r'<td data-label="[^"]*" class="([^"]+)">(.*?)</td>', row, re.S)
            )
            by_key = {}
            for cls, body in cells.items():
                for key in ("c-gbps", "c-rdma", "price", "gpu"):
                    if key in cls.split():
                        by_key[key] = body
            fabric = next(b for cls, b in cells.items() if cls == "p1")
            detail = re.search(r'<small class="detail">(.*?)</small>', by_key["price"], re.S)
            rows[html.unescape(offer_id)] = {
                "fabric": _text(fabric),
                "gbps": _text(by_key["c-gbps"]),
                "rdma": _text(by_key["c-rdma"]),
                "price": _text(by_key["price"]),
                "tier": html.unescape(detail.group(1)) if detail else "",
            }
        page += 1
    return rows


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def test_listing_html_and_json_agree_with_the_api_on_every_offer(
    real: TestClient, api_offers: dict[str, dict[str, Any]]
) -> None:
    rows = _listing_rows(real, len(api_offers))
    assert rows.keys() == api_offers.keys()
    for offer_id, o in api_offers.items():
        row = rows[offer_id]
        fabric = FABRIC_LABELS.get(o["fabric"], o["fabric"]) if o["fabric"] else "unknown"
        assert row["fabric"].startswith(str(fabric)), (offer_id, row)
        gbps = o["per_node_gbps"]
        assert row["gbps"] == ("unknown" if gbps is None else f"{gbps:,.0f}"), offer_id
        rdma = {None: "unknown", True: "yes", False: "no"}[o["gpudirect_rdma"]]
        assert row["rdma"] == rdma, offer_id
        head = o["headline_price"]
        if head is None:
            assert row["price"] == "unknown", (offer_id, row)
            continue
        shown = re.fullmatch(r"\$([0-9,]+\.[0-9]{2})/GPU-h", row["price"])
        assert shown, (offer_id, row)
        # Cents, rounded by the locale's rules (half to even): within half a cent.
        assert abs(float(shown.group(1).replace(",", "")) - head["usd_per_gpu_hour"]) <= 0.0051
        assert row["tier"].startswith(TIER_WORDS[head["tier"]] + ","), (offer_id, row)


def test_no_on_demand_headline_where_clusters_are_not_rented_on_demand(
    real: TestClient, api_offers: dict[str, dict[str, Any]]
) -> None:
    closed = {i for i, o in api_offers.items() if not on_demand_offered(o)}
    listed = {i for i in closed if any(p["tier"] == "on_demand" for p in api_offers[i]["prices"])}
    assert listed, "the catalog has on-demand list prices of reservation-only clusters"
    for offer_id in closed:
        head = api_offers[offer_id]["headline_price"]
        assert head is None or head["tier"] != "on_demand", offer_id
    on_demand = real.get("/api/v1/offers?limit=1000&price_tier=on_demand").json()["data"]
    assert {o["id"] for o in on_demand}.isdisjoint(closed)
    assert len(on_demand) > 0
    by_provisioning = real.get("/api/v1/offers?limit=1000&provisioning=on_demand").json()["data"]
    assert {o["id"] for o in by_provisioning}.isdisjoint(closed)


def test_the_planner_sees_every_offer_as_the_api_does(
    api_offers: dict[str, dict[str, Any]],
) -> None:
    for offer_id, o in api_offers.items():
        seen = plan_offer(o)
        assert (seen.fabric.value if seen.fabric else None) == o["fabric"], offer_id
        # A published run can lower the figure the plan computes with (ADR 0028); the offer
        # still carries the advertised Gbit/s, which must be the API's.
        advertised = seen.advertised_gbps if seen.measured else seen.per_node_gbps
        assert advertised == o["per_node_gbps"], offer_id
        assert seen.gpudirect_rdma == o["gpudirect_rdma"], offer_id
        head = o["headline_price"]
        if head is not None:
            # The plan pays the headline: same tier, same price.
            assert (seen.price_tier, seen.usd_per_gpu_hour) == (
                head["tier"],
                head["usd_per_gpu_hour"],
            ), offer_id
        else:
            assert seen.price_tier in {None, "spot"}, offer_id


def _compare_column(page: str, key: str, column: int) -> dict[str, str]:
    body = re.search(rf'<tbody id="cmp-{key}">(.*?)</tbody>', page, re.S)
    assert body, key
    out = {}
    for label, cells in re.findall(
        r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', body.group(1), re.S
    ):
        tds = re.findall(r"<td>(.*?)</td>", cells, re.S)
        out[html.unescape(label)] = _text(tds[column])
    return out


def _expected(labels: list[str], values: list[str]) -> str:
    if len(set(values)) == 1:
        return values[0]
    order = list(dict.fromkeys(values))
    return " · ".join(
        f"{v}: {', '.join(a for a, w in zip(labels, values, strict=True) if w == v)}" for v in order
    )


def test_compare_states_each_network_fact_of_the_offer_it_belongs_to(
    real: TestClient, api_offers: dict[str, dict[str, Any]]
) -> None:
    by_provider: dict[str, list[dict[str, Any]]] = {}
    for o in api_offers.values():
        by_provider.setdefault(o["provider"], []).append(o)
    slugs = sorted(by_provider)
    for i in range(0, len(slugs), 2):
        pair = slugs[i : i + 2] if i + 1 < len(slugs) else [slugs[i - 1], slugs[i]]
        r = real.get(f"/en/compare/?p={pair[0]}&p={pair[1]}")
        assert r.status_code == 200, pair
        for column, slug in enumerate(sorted(pair)):
            offers = real.get(f"/api/v1/providers/{slug}").json()["offers"]
            gpus = [o["gpu"] for o in offers]
            labels = [
                g if gpus.count(g) == 1 else f"{g} ({o['id']})"
                for g, o in zip(gpus, offers, strict=True)
            ]
            network = _compare_column(r.text, "network", column)
            gbps = [
                "unknown" if o["per_node_gbps"] is None else f"{o['per_node_gbps']:,.0f} Gbit/s"
                for o in offers
            ]
            rdma = [
                {None: "unknown", True: "yes", False: "no"}[o["gpudirect_rdma"]] for o in offers
            ]
            assert network["Bandwidth per node"] == html.unescape(_expected(labels, gbps)), slug
            assert network["GPUDirect RDMA"] == _expected(labels, rdma), slug
            on_demand = _compare_column(r.text, "price", column)["On-demand price, per GPU-hour"]
            for o in offers:
                for p in o["prices"]:
                    if p["tier"] == "on_demand" and not on_demand_offered(o):
                        assert f"{o['gpu']} {_usd(p['usd_per_gpu_hour'])} (list price" in on_demand
