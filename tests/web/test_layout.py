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
    assert headers[:6] == [
        "Provider", "GPU", "Fabric", "Gbit/s per node", "GPUDirect RDMA", "From, per GPU-hour",
    ]  # fmt: skip
    assert headers[6].startswith("Effective, per useful GPU-hour")
    assert headers[7].startswith("Scaling efficiency")
    assert headers[8:] == [
        "Cluster size",
        "Provisioning",
        "Orchestration",
        "Storage",
        "Last checked",
    ]


def test_first_column_is_marked_sticky_and_low_priority_columns_are_tagged(
    client: TestClient,
) -> None:
    html = client.get("/en/offers/").text
    assert '<th scope="col" class="p1 first">' in html
    assert '<th scope="row" class="p1 first">' in html
    # Provisioning, orchestration, storage and the check date give way first on narrow screens.
    assert re.search(r'<th scope="col" class="p3"[^>]*>Provisioning', html)
    assert re.search(r'<th scope="col" class="p3" id="storage">', html)
    # Without a provider column (provider page) the GPU column is the sticky one.
    provider = client.get("/en/providers/alpha/").text
    assert 'class="p1 first">GPU</th>' in provider


def test_storage_is_a_short_label_with_products_behind_it(client: TestClient) -> None:
    html = client.get("/de/offers/").text
    cell = re.search(r'<td class="p3 storage">(.*?)</td>', html, re.S)
    assert cell
    assert "<summary>gemeinsames Dateisystem</summary>" in cell.group(1)
    # Catalog prose in the page's language (data/locale), marked with that language.
    assert '<ul lang="de"><li>Paralleles Dateisystem</li></ul>' in cell.group(1)


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
