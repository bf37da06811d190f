"""Offer tables: columns in order of decision value, compact cells, sticky first column; plurals."""

from __future__ import annotations

import re

import pytest
from web_support import LANGS, TestClient

from clusterscout.web import i18n, scorecard, viewmodels


def _headers(html: str) -> list[str]:
    head = html.split('<table class="offers', 1)[1].split("</thead>", 1)[0]
    return [
        re.sub(r"<[^>]+>", "", h).split("\n")[0].strip()
        for h in re.findall(r"<th [^>]*>(.*?)</th>", head, re.S)
    ]


def test_decisive_columns_come_first(client: TestClient) -> None:
    headers = _headers(client.get("/en/multi-node/?ref=70b-fsdp-16").text)
    assert headers[:7] == [
        "Provider", "GPU", "Fabric", "Gbit/s per node", "GPUDirect RDMA", "Price, per GPU-hour",
        "Spot, per GPU-hour",
    ]  # fmt: skip
    assert headers[7].startswith("Effective, per useful GPU-hour")
    assert headers[8].startswith("Scaling efficiency")
    assert headers[9:] == [
        "Cluster size",
        "Region",
        "How fast",
        "Provisioning",
        "Orchestration",
        "Storage",
        "Last checked",
        "Sources",
    ]


def test_optional_columns_are_tagged_for_the_chooser(client: TestClient) -> None:
    html = client.get("/en/offers/").text
    assert '<th scope="col" class="p1 first">' in html
    assert '<th scope="row" class="p1 first">' in html
    # RDMA, provisioning, orchestration, storage and the check date are behind the chooser.
    for key in ("rdma", "provisioning", "orchestration", "storage", "checked"):
        assert re.search(rf'<th scope="col" class="opt c-{key}"', html), key
        assert f'id="col-{key}"' in html
    # Without a provider column (provider page) the GPU column is the sticky one.
    provider = client.get("/en/providers/alpha/").text
    assert 'class="p1 first">GPU</th>' in provider


def test_one_link_per_row_with_sources_behind_a_disclosure(client: TestClient) -> None:
    html = client.get("/en/offers/").text
    row = html.split('<tr id="offer-alpha-h100-ib">')[1].split("</tr>", 1)[0]
    before, disclosure = row.split('<details class="row-more">', 1)
    assert before.count("<a ") == 1  # the provider
    assert "https://alpha.example.com/" in disclosure  # sources listed behind it
    assert '<summary>Sources<span class="sr"> · Alpha Cloud H100-SXM-80GB</span></summary>' in row


def test_storage_is_a_short_label_with_products_behind_the_disclosure(client: TestClient) -> None:
    html = client.get("/de/offers/").text
    cell = re.search(r'class="opt c-storage storage">(.*?)</td>', html, re.S)
    assert cell
    assert "gemeinsames Dateisystem" in cell.group(1)
    # Catalog prose in the page's language (data/locale), marked with that language.
    assert '<span lang="de">: Paralleles Dateisystem</span>' in html


@pytest.mark.parametrize(
    ("lang", "known", "expected"),
    [
        ("en", 1, "1 of 3 facts known"),
        ("fr", 1, "1 fait connu sur 3"),
        ("fr", 2, "2 faits connus sur 3"),
        ("fr", 0, "0 fait connu sur 3"),
        ("pt", 2, "2 de 3 fatos conhecidos"),
        ("es", 1, "1 de 3 datos conocidos"),
        ("de", 1, "1 von 3 Angaben bekannt"),
    ],
)
def test_fact_counts_use_plural_forms(lang: str, known: int, expected: str) -> None:
    fmt = i18n.formatter(lang, i18n.load_translations(lang))
    text = fmt.ngettext(
        "%(known)s of %(total)s facts known", "%(known)s of %(total)s facts known", known
    ) % {"known": known, "total": 3}
    assert text == expected


@pytest.mark.parametrize("lang", LANGS)
def test_scorecard_summaries_agree_with_their_count(lang: str) -> None:
    fmt = i18n.formatter(lang, i18n.load_translations(lang))
    provider = {
        "offers": [],
        "orchestration": {"managed_slurm": True, "managed_kubernetes": None,
                          "nccl_preconfigured": None, "raw_vms": None},
        "provisioning": {"on_demand_clusters": None, "reserved": None, "waitlist": None,
                         "reserved_terms": []},
        "billing": {"granularity": None, "minimum": None},
        "storage": {"shared_filesystem": None, "products": [], "throughput_gbs": None,
                    "usd_per_gib_month": None},
        "sources": {},
    }  # fmt: skip
    dims = {d.key: d for d in scorecard.scorecard(fmt, provider)}
    summary = dims["orchestration"].summary
    assert summary.startswith("1")
    if lang == "fr":
        assert summary == "1 fait connu sur 4"


def test_cluster_size_counts_use_plural_forms() -> None:
    fmt = i18n.formatter("en", i18n.load_translations("en"))
    record = {"min_nodes": 1, "max_nodes": None, "max_nodes_by_quote": None, "sources": {}}
    assert viewmodels.cluster_size(fmt, record).text == "from 1 node"
    record = {"min_nodes": None, "max_nodes": None, "max_nodes_by_quote": 1, "sources": {}}
    assert viewmodels.cluster_size(fmt, record).text == "up to 1 node on request"
    fr = i18n.formatter("fr", i18n.load_translations("fr"))
    record = {"min_nodes": 2, "max_nodes": None, "max_nodes_by_quote": None, "sources": {}}
    assert viewmodels.cluster_size(fr, record).text == "à partir de 2 nœuds"


def test_a_row_lists_each_source_once_and_facts_cite_them_by_number(client: TestClient) -> None:
    html = client.get("/en/offers/").text
    row = html.split('<tr id="offer-alpha-h100-ib">')[1].split("</tr>", 1)[0]
    listed = re.search(r'<ol class="sources">(.*?)</ol>', row, re.S)
    assert listed
    urls = re.findall(r'<li><a href="([^"]+)"', listed.group(1))
    assert len(urls) == len(set(urls)) >= 2
    cited = [
        [int(n) for n in refs.split(", ")]
        for refs in re.findall(
            r'<small class="refs"><span class="sr">Sources: </span>\[([^\]]+)\]', row
        )
    ]
    # Several facts rest on the same page: it is cited by number, not repeated.
    assert len(cited) > len(urls)
    assert {n for refs in cited for n in refs} == set(range(1, len(urls) + 1))
