"""Reference workloads in the listings and the compare page: efficiency and effective price."""

from __future__ import annotations

import re

import pytest
from web_support import LANGS, TestClient, visible_text

from clusterscout.app import insights
from clusterscout.web import reference


def _row(html: str, offer_id: str) -> str:
    match = re.search(rf'<tr id="offer-{offer_id}">(.*?)</tr>', html, re.S)
    assert match, offer_id
    return match.group(1)


def test_listing_without_reference_has_no_extra_columns(client: TestClient) -> None:
    html = client.get("/en/multi-node/").text
    assert "ref-eff" not in html
    assert 'id="f-ref"' in html  # the selector is there


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("ref", sorted(insights.REFERENCE_WORKLOADS))
def test_multi_node_listing_adds_efficiency_and_effective_price(
    client: TestClient, lang: str, ref: str
) -> None:
    r = client.get(f"/{lang}/multi-node/?ref={ref}")
    assert r.status_code == 200
    html = r.text
    assert f'<option value="{ref}" selected>' in html
    assert html.count('class="p1 num ref-col"') == 2
    row = _row(html, "alpha-h100-ib")
    assert 'class="p1 num ref-eff"><span class="v">' in row
    assert 'class="p1 num ref-effective"><span class="v">' in row


def test_effective_price_is_list_price_over_efficiency(client: TestClient) -> None:
    html = client.get("/en/multi-node/?ref=70b-3d-32").text
    row = visible_text(_row(html, "beta-mi300x-roce"))
    # shown to one decimal so near-perfect values stay distinguishable
    shown = re.search(r"(\d+\.\d)%", row)
    assert shown, row
    efficiency = float(shown.group(1)) / 100
    assert 0.5 < efficiency < 1  # 32 nodes: losses that grow with scale (issue 8)
    assert f"${1.99 / efficiency:.2f}/GPU-h" in row
    assert "list $1.99" in row


def test_offer_without_price_shows_unknown_effective_price_with_reason(client: TestClient) -> None:
    html = client.get("/en/multi-node/?ref=70b-fsdp-16").text
    row = _row(html, "beta-h100-eth")
    cells = re.findall(r'class="p1 num ref-effective">(.*?)</td>', row, re.S)
    assert cells
    assert "unknown" in cells[0]
    assert "no price" in cells[0]
    # The offer sells up to 4 nodes, fewer than the workload's 16.
    assert "sells up to 4 nodes" in row


def test_reference_is_part_of_the_canonical_url(client: TestClient) -> None:
    r = client.get("/en/multi-node/?ref=70B-FSDP-16&fabric=infiniband")
    assert r.status_code == 302
    assert r.headers["location"] == "/en/multi-node/?fabric=infiniband&ref=70b-fsdp-16"
    html = client.get(r.headers["location"]).text
    assert "ref=70b-fsdp-16" in html.split('rel="canonical"')[1][:200]
    # Sort links keep it.
    assert re.search(r'href="\?[^"]*ref=70b-fsdp-16[^"]*sort=gbps"', html)


def test_unknown_reference_is_a_400(client: TestClient) -> None:
    assert client.get("/en/multi-node/?ref=1t-magic-999").status_code == 400
    assert client.get("/en/compare/?p=alpha&p=beta&ref=1t-magic-999").status_code == 400


def test_htmx_fragment_carries_the_columns(client: TestClient) -> None:
    r = client.get("/de/multi-node/?ref=8b-fsdp-4", headers={"HX-Request": "true"})
    assert "ref-effective" in r.text
    assert "Effektiv, pro nutzbarer GPU-Stunde" in r.text


@pytest.mark.parametrize("lang", LANGS)
def test_compare_page_adds_the_reference_table(client: TestClient, lang: str) -> None:
    r = client.get(f"/{lang}/compare/?p=alpha&p=beta&ref=405b-3d-64")
    assert r.status_code == 200
    html = r.text
    assert 'id="reference"' in html
    for offer in ("alpha-h100-ib", "alpha-a100-ib", "beta-mi300x-roce", "beta-h100-eth"):
        assert f'id="offer-{offer}"' in html
    assert '<option value="405b-3d-64" selected>' in html


def test_compare_reference_is_canonical(client: TestClient) -> None:
    r = client.get("/en/compare/?ref=70b-3d-32&p=beta&p=alpha")
    assert r.headers["location"] == "/en/compare/?p=alpha&p=beta&ref=70b-3d-32"
    assert 'id="reference"' not in client.get("/en/compare/?p=alpha&p=beta").text


def test_estimates_are_memoised_per_data_version(web_app: object, client: TestClient) -> None:
    client.get("/en/multi-node/?ref=8b-fsdp-4&rdma=true")
    version = client.get("/healthz").json()["data_version"]
    state = web_app.state.cs  # type: ignore[attr-defined]
    keys = [k for k in state.memo._items if k[0] == "ref" and k[2] == "8b-fsdp-4"]
    assert keys
    assert all(k[1] == version for k in keys)


def test_labels_cover_every_reference_workload() -> None:
    assert set(reference.LABELS) == set(insights.REFERENCE_WORKLOADS)
