"""Source kinds beside every source link; ClusterMAX ratings on the provider and compare pages."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from tests.conftest import REAL_DATA_DIR
from web_support import TestClient, visible_text

from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.records import offer_record
from clusterscout.domain.models import SourceKind
from clusterscout.web.i18n import formatter, load_translations
from clusterscout.web.viewmodels import offer_rows

REVIEW = "https://review.example.net/beta-gpu-ethernet"
"""beta's third-party source: the only source of h100-eth's bandwidth in the fixture."""
DOCS = "https://beta.example.org/docs/multi-node"


def _kinds_after(html: str, url: str) -> list[tuple[str, str]]:
    """(kind class, visible label) of the badge after each listed link to ``url``."""
    pattern = (
        rf'href="{re.escape(url)}"[^>]*>[^<]*<span class="sr"> \(([^)]*)\)</span></a> '
        r'<span aria-hidden="true"><span class="src-kind kind-(\w+)">([^<]*)</span>'
    )
    out = []
    for sr_name, kind, label in re.findall(pattern, html):
        assert sr_name == label, "the link's accessible name says the same kind as the badge"
        out.append((kind, htmllib.unescape(label)))
    return out


def _ratings_section(html: str) -> str:
    return html[html.index('id="ratings"') : html.index('id="checklist-title"')]


def test_source_lists_label_every_link_with_its_kind(client: TestClient) -> None:
    html = client.get("/en/providers/beta/").text
    review, docs = _kinds_after(html, REVIEW), _kinds_after(html, DOCS)
    # Listed in the network dimension and in the offer row's disclosure.
    assert review
    assert set(review) == {("secondary", "third party")}
    assert docs
    assert set(docs) == {("primary", "provider's page")}


def test_kind_labels_are_translated(client: TestClient) -> None:
    html = client.get("/fr/providers/beta/").text
    assert set(_kinds_after(html, REVIEW)) == {("secondary", "tiers")}
    assert set(_kinds_after(html, DOCS)) == {("primary", "page du fournisseur")}


def test_a_compact_source_link_names_its_kind_and_flags_a_third_party(client: TestClient) -> None:
    # Compare cells show one arrow link per fact: the kind is in its name and title; a
    # third party's link also gets a visible badge (the rating report is one).
    html = client.get("/en/compare/?p=alpha&p=beta").text
    report = "https://ratings.example.com/report-3"
    assert re.search(
        rf'<a class="src src-secondary" href="{re.escape(report)}" '
        r'title="Source \(third party\), checked on Sep 23, 2026"[^>]*>'
        r'<span aria-hidden="true">↗</span><span class="sr">Source \(third party\)[^<]*</span>'
        r'</a> <span aria-hidden="true"><span class="src-kind kind-secondary">third party</span>',
        html,
    )
    # The provider's own pages are named as such but not flagged.
    assert 'title="Source (provider&#39;s page), checked on Oct 15, 2026"' in html
    assert "src-primary" not in html


def test_provider_page_shows_each_edition_with_tier_date_and_source(client: TestClient) -> None:
    section = _ratings_section(client.get("/en/providers/alpha/").text)
    rows = re.findall(
        r'<th scope="row" lang="en">([^<]+)</th>\s*<td><span class="tier tier-\w+">([^<]+)</span>'
        r".*?</td>\s*<td>([^<]+)</td>\s*<td>(.*?)</td>",
        section,
        re.S,
    )
    assert [(label, tier, day) for label, tier, day, _src in rows] == [
        ("SemiAnalysis ClusterMAX 3.0", "Gold", "Sep 23, 2026"),
        ("SemiAnalysis ClusterMAX 2.0", "Silver", "Nov 6, 2025"),
    ]
    assert _kinds_after(rows[0][3], "https://ratings.example.com/report-3") == [
        ("secondary", "third party")
    ]
    assert "report-2" in rows[1][3]


def test_not_rated_is_not_a_tier_and_unavailable_is(client: TestClient) -> None:
    # beta is absent from 3.0: "not rated" there, citing the edition's list; bronze in 2.0.
    beta = _ratings_section(client.get("/en/providers/beta/").text)
    assert '<span class="tier tier-not_rated">not rated</span>' in beta
    assert 'href="https://ratings.example.com/report-3"' in beta
    assert '<span class="tier tier-bronze">Bronze</span>' in beta
    # gamma is in 3.0, listed as unavailable: a tier, not "not rated".
    gamma = _ratings_section(client.get("/de/providers/gamma/").text)
    assert '<span class="tier tier-unavailable">Nicht verfügbar (konnte nicht getestet werden)' in (
        gamma
    )
    assert visible_text(gamma).count("nicht bewertet") == 1  # 2.0 only


def test_compare_has_a_ratings_row_per_edition(client: TestClient) -> None:
    html = client.get("/en/compare/?p=alpha&p=beta&p=gamma").text
    body = html[html.index('id="cmp-ratings"') :]
    body = body[: body.index("</tbody>")]
    rows = re.findall(r"<tr><th scope=\"row\">([^<]+)</th>(.*?)</tr>", body, re.S)
    assert [label for label, _cells in rows] == [
        "SemiAnalysis ClusterMAX 3.0",
        "SemiAnalysis ClusterMAX 2.0",
    ]
    newest, older = visible_text(rows[0][1]), visible_text(rows[1][1])
    assert newest.index("Gold") < newest.index("not rated") < newest.index("Unavailable")
    assert older.index("Silver") < older.index("Bronze") < older.index("not rated")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("clustermax=gold", {"alpha"}),
        ("clustermax=platinum,gold", {"alpha"}),
        ("clustermax=not_rated", {"beta"}),
        ("clustermax=gold,not_rated", {"alpha", "beta"}),
        # alpha's silver and beta's bronze are from 2.0, not the newest edition.
        ("clustermax=silver", set()),
        ("clustermax=bronze", set()),
    ],
)
def test_rating_filter_reads_the_newest_edition(
    client: TestClient, query: str, expected: set[str]
) -> None:
    data = client.get(f"/api/v1/offers?{query}").json()["data"]
    assert {o["provider"] for o in data} == expected


def test_an_unknown_rating_value_is_a_400_naming_the_parameter(client: TestClient) -> None:
    r = client.get("/api/v1/offers?clustermax=gold_or_better")
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["field"] == "clustermax"
    assert "not_rated" in error["message"]
    assert client.get("/en/offers/?clustermax=shiny").status_code == 400


def test_offers_page_has_a_rating_facet(client: TestClient) -> None:
    html = client.get("/en/offers/?clustermax=gold").text
    assert 'id="f-clustermax-gold"' in html
    assert re.search(r'id="f-clustermax-gold"[^>]*checked', html)
    assert 'id="offer-beta-h100-eth"' not in html
    assert 'id="offer-alpha-h100-ib"' in html


def test_a_secondary_sourced_fact_of_the_real_catalog_is_flagged_in_its_row() -> None:
    loaded = load_catalog(REAL_DATA_DIR).catalog
    assert loaded is not None
    found = next(
        (p, o, name)
        for p in loaded.providers
        for o in p.offers
        for name, srcs in sorted(o.field_sources.items())
        if name != "prices" and srcs and all(s.kind is SourceKind.SECONDARY for s in srcs)
    )
    provider, offer, _field = found
    record = offer_record(offer, provider.name, provider.ratings)
    fmt = formatter("en", load_translations("en"))
    (row,) = offer_rows(fmt, [record], {}, 30)
    kinds = {s.url: s.kind for _label, cell in row.facts for s in cell.sources}
    secondary = {s.url for s in found[1].field_sources[found[2]]}
    assert secondary <= set(kinds)
    assert {kinds[u] for u in secondary} == {"secondary"}
    assert all(s.flagged for _l, c in row.facts for s in c.sources if s.url in secondary)
