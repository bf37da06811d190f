"""The plan page with unknowns: price on request, quoted prices, labels in every language."""

from __future__ import annotations

import pytest
from web_support import LANGS, TRANSLATED, TestClient, visible_text

Q70 = "?max_nodes=64&model=70B&precision=bf16&tokens=5e10"


def _priced(prices: str) -> str:
    """The canonical plan URL with ``prices`` (parameters sorted, as the page redirects to)."""
    return f"?max_nodes=64&model=70B&precision=bf16&prices={prices}&tokens=5e10"


ON_REQUEST_ENGLISH = ("Price on request", "Market reference", "Prices you were quoted")


@pytest.mark.parametrize("lang", LANGS)
def test_unpriced_offers_are_listed_on_request(client: TestClient, lang: str) -> None:
    r = client.get(f"/{lang}/plan/{Q70}")
    assert r.status_code == 200
    assert 'id="on-request"' in r.text
    # The fixture's unpriced offer is in the on-request table, named by its id for --price.
    section = r.text[r.text.index('id="on-request"') :]
    assert "beta-h100-eth" in section[: section.index("</section>")]
    if lang in TRANSLATED:
        text = visible_text(r.text)
        assert not [s for s in ON_REQUEST_ENGLISH if s in text]


def test_a_quoted_price_ranks_the_offer_and_is_labelled(client: TestClient) -> None:
    r = client.get(f"/en/plan/{_priced('beta-h100-eth%3D2.5')}")
    assert r.status_code == 200
    options = r.text[r.text.index('class="plan-options"') :]
    options = options[: options.index("</table>")]
    assert "your price" in options
    assert 'value="beta-h100-eth=2.5"' in r.text
    # The offer left the on-request table once priced.
    parts = r.text.split('id="on-request"')
    assert len(parts) == 1 or "beta-h100-eth" not in parts[1].split("</section>")[0]


def test_a_bad_quoted_price_is_a_400_naming_it(client: TestClient) -> None:
    r = client.get(f"/en/plan/{_priced('nope%3D2')}")
    assert r.status_code == 400
    assert "nope" in r.text
    long = client.get(f"/en/plan/{_priced('x' * 500)}")
    assert long.status_code == 400


def test_the_api_takes_prices_and_refuses_bad_ones(client: TestClient) -> None:
    body = {"model": "70B", "tokens": 5e10, "max_nodes": 64}
    ok = client.post("/api/v1/plan", json={**body, "prices": {"beta-h100-eth": 2.5}})
    assert ok.status_code == 200
    priced = [o for o in ok.json()["options"] if o["offer"]["id"] == "beta-h100-eth"]
    assert priced and all(o["offer"]["price_source"] == "buyer" for o in priced)
    bad = client.post("/api/v1/plan", json={**body, "prices": {"beta-h100-eth": -1}})
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "prices"
