"""Regions on every surface: the API filter, the grouped select, the column and compare."""

from __future__ import annotations

import re

import pytest
from web_support import TestClient


def _ids(client: TestClient, query: str) -> set[str]:
    r = client.get(f"/api/v1/offers?{query}")
    assert r.status_code == 200, r.text
    return {o["id"] for o in r.json()["data"]}


@pytest.mark.parametrize("typed", ["sao+paulo", "S%C3%A3o%20Paulo", "brazil", "Brasil", "BR"])
def test_sao_paulo_and_brazil_find_the_brazilian_offer(client: TestClient, typed: str) -> None:
    assert _ids(client, f"region={typed}") == {"beta-h100-eth"}


def test_the_canonical_filter_is_the_resolved_key(client: TestClient) -> None:
    meta = client.get("/api/v1/offers?region=Deutschland").json()["meta"]
    assert meta["filters"]["region"] == ["DE"]


def test_an_unknown_region_is_400_naming_the_parameter_with_examples(client: TestClient) -> None:
    r = client.get("/api/v1/offers?region=atlantis")
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["field"] == "region"
    assert "atlantis" in error["message"]
    examples = error["message"].split("e.g. ", 1)[1].split(", ")
    assert examples
    for e in examples:
        assert client.get(f"/api/v1/offers?region={e}").status_code == 200, e


def test_the_listing_select_groups_countries_under_continents(client: TestClient) -> None:
    html = client.get("/en/offers/").text
    select = html.split('<select id="f-region"', 1)[1].split("</select>", 1)[0]
    groups = re.findall(r'<optgroup label="([^"]+)">', select)
    assert groups == ["Americas", "Europe"]
    americas = select.split('label="Americas"', 1)[1].split("</optgroup>", 1)[0]
    values = re.findall(r'<option value="([^"]*)"', americas)
    assert values == ["americas", "BR", "US"]
    # Counts hold the other filters: alpha's two offers are in the US.
    assert ">United States (2)<" in americas


def test_the_select_keeps_a_value_typed_in_the_url(client: TestClient) -> None:
    html = client.get("/de/offers/?region=eu-cen").text
    assert '<option value="eu-cen" selected>eu-cen</option>' in html


def test_the_region_column_shows_country_codes(client: TestClient) -> None:
    html = client.get("/en/offers/?provider=beta&sort=provider").text
    cells = re.findall(r'<td[^>]*class="p1 c-region">(.*?)</td>', html, flags=re.S)
    texts = {re.sub(r"<[^>]+>", " ", c).split()[0] for c in cells}
    assert texts == {"DE", "BR"}


def test_compare_lists_the_countries_in_the_readers_language(client: TestClient) -> None:
    html = client.get("/de/compare/?p=alpha&p=beta").text
    block = html.split('id="cmp-price"', 1)[1].split("</tbody>", 1)[0]
    row = block.split("Regionen", 1)[1].split("</tr>", 1)[0]
    assert "Vereinigte Staaten" in row
    assert "Deutschland, Brasilien" in row


def test_the_region_chip_names_the_country_in_the_readers_language(client: TestClient) -> None:
    html = client.get("/pt/offers/?region=BR").text
    chips = html.split('<ul class="chips"', 1)[1].split("</ul>", 1)[0]
    value = chips.split('class="chip-label">', 1)[1].split("</span>", 1)[1].split("<a ", 1)[0]
    # The chip says "Brasil", not the key "BR" nor the select's "Brasil (1)" with its count.
    assert value.strip() == "Brasil"
