"""Every page in every language: status, lang, translation, provenance, headers, URLs."""

from __future__ import annotations

import re
from datetime import date

import pytest
from web_support import LANGS, TRANSLATED, TestClient, visible_text

from clusterscout.web import viewmodels
from clusterscout.web.scorecard import thin_claim

PAGES = (
    "/{lang}/",
    "/{lang}/multi-node/",
    "/{lang}/multi-node/?fabric=infiniband&rdma=true",
    "/{lang}/offers/",
    "/{lang}/providers/alpha/",
    "/{lang}/providers/gamma/",
    "/{lang}/compare/",
    "/{lang}/compare/?p=alpha&p=beta",
    "/{lang}/compare/?p=alpha&p=beta&p=gamma",
    "/{lang}/providers/",
    "/{lang}/providers/?multi_node=no",
    "/{lang}/providers/?fabric=efa",
    "/{lang}/providers/alpha/?nodes=4",
    "/{lang}/compare/offers/",
    "/{lang}/compare/offers/?nodes=4&o=alpha-h100-ib&o=beta-mi300x-roce",
)
# Interface strings that must never appear untranslated on a pt/es/fr/de page.
ENGLISH = (
    "Skip to content",
    "All offers",
    "Compare providers",
    "Apply filters",
    "Clear all",
    "Sort by",
    "Last checked",
    "Cluster size",
    "Checklist before renting",
    "Offers and prices",
    "Multi-node clusters",
    "Every fact links",
    "Source, checked on",
    "per GPU-hour",
    "Bandwidth per node",
    "Measured bus bandwidth",
    "Measured fabric",
    "Managed orchestration",
    "Choose two to four",
    "unknown",
    "Previous",
    "Download these results",
    "facts known",
    "Where to rent",
    "Read the buyer",
    "Data version",
    "Start from a question",
    "Compare ticked",
    "Checklist facts known",
    "Launch files for",
    "No offer chosen yet",
    "No provider matches",
    "Show providers",
)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_answers_200_with_its_lang(client: TestClient, lang: str, page: str) -> None:
    r = client.get(page.format(lang=lang))
    assert r.status_code == 200, r.text[:300]
    assert r.headers["content-type"].startswith("text/html")
    assert f'<html lang="{lang}">' in r.text


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize("page", PAGES)
def test_translated_pages_have_no_english_interface_strings(
    client: TestClient, lang: str, page: str
) -> None:
    text = visible_text(client.get(page.format(lang=lang)).text)
    leaked = [s for s in ENGLISH if re.search(rf"\b{re.escape(s)}", text)]
    assert not leaked, f"English on {lang} page {page}: {leaked}"


def test_english_strings_list_is_meaningful(client: TestClient) -> None:
    text = visible_text(client.get("/en/providers/alpha/").text)
    html = client.get("/en/multi-node/").text
    assert "Checklist before renting" in text
    assert "Apply filters" in html


@pytest.mark.parametrize("lang", LANGS)
def test_pages_declare_alternates_and_canonical(client: TestClient, lang: str) -> None:
    html = client.get(f"/{lang}/multi-node/?rdma=true").text
    assert f'<link rel="canonical" href="http://testserver/{lang}/multi-node/?rdma=true">' in html
    for other in LANGS:
        assert f'hreflang="{other}" href="http://testserver/{other}/multi-node/?rdma=true"' in html
    assert 'hreflang="x-default"' in html
    assert "<title>" in html
    assert '<meta name="description" content="' in html


def test_multi_node_page_has_table_guide_faq_and_jsonld(client: TestClient) -> None:
    html = client.get("/en/multi-node/").text
    assert 'id="results"' in html
    assert 'id="storage"' in html
    assert 'id="guide"' in html
    assert 'id="checklist"' in html
    assert 'href="?fabric=infiniband&amp;rdma=true"' in html
    assert '"@type": "FAQPage"' in html
    # Only multi-node providers are listed; gamma is "no".
    assert "/en/providers/alpha/" in html
    assert "offer-gamma" not in html


def test_facet_counts_and_result_count(client: TestClient) -> None:
    html = client.get("/en/offers/?fabric=infiniband").text
    assert re.search(r'<h2 id="result-count">2 offers</h2>', html)
    assert re.search(r'id="f-fabric-roce-count">1<', html)


