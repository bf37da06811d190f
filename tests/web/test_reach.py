"""Reach: sitemap, hreflang, robots.txt, Open Graph and JSON-LD on every page type (ADR 0016)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any, Final

import pytest
from web_support import LANGS, TestClient

SM: Final = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
XHTML: Final = "{http://www.w3.org/1999/xhtml}"
BASE: Final = "http://testserver"
# One page per canonical page type of the fixture site (after /{lang}/).
TAILS: Final = (
    "",
    "multi-node/",
    "offers/",
    "compare/",
    "plan/",
    "quote/",
    "downloads/",
    "changes/",
    "providers/alpha/",
    "providers/beta/",
    "providers/gamma/",
)


class _Head(HTMLParser):
    """Collects <link>, <meta> and JSON-LD scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str]] = []
        self.metas: list[dict[str, str]] = []
        self.jsonld: list[str] = []
        self._in_ld = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "link":
            self.links.append(a)
        elif tag == "meta":
            self.metas.append(a)
        elif tag == "script" and a.get("type") == "application/ld+json":
            self._in_ld = True
            self.jsonld.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_ld = False

    def handle_data(self, data: str) -> None:
        if self._in_ld:
            self.jsonld[-1] += data


def head(client: TestClient, path: str) -> _Head:
    r = client.get(path)
    assert r.status_code == 200, path
    parser = _Head()
    parser.feed(r.text)
    return parser


def hreflangs(h: _Head) -> dict[str, str]:
    return {
        a["hreflang"]: a["href"] for a in h.links if a.get("rel") == "alternate" and "hreflang" in a
    }


def canonical(h: _Head) -> str:
    return next(a["href"] for a in h.links if a.get("rel") == "canonical")


def jsonld_types(h: _Head) -> dict[str, dict[str, Any]]:
    docs = [json.loads(text) for text in h.jsonld]
    return {d["@type"]: d for d in docs}


def test_sitemap_lists_every_page_in_every_language_with_its_alternates(
    client: TestClient,
) -> None:
    root = ET.fromstring(client.get("/sitemap.xml").content)  # noqa: S314 - our own answer
    urls = root.findall(f"{SM}url")
    locs = [u.findtext(f"{SM}loc") for u in urls]
    assert len(locs) == len(set(locs))
    assert set(locs) == {f"{BASE}/{lang}/{tail}" for lang in LANGS for tail in TAILS}
    for url in urls:
        loc = url.findtext(f"{SM}loc") or ""
        tail = loc.removeprefix(BASE).split("/", 2)[2]
        alternates = {
            link.get("hreflang"): link.get("href") for link in url.findall(f"{XHTML}link")
        }
        expected = {lang: f"{BASE}/{lang}/{tail}" for lang in LANGS}
        assert alternates == {**expected, "x-default": f"{BASE}/en/{tail}"}, loc


@pytest.mark.parametrize("tail", TAILS)
def test_each_pages_hreflang_set_is_complete_and_reciprocal(client: TestClient, tail: str) -> None:
    sets = {lang: hreflangs(head(client, f"/{lang}/{tail}")) for lang in LANGS}
    for lang, alternates in sets.items():
        assert set(alternates) == {*LANGS, "x-default"}, (lang, tail)
        assert alternates[lang] == f"{BASE}/{lang}/{tail}"
        assert alternates["x-default"] == alternates["en"]
    # Reciprocal: every version names the same set, and each alternate's canonical is itself.
    assert all(s == sets["en"] for s in sets.values())
    for lang in LANGS:
        assert canonical(head(client, f"/{lang}/{tail}")) == sets["en"][lang]


def test_filtered_listing_keeps_its_query_in_canonical_and_alternates(client: TestClient) -> None:
    h = head(client, "/de/offers/?fabric=infiniband")
    assert canonical(h) == f"{BASE}/de/offers/?fabric=infiniband"
    assert hreflangs(h)["pt"] == f"{BASE}/pt/offers/?fabric=infiniband"


@pytest.mark.parametrize("lang", LANGS)
def test_open_graph_and_twitter_tags_are_in_the_pages_language(
    client: TestClient, lang: str
) -> None:
    h = head(client, f"/{lang}/providers/alpha/")
    props = {m.get("property") or m.get("name"): m.get("content") for m in h.metas}
    title = props["og:title"]
    assert "Alpha Cloud" in (title or "")
    assert props["twitter:title"] == title
    assert props["twitter:card"] == "summary"
    assert props["og:url"] == f"{BASE}/{lang}/providers/alpha/"
    assert (props["og:locale"] or "").startswith(lang + "_")
    assert props["og:description"] == props["description"]
    assert props["og:description"]


