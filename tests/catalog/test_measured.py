"""Published fabric measurements: checked on load, stored with the model's figure, ranked."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from clusterscout.catalog.calibration import load_calibration
from clusterscout.catalog.exports import OFFER_COLUMNS, offer_row, to_csv
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.measured import (
    headline,
    human_bytes,
    predicted_busbw_gbs,
    predictions,
    run_label,
    usable,
)
from clusterscout.catalog.problems import Severity
from clusterscout.catalog.records import offer_record
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import CatalogData, Offer


@pytest.fixture(scope="module")
def catalog(fixture_data_dir: Path) -> CatalogData:
    loaded = load_catalog(fixture_data_dir).catalog
    assert loaded is not None
    return loaded


def _offer(catalog: CatalogData, offer_id: str = "alpha-h100-ib") -> Offer:
    return next(o for o in catalog.offers if o.id == offer_id)


def test_a_measurement_loads_with_its_sources(catalog: CatalogData) -> None:
    offer = _offer(catalog)
    (m,) = offer.measured_fabric
    assert (m.collective, m.nodes, m.gpus_per_node, m.gpus) == ("all_reduce", 2, 8, 16)
    assert (m.message_bytes, m.busbw_gbs, m.nccl_version) == (2**34, 469.21, "2.26.2")
    assert not m.degraded and not m.in_network_reduction
    url = "https://github.com/NVIDIA/nccl-tests/issues/309"
    assert [s.url for s in m.sources] == [url]
    assert [s.url for s in offer.field_sources["measured_fabric"]] == [url]
    assert _offer(catalog, "alpha-a100-ib").measured_fabric == ()


@pytest.fixture
def copy(tmp_path: Path, fixture_data_dir: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(fixture_data_dir, target)
    return target


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("nodes = 2\ngpus_per_node = 8\nbusbw", "nodes = 1\ngpus_per_node = 8\nbusbw", "nodes"),
        (
            "gpus_per_node = 8\nbusbw",
            "gpus_per_node = 4\nbusbw",
            "measured_fabric ran 4 GPUs per node, the offer has 8",
        ),
        ('collective = "all_reduce"', 'collective = "alltoall"', "collective"),
        ('nccl_version = "2.26.2"', 'nccl_version = "2.26.2+cuda12.8"', "nccl_version"),
        ('sources = ["nccl-issue-309"]', 'sources = ["nowhere"]', "'nowhere' is not defined"),
        ("busbw_gbs = 469.21", "busbw_gbs = 0", "busbw_gbs"),
    ],
)
def test_bad_measurements_are_errors_with_their_path(
    copy: Path, old: str, new: str, message: str
) -> None:
    alpha = copy / "providers" / "alpha.toml"
    text = alpha.read_text(encoding="utf-8")
    assert old in text
    alpha.write_text(text.replace(old, new, 1))
    errors = [str(p) for p in load_catalog(copy).problems if p.severity is Severity.ERROR]
    assert any("offers[h100-ib]" in e and message in e for e in errors), errors


def test_prediction_follows_the_advertised_bandwidth(
    catalog: CatalogData, fixture_data_dir: Path
) -> None:
    offer = _offer(catalog)
    m = offer.measured_fabric[0]
    gpus = GpuIndex.of(catalog.gpus)
    calibration = load_calibration(fixture_data_dir)
    full = predicted_busbw_gbs(offer, m, gpus, calibration)
    half = predicted_busbw_gbs(replace(offer, per_node_gbps=1600), m, gpus, calibration)
    assert full is not None and half is not None
    # Two nodes: the network carries part of an all-reduce, so halving it costs, but not half.
    assert half < full < 2 * half
    assert predicted_busbw_gbs(replace(offer, per_node_gbps=None), m, gpus, calibration) is None
    assert predicted_busbw_gbs(replace(offer, fabric=None), m, gpus, calibration) is None
    assert predicted_busbw_gbs(replace(offer, gpu="NoSuchGPU"), m, gpus, calibration) is None
    assert predictions(offer, gpus, calibration) == (full,)
    assert predictions(offer, None, calibration) == (None,)


def _run(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {
        "collective": "all_reduce",
        "nodes": 2,
        "gpus_per_node": 8,
        "message_bytes": 2**33,
        "degraded": False,
        "in_network_reduction": False,
    }
    return base | kw


def test_the_planner_uses_only_a_plain_all_reduce_and_prefers_more_nodes() -> None:
    sharp = _run(nodes=16, in_network_reduction=True)
    bad = _run(nodes=8, degraded=True)
    gather = _run(nodes=8, collective="all_gather")
    small, big = _run(message_bytes=2**30), _run(message_bytes=2**34)
    four = _run(nodes=4, message_bytes=2**28)
    assert usable([sharp, bad, gather]) is None
    assert usable([sharp, small, big, bad]) is big
    assert usable([big, four]) is four
    assert usable([gather], "all_gather") is gather
    # A one-line view falls back to the first run when none is usable, and to nothing.
    assert headline([sharp, big]) is big
    assert headline([sharp, bad]) is sharp
    assert headline([]) is None


def test_sizes_and_run_labels() -> None:
    assert human_bytes(2**31) == "2 GiB"
    assert human_bytes(3 * 2**20) == "3 MiB"
    assert human_bytes(2**10) == "1 KiB"
    assert human_bytes(4_000_000_000) == "4 GB"
    assert human_bytes(40_000_000_000) == "40 GB"
    assert human_bytes(512) == "512 B"
    assert run_label(_run()) == "all_reduce 2x8 8 GiB"


def test_record_carries_the_prediction_and_the_ratio(catalog: CatalogData) -> None:
    offer = _offer(catalog)
    (plain,) = offer_record(offer, "Alpha")["measured_fabric"]
    assert plain["predicted_busbw_gbs"] is None and plain["ratio"] is None
    (m,) = offer_record(offer, "Alpha", (), (400.0, 1.0))["measured_fabric"]
    assert m["predicted_busbw_gbs"] == 400.0
    assert m["ratio"] == pytest.approx(469.21 / 400, abs=1e-3)
    assert m["gpus"] == 16 and m["published_on"] is None
    assert m["sources"][0]["url"] == "https://github.com/NVIDIA/nccl-tests/issues/309"
    assert offer_record(_offer(catalog, "alpha-a100-ib"), "Alpha")["measured_fabric"] == []


def test_csv_shows_the_measurement_beside_the_advertised_figure(catalog: CatalogData) -> None:
    with_run = offer_row(offer_record(_offer(catalog), "Alpha", (), (450.0,)))
    assert with_run["per_node_gbps"] == 3200.0
    assert with_run["measured_busbw_gbs"] == 469.21
    assert with_run["measured_run"] == "all_reduce 2x8 16 GiB"
    assert with_run["predicted_busbw_gbs"] == 450.0
    without = offer_row(offer_record(_offer(catalog, "alpha-a100-ib"), "Alpha"))
    assert without["measured_busbw_gbs"] is None and without["measured_run"] is None
    text = to_csv([with_run, without], OFFER_COLUMNS)
    header = text.splitlines()[0].split(",")
    row = dict(zip(header, text.splitlines()[1].split(","), strict=True))
    assert row["measured_busbw_gbs"] == "469.21"
    assert row["predicted_busbw_gbs"] == "450.0"