def test_price_tier_shows_that_tiers_price(client: TestClient) -> None:
    def price_of(html: str, offer: str) -> str:
        row = html.split(f'<tr id="offer-{offer}">')[1].split("</tr>", maxsplit=1)[0]
        found = re.search(r'class="p1 num price"><span class="v">([^<]+)</span>', row)
        assert found, row
        return found.group(1)

    # alpha-h100-ib lists reserved 2.29 and on-demand 2.99: the default shows the headline
    # (on-demand first), a chosen tier shows that tier's price.
    assert price_of(client.get("/en/offers/").text, "alpha-h100-ib") == "$2.99/GPU-h"
    html = client.get("/en/offers/?price_tier=reserved").text
    assert price_of(html, "alpha-h100-ib") == "$2.29/GPU-h"
    html = client.get("/en/offers/?price_tier=on_demand").text
    assert price_of(html, "alpha-h100-ib") == "$2.99/GPU-h"
    assert "offer-beta-mi300x-roce" not in html  # reserved only
    assert re.search(r'<option value="on_demand" selected>on-demand</option>', html)
    de = client.get("/de/offers/?price_tier=reserved").text
    assert "Preismodell" in de


def test_bad_price_tier_is_a_400_naming_it(client: TestClient) -> None:
    r = client.get("/api/v1/offers?price_tier=hourly")
    assert r.status_code == 400
    assert r.json()["error"]["field"] == "price_tier"


def test_non_canonical_query_redirects_to_canonical(client: TestClient) -> None:
    r = client.get("/en/multi-node/?rdma=true&fabric=InfiniBand&max_price=")
    assert r.status_code == 302
    assert r.headers["location"] == "/en/multi-node/?fabric=infiniband&rdma=true"


def test_htmx_request_gets_results_fragment_and_push_url(client: TestClient) -> None:
    r = client.get(
        "/fr/multi-node/?fabric=infiniband&rdma=true&region=", headers={"HX-Request": "true"}
    )
    assert r.status_code == 200
    assert "<html" not in r.text
    assert 'id="results"' in r.text
    assert 'hx-swap-oob="true"' in r.text
    assert r.headers["hx-push-url"] == "/fr/multi-node/?fabric=infiniband&rdma=true"


@pytest.mark.parametrize("lang", LANGS)
def test_bad_filter_gives_localized_400(client: TestClient, lang: str) -> None:
    r = client.get(f"/{lang}/offers/?rdma=maybe")
    assert r.status_code == 400
    assert f'<html lang="{lang}">' in r.text


def test_unknown_pages_are_404(client: TestClient) -> None:
    assert client.get("/en/providers/nope/").status_code == 404
    assert client.get("/xx/").status_code == 404
    assert client.get("/de/nothing-here/").status_code == 404
    r = client.get("/de/providers/nope/")
    assert '<html lang="de">' in r.text


def test_compare_rejects_unknown_provider(client: TestClient) -> None:
    r = client.get("/es/compare/?p=alpha&p=nope")
    assert r.status_code == 400
    assert "Elija de dos a cuatro proveedores" in r.text


def test_compare_sorts_providers_into_one_url(client: TestClient) -> None:
    r = client.get("/en/compare/?p=beta&p=alpha")
    assert r.status_code == 302
    assert r.headers["location"] == "/en/compare/?p=alpha&p=beta"


@pytest.mark.parametrize(
    ("accept", "lang"),
    [("pt-BR,pt;q=0.9,en;q=0.8", "pt"), ("de-DE", "de"), ("ja, fr;q=0.5", "fr"), ("", "en")],
)
def test_root_redirects_by_accept_language(client: TestClient, accept: str, lang: str) -> None:
    r = client.get("/", headers={"Accept-Language": accept})
    assert r.status_code == 302
    assert r.headers["location"] == f"/{lang}/"


def test_unknown_values_show_as_unknown_and_facts_link_sources(client: TestClient) -> None:
    html = client.get("/de/providers/beta/").text
    assert '<span class="unknown">unbekannt</span>' in html
    assert 'href="https://beta.example.org/docs/multi-node"' in html
    assert 'title="Quelle (Seite des Anbieters), geprüft am 15.10.2026"' in html


