"""Published fabric measurements on the surfaces: API, CSV, listing, provider, compare, plan."""

from __future__ import annotations

import csv
import io
import re

import pytest
from web_support import TestClient

LANGS = ("en", "pt", "es", "fr", "de")


def _alpha(client: TestClient) -> dict[str, object]:
    r = client.get("/api/v1/offers", params={"gpu": "H100"})
    assert r.status_code == 200, r.text
    return next(o for o in r.json()["data"] if o["id"] == "alpha-h100-ib")


def test_api_gives_each_run_with_the_models_figure(client: TestClient) -> None:
    (m,) = _alpha(client)["measured_fabric"]  # type: ignore[misc]
    assert (m["collective"], m["nodes"], m["gpus_per_node"], m["gpus"]) == (
        "all_reduce",
        2,
        8,
        16,
    )
    assert m["busbw_gbs"] == 469.21
    # The model's figure for the same run on the advertised 3,200 Gbit/s is there, and the
    # ratio is the two read together.
    assert m["predicted_busbw_gbs"] > 0
    assert m["ratio"] == pytest.approx(m["busbw_gbs"] / m["predicted_busbw_gbs"], abs=1e-3)
    assert m["sources"][0]["url"] == "https://github.com/NVIDIA/nccl-tests/issues/309"


def test_csv_has_the_measured_columns(client: TestClient) -> None:
    r = client.get("/api/v1/offers.csv")
    assert r.status_code == 200
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(r.text))}
    alpha = rows["alpha-h100-ib"]
    assert alpha["measured_busbw_gbs"] == "469.21"
    assert alpha["measured_run"] == "all_reduce 2x8 16 GiB"
    assert float(alpha["predicted_busbw_gbs"]) > 0
    assert rows["alpha-a100-ib"]["measured_busbw_gbs"] == ""


@pytest.mark.parametrize("lang", LANGS)
def test_listing_shows_measured_and_model_under_the_advertised_figure(
    client: TestClient, lang: str
) -> None:
    html = client.get(f"/{lang}/multi-node/").text
    row = re.search(r'<tr id="offer-alpha-h100-ib">.*?</tr>', html, re.S)
    assert row
    gbps = re.search(r'class="p1 num c-gbps">(.*?)</td>', row.group(0), re.S)
    assert gbps
    assert "469" in gbps.group(1)  # measured, in the reader's number format
    assert 'class="detail"' in gbps.group(1)
    other = re.search(r'<tr id="offer-alpha-a100-ib">.*?</tr>', html, re.S)
    assert other
    other_gbps = re.search(r'class="p1 num c-gbps">(.*?)</td>', other.group(0), re.S)
    assert other_gbps and 'class="detail"' not in other_gbps.group(1)


@pytest.mark.parametrize("lang", LANGS)
def test_provider_page_has_the_measured_table_with_its_source(
    client: TestClient, lang: str
) -> None:
    html = client.get(f"/{lang}/providers/alpha/").text
    section = re.search(r'<section class="measured-fabric".*?</section>', html, re.S)
    assert section
    assert "https://github.com/NVIDIA/nccl-tests/issues/309" in section.group(0)
    assert section.group(0).count('<tr id="measured-') == 1
    # A provider without published runs has no such section.
    assert 'class="measured-fabric"' not in client.get(f"/{lang}/providers/beta/").text


def test_compare_has_a_measured_row_for_every_provider(client: TestClient) -> None:
    html = client.get("/en/compare/?p=alpha&p=beta").text
    assert "Measured bus bandwidth" in html
    row = re.search(r"Measured bus bandwidth.*?</tr>", html, re.S)
    assert row
    assert "H100-SXM-80GB: measured" in row.group(0)


def test_plan_options_say_when_the_network_figure_is_measured(client: TestClient) -> None:
    r = client.post("/api/v1/plan", json={"model": "70B", "tokens": 1e10, "gpu": "H100"})
    assert r.status_code == 200, r.text
    offers = {o["offer"]["id"]: o["offer"] for o in r.json()["options"]}
    alpha = offers["alpha-h100-ib"]
    assert alpha["fabric_basis"] == "measured"
    assert alpha["advertised_gbps"] == 3200.0
    basis = alpha["measured_fabric"]
    assert basis["source_url"] == "https://github.com/NVIDIA/nccl-tests/issues/309"
    assert 0 < basis["factor"] <= 1
    assert alpha["per_node_gbps"] == pytest.approx(3200.0 * basis["factor"], rel=1e-3)
    assert all(
        o["fabric_basis"] == "advertised" and o["measured_fabric"] is None
        for i, o in offers.items()
        if i != "alpha-h100-ib"
    )
    page = client.get("/en/plan/?gpu=H100&model=70B&tokens=1e10")
    if page.status_code in (301, 302, 307, 308):  # the page's canonical query order
        page = client.get(page.headers["location"])
    assert page.status_code == 200, page.text[:300]
    html = page.text
    assert 'class="detail measured-net"' in html
    assert "network from a published run" in html
