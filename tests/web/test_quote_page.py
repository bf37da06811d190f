"""``/{lang}/quote/``: the API's ranked answer as a page, in five languages, without script."""

from __future__ import annotations

import re

import pytest
from web_support import TestClient

from clusterscout.domain.languages import LANGUAGES

QUERY = "gpus=16&months=6&start=2026-12-01&gpu=H100"


def _slugs(page: str, kind: str | None = None) -> list[str]:
    pattern = r'<li class="quote-line ([a-z ]+)" data-provider="([^"]+)"'
    return [slug for cls, slug in re.findall(pattern, page) if kind is None or kind in cls.split()]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_ranks_providers_as_the_api_does_in_every_language(
    client: TestClient, lang: str
) -> None:
    r = client.get(f"/{lang}/quote/?{QUERY}")
    assert r.status_code == 200
    api = client.get(f"/api/v1/quote?{QUERY}").json()
    assert _slugs(r.text) == [p["provider"] for p in api["data"]]
    ranked = [p["provider"] for p in api["data"] if p["rank"] is not None]
    assert ranked, "the fixture catalog prices some H100 offer"
    assert _slugs(r.text, "total") == ranked
    assert _slugs(r.text, "cheapest") == ranked[:1]
    # Each total shows the date of the price it rests on.
    assert r.text.count('class="q-age detail"') == len(ranked)
    assert f'<html lang="{lang}"' in r.text


def test_the_reader_currency_comes_first_and_the_rate_date_is_shown(client: TestClient) -> None:
    de = client.get(f"/de/quote/?{QUERY}")
    assert 'option value="EUR" selected' in de.text
    rates = client.get(f"/api/v1/quote?{QUERY}").json()["meta"]["exchange_rates"]
    if rates:
        day, month, year = rates["date"][8:], rates["date"][5:7], rates["date"][:4]
        assert f"{day}.{month}.{year}" in de.text
    usd = client.get(f"/de/quote/?{QUERY}&currency=usd")
    assert 'option value="USD" selected' in usd.text


def test_without_a_query_the_page_quotes_64_h100_for_six_months(client: TestClient) -> None:
    r = client.get("/en/quote/")
    assert r.status_code == 200
    assert (
        'name="gpus" type="number" min="1" max="100000" step="1" inputmode="numeric" value="64"'
        in r.text
    )
    assert 'value="H100-SXM-80GB" selected' in r.text


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("gpus=0", "gpus"),
        ("months=99", "months"),
        ("start=2026-13-01", "start"),
        ("gpu=nope", "gpu"),
        ("currency=XYZ", "currency"),
    ],
)
def test_bad_input_is_400_with_the_problem_next_to_the_form(
    client: TestClient, query: str, field: str
) -> None:
    r = client.get(f"/fr/quote/?{query}")
    assert r.status_code == 400
    assert f'data-field="{field}"' in r.text
    assert "quote-line" not in r.text


def test_an_unknown_parameter_is_refused(client: TestClient) -> None:
    assert client.get("/en/quote/?foo=1").status_code == 400


def test_home_and_navigation_link_the_quote(client: TestClient) -> None:
    home = client.get("/pt/").text
    assert home.count('href="/pt/quote/"') >= 2  # navigation and the home card
