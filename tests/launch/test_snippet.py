"""A run as the catalog's measured_fabric snippet: parsed back as TOML, refused on one node."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from clusterscout.catalog.calibration import load_calibration
from clusterscout.catalog.schema import MeasuredFabricIn
from clusterscout.domain.models import CatalogData, Offer
from clusterscout.launch.nccllog import parse_nccl_log
from clusterscout.launch.snippet import SnippetError, catalog_snippet, source_id
from clusterscout.launch.verdict import compare
from tests.conftest import REAL_DATA_DIR

LOG = (
    Path(__file__).parents[1]
    / "fixtures"
    / "nccl-tests"
    / ("nccl-tests-issue309-h100-ib-ndr-2node-nccl2262.log")
)


def test_the_snippet_is_toml_the_schema_accepts(
    catalog: CatalogData, offer_by_id: dict[str, Offer]
) -> None:
    log = parse_nccl_log(LOG.read_text(), LOG.name)
    offer = offer_by_id["crusoe-h100-ib"]
    result = compare(log, offer, catalog.gpus, load_calibration(REAL_DATA_DIR))
    text = catalog_snippet(log, result, date(2026, 12, 3), "https://example.org/log")
    parsed = tomllib.loads(text)
    (source,) = parsed["sources"]
    assert source["id"] == source_id(result) == "nccl-h100-ib-all-reduce-2n"
    assert source["url"] == "https://example.org/log"
    assert source["checked_on"] == date(2026, 12, 3)
    (m,) = parsed["offers"]["measured_fabric"]  # a table until pasted under [[offers]]
    checked = MeasuredFabricIn.model_validate(m)
    largest = max(result.points, key=lambda p: p.size_bytes)
    assert checked.message_bytes == largest.size_bytes
    assert checked.busbw_gbs == pytest.approx(largest.measured_busbw_gbs)
    assert (checked.nodes, checked.gpus_per_node, checked.nccl_version) == (2, 8, "2.26.2")
    assert checked.sources == [source["id"]]


def test_a_one_node_run_is_refused(catalog: CatalogData, offer_by_id: dict[str, Offer]) -> None:
    log = parse_nccl_log(LOG.read_text(), LOG.name)
    result = compare(
        log, offer_by_id["crusoe-h100-ib"], catalog.gpus, load_calibration(REAL_DATA_DIR)
    )
    with pytest.raises(SnippetError, match="one-node run measures NVLink"):
        catalog_snippet(log, replace(result, nodes=1), date(2026, 12, 3))