def test_prices_show_as_of_and_stale_badge(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(viewmodels, "today", lambda: date(2026, 11, 25))
    html = client.get("/en/offers/?provider=alpha&provider=beta&sort=gbps").text
    assert "as of Nov 20, 2026" in html
    assert html.count('class="badge stale"') == 1  # beta's 2026-10-15 price only
    monkeypatch.setattr(viewmodels, "today", lambda: date(2027, 6, 1))
    html = client.get("/en/offers/?provider=alpha&provider=beta&sort=nodes").text
    assert html.count('class="badge stale"') >= 3


def test_security_headers_and_no_inline_code(client: TestClient) -> None:
    r = client.get("/en/multi-node/")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"]
    for tag in re.findall(r"<script[^>]*>", r.text):
        assert "src=" in tag or 'type="application/ld+json"' in tag, tag
    assert "<style" not in r.text
    assert not re.search(r"\sstyle=", r.text)
    assert not re.search(r"\son[a-z]+=", r.text)


def test_user_input_is_escaped(client: TestClient) -> None:
    # An unknown region is refused; the page that says so shows what was typed, escaped.
    r = client.get("/en/offers/?region=%3Cscript%3Ealert(1)%3C/script%3E", follow_redirects=True)
    assert r.status_code == 400
    assert "<script>alert(1)" not in r.text
    assert "&lt;script&gt;alert(1)" in r.text


def test_etag_and_conditional_get(client: TestClient) -> None:
    r = client.get("/en/offers/")
    etag = r.headers["etag"]
    assert "max-age" in r.headers["cache-control"]
    again = client.get("/en/offers/", headers={"If-None-Match": etag})
    assert again.status_code == 304
    other = client.get("/de/offers/", headers={"If-None-Match": etag})
    assert other.status_code == 200


def test_healthz_sitemap_robots(client: TestClient) -> None:
    health = client.get("/healthz")
    assert health.status_code == 200
    assert health.json()["data_version"]
    sitemap = client.get("/sitemap.xml")
    assert sitemap.status_code == 200
    assert "<loc>http://testserver/pt/providers/alpha/</loc>" in sitemap.text
    robots = client.get("/robots.txt")
    assert "Sitemap: http://testserver/sitemap.xml" in robots.text


def test_static_assets_are_served_with_long_cache(client: TestClient) -> None:
    for path in ("/static/app.css", "/static/app.js", "/static/vendor/htmx.min.js"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert "immutable" in r.headers["cache-control"]


@pytest.mark.parametrize("lang", LANGS)
def test_provider_page_without_prices_draws_no_empty_chart(client: TestClient, lang: str) -> None:
    # beta prices one of its three offers: one chart, and one line naming the other two.
    page = client.get(f"/{lang}/providers/beta/").text
    assert page.count('class="price-chart"') == 1
    empty = re.findall(r'<p class="empty">([^<]*beta-h100-eth[^<]*)</p>', page)
    assert len(empty) == 1 and "beta-h100-pool" in empty[0]
    assert "alpha" not in empty[0]
    alpha = client.get(f"/{lang}/providers/alpha/").text
    assert alpha.count('class="price-chart"') == 2 and "beta-h100-eth" not in alpha


def test_provider_page_counts_known_facts_and_flags_a_thin_multi_node_claim(
    client: TestClient,
) -> None:
    page = client.get("/en/providers/alpha/").text
    # 21 facts: the 20 of the buyer's checklist and the published fabric measurement.
    assert "Checklist facts known: 17 of 21." in page
    assert 'class="thin"' not in page  # 17 of 21 is not thin
    assert "Bekannte Punkte der Checkliste: 14 von 21." in client.get("/de/providers/beta/").text
    # The rule: a "yes" with under a quarter of the facts known is thin; a "no" never is.
    assert thin_claim("yes", 0, 20) and thin_claim("yes", 4, 20)
    assert not thin_claim("yes", 5, 20) and not thin_claim("no", 0, 20)
    assert not thin_claim("unknown", 0, 20)