def test_titles_and_descriptions_differ_by_language(client: TestClient) -> None:
    titles = {
        lang: re.search(r"<title>(.*?)</title>", client.get(f"/{lang}/downloads/").text)
        for lang in LANGS
    }
    assert len({m.group(1) for m in titles.values() if m}) == len(LANGS)


def test_a_gpu_filter_names_the_gpu_in_the_title(client: TestClient) -> None:
    html = client.get("/fr/offers/?gpu=H100-SXM-80GB").text
    title = re.search(r"<title>(.*?)</title>", html)
    assert title is not None
    assert "H100-SXM-80GB" in title.group(1)


def test_robots_points_at_the_sitemap_and_keeps_crawlers_off_the_api(client: TestClient) -> None:
    r = client.get("/robots.txt")
    assert r.status_code == 200
    lines = r.text.splitlines()
    assert "User-agent: *" in lines
    assert "Disallow: /api/" in lines
    assert f"Sitemap: {BASE}/sitemap.xml" in lines


@pytest.mark.parametrize("lang", LANGS)
def test_listings_carry_an_item_list_of_their_offers(client: TestClient, lang: str) -> None:
    for tail in ("multi-node/", "offers/"):
        r = client.get(f"/{lang}/{tail}")
        rows = len(re.findall(r'<tr[^>]* id="offer-', r.text)) or None
        found = jsonld_types(head(client, f"/{lang}/{tail}"))
        items = found["ItemList"]
        assert items["numberOfItems"] == len(items["itemListElement"]) > 0
        if rows is not None:
            assert items["numberOfItems"] == rows
        positions = [i["position"] for i in items["itemListElement"]]
        assert positions == list(range(1, len(positions) + 1))
        assert all(
            i["url"].startswith(f"{BASE}/{lang}/providers/") for i in items["itemListElement"]
        )
    assert "FAQPage" in jsonld_types(head(client, f"/{lang}/multi-node/"))


def test_faq_json_ld_has_questions_in_the_pages_language(client: TestClient) -> None:
    faq = jsonld_types(head(client, "/es/multi-node/"))["FAQPage"]
    assert faq["inLanguage"] == "es"
    assert faq["mainEntity"]
    assert all(q["@type"] == "Question" and q["acceptedAnswer"]["text"] for q in faq["mainEntity"])


def test_provider_pages_describe_the_provider_as_an_organization(client: TestClient) -> None:
    org = jsonld_types(head(client, "/pt/providers/alpha/"))["Organization"]
    assert org["name"] == "Alpha Cloud"
    assert org["url"] == "https://alpha.example.com/"
    assert org["mainEntityOfPage"] == f"{BASE}/pt/providers/alpha/"


def test_downloads_page_describes_a_dataset_whose_files_exist(client: TestClient) -> None:
    dataset = jsonld_types(head(client, "/de/downloads/"))["Dataset"]
    assert dataset["license"] == "https://creativecommons.org/licenses/by/4.0/"
    assert dataset["version"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", dataset["dateModified"])
    urls = [d["contentUrl"] for d in dataset["distribution"]]
    assert any(u.endswith(".zip") for u in urls)
    assert any(u.endswith("/datapackage.json") for u in urls)
    for url in urls:
        assert dataset["dateModified"] in url and dataset["version"][:12] in url
        assert client.get(url.removeprefix(BASE)).status_code == 200, url


def test_json_ld_cannot_be_closed_by_catalog_text() -> None:
    from clusterscout.web.seo import script_json

    text = script_json({"name": "</script><script>alert(1)</script>"})
    assert "</" not in text
    assert json.loads(text)["name"] == "</script><script>alert(1)</script>"


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_footer_links_downloads_and_changes(client: TestClient, lang: str) -> None:
    for tail in ("", "plan/", "providers/beta/"):
        html = client.get(f"/{lang}/{tail}").text
        footer = html[html.index('<footer class="site">') :]
        assert f'href="/{lang}/downloads/"' in footer
        assert f'href="/{lang}/changes/"' in footer


def test_a_comparison_names_its_providers_in_the_title(client: TestClient) -> None:
    for lang in LANGS:
        title = re.search(
            r"<title>(.*?)</title>", client.get(f"/{lang}/compare/?p=alpha&p=beta").text
        )
        assert title is not None
        assert "Alpha Cloud" in title.group(1) and "Beta GPU" in title.group(1), lang
