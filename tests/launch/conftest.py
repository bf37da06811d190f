"""The real catalog and launch knowledge, loaded once: launch files are about real offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterscout.catalog.launch_data import load_launch
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Problem, Severity
from clusterscout.domain.launch import LaunchKnowledge
from clusterscout.domain.models import CatalogData, MultiNode, Offer

REAL_DATA_DIR = Path(__file__).parents[2] / "data"
NCCL_FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl-tests"


@pytest.fixture(scope="session")
def catalog() -> CatalogData:
    result = load_catalog(REAL_DATA_DIR)
    assert result.catalog is not None
    return result.catalog


@pytest.fixture(scope="session")
def knowledge(catalog: CatalogData) -> LaunchKnowledge:
    problems: list[Problem] = []
    loaded = load_launch(REAL_DATA_DIR, problems, catalog)
    # Warnings (a new multi-node provider without tool entries yet) are for curators; the
    # generators then refuse with "data/launch.toml says nothing about ...".
    assert [p for p in problems if p.severity is Severity.ERROR] == []
    return loaded


@pytest.fixture(scope="session")
def multi_node_offers(catalog: CatalogData) -> list[Offer]:
    """Every offer of a multi-node provider whose fabric the catalog knows."""
    return [
        o
        for p in catalog.providers
        if p.multi_node is MultiNode.YES
        for o in p.offers
        if o.fabric is not None
    ]


@pytest.fixture(scope="session")
def offer_by_id(catalog: CatalogData) -> dict[str, Offer]:
    return {o.id: o for o in catalog.offers}
