"""Which catalog values are translated, where they sit, and how records are localized."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.records import offer_record, provider_record
from clusterscout.catalog.texts import Translation, catalog_texts, is_descriptive
from clusterscout.domain.models import (
    Billing,
    CatalogData,
    Conflict,
    Discount,
    MultiNode,
    Offer,
    Orchestration,
    Price,
    PriceTier,
    Provider,
    Provisioning,
    Rating,
    RatingTier,
    Source,
    Storage,
    Topology,
)

SOURCE = Source("s", "https://example.com/", date(2026, 1, 1))


def _provider() -> Provider:
    """A provider with every kind of free text once, and an offer overriding each group."""
    orchestration = Orchestration(managed_slurm=True, note="Slurm is managed.")
    provisioning = Provisioning(reserved_terms=("1 year",), note="Reserved by quote.")
    billing = Billing(minimum="1 hour", note="Billed per second.")
    discounts = (Discount(365, 20.0, note="Yearly discount."),)
    own = Offer(
        id="acme/h100",
        local_id="h100",
        provider="acme",
        gpu="H100",
        name="H100 nodes with InfiniBand",
        note="Offer note.",
        topology=Topology(locality="One fabric per cluster."),
        orchestration=Orchestration(note="Kubernetes only."),
        provisioning=Provisioning(reserved_terms=("3 years",)),
        billing=Billing(minimum="1 week"),
        discounts=(Discount(90, 5.0, note="Quarterly discount."),),
        prices=(
            Price(PriceTier.RESERVED, 2.0, date(2026, 1, 1), SOURCE, term="2 weeks", note="Min."),
            Price(PriceTier.ON_DEMAND, 3.0, date(2026, 1, 1), SOURCE),
        ),
    )
    inherited = Offer(
        id="acme/b200",
        local_id="b200",
        provider="acme",
        gpu="B200",
        name="BM.GPU.B200.8",  # a product name: not translated
        orchestration=orchestration,
        provisioning=provisioning,
        billing=billing,
        discounts=discounts,
    )
    return Provider(
        slug="acme",
        name="Acme Cloud",
        url="https://acme.example/",
        multi_node=MultiNode.YES,
        multi_node_evidence="Sells clusters.",
        orchestration=orchestration,
        provisioning=provisioning,
        billing=billing,
        storage=Storage(products=("Lustre", "Object storage"), note="Storage note."),
        discounts=discounts,
        ratings=(
            Rating("clustermax", "2.0", RatingTier.GOLD, date(2026, 1, 1), note="Label."),
            Rating("clustermax", "1.0", RatingTier.SILVER, date(2025, 1, 1)),
        ),
        conflicts=(Conflict(topic="Largest cluster", note="Two pages disagree."),),
        offers=(own, inherited),
    )


def test_every_free_text_is_listed_once_where_it_is_written() -> None:
    texts = catalog_texts(CatalogData(providers=(_provider(),), gpus=(), fabrics=()))
    where = [(t.file, t.path, t.text) for t in texts]
    acme = "providers/acme.toml"
    assert where == [
        (acme, "multi_node.evidence", "Sells clusters."),
        (acme, "orchestration.note", "Slurm is managed."),
        (acme, "provisioning.reserved_terms[0]", "1 year"),
        (acme, "provisioning.note", "Reserved by quote."),
        (acme, "billing.minimum", "1 hour"),
        (acme, "billing.note", "Billed per second."),
        (acme, "storage.products[0]", "Lustre"),
        (acme, "storage.products[1]", "Object storage"),
        (acme, "storage.note", "Storage note."),
        (acme, "discounts[0].note", "Yearly discount."),
        (acme, "conflicts[0].topic", "Largest cluster"),
        (acme, "conflicts[0].note", "Two pages disagree."),
        (acme, "offers[h100].name", "H100 nodes with InfiniBand"),
        (acme, "offers[h100].note", "Offer note."),
        (acme, "offers[h100].topology.locality", "One fabric per cluster."),
        (acme, "offers[h100].orchestration.note", "Kubernetes only."),
        (acme, "offers[h100].provisioning.reserved_terms[0]", "3 years"),
        (acme, "offers[h100].billing.minimum", "1 week"),
        (acme, "offers[h100].discounts[0].note", "Quarterly discount."),
        (acme, "offers[h100].prices[0].term", "2 weeks"),
        (acme, "offers[h100].prices[0].note", "Min."),
        # The b200 offer inherits every group: nothing is listed twice.
        ("ratings.toml", "ratings[acme/clustermax/2.0].note", "Label."),
    ]


@pytest.mark.parametrize(
    ("name", "descriptive"),
    [
        ("H100 nodes with RDMA networking", True),
        ("8x B200 instances, multi-node", True),
        ("Managed GB300 NVL72 cluster (Kubernetes + Slinky)", True),
        ("BM.GPU.H100.8", False),
        ("A3 Mega (a3-megagpu-8g)", False),
        ("EC2 P6e-GB200 UltraServers", False),
        ("1-Click Cluster, H100", False),
        ("gx3d-160x1792x8h100", False),
    ],
)
def test_offer_names_are_translated_only_when_descriptive(name: str, descriptive: bool) -> None:
    assert is_descriptive(name) is descriptive


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("data", ["fixture", "real"])
def test_localizing_records_reaches_every_listed_text(data: str, fixture_data_dir: Path) -> None:
    """The record walker and the text list agree: with every text translated, no record of
    the catalog still shows one in English (the real catalog has every kind of field)."""
    root = fixture_data_dir if data == "fixture" else Path(__file__).parents[2] / "data"
    catalog = load_catalog(root).catalog
    assert catalog is not None
    texts = {t.text for t in catalog_texts(catalog)}
    marked = Translation("fr", {t: f"«{t}»" for t in texts})
    records = [provider_record(p, with_offers=True) for p in catalog.providers]
    records += [offer_record(o, p.name) for p in catalog.providers for o in p.offers]
    localized = marked.localize(records)
    left = sorted(texts & set(_strings(localized)))
    assert left == []
    # Nothing else changed: ids, names of products, enums and numbers are as they were.
    assert len(_strings(localized)) == len(_strings(records))
    assert marked.localize(records[0])["slug"] == records[0]["slug"]


def test_translation_keeps_untranslated_text_and_says_which_language_it_is() -> None:
    fr = Translation("fr", {"1 year": "1 an", "Lustre": "Lustre"})
    assert fr.text("1 year") == "1 an"
    assert fr.text("6 months") == "6 months"
    assert fr.localize({"term": "6 months", "products": ["Lustre", 3]}) == {
        "term": "6 months",
        "products": ["Lustre", 3],
    }
    assert fr.lang_of("1 an", "Lustre") == "fr"
    assert fr.lang_of("1 an", None, "6 months") == "en"
    assert fr.lang_of(None) == "en"
    english = Translation()
    record = {"note": "x"}
    assert english.localize(record) is record  # nothing to translate: no copy
