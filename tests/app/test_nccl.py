"""nccl-tests logs against the model, and published results matched to offers' hardware."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterscout.app import nccl
from clusterscout.app.errors import FailureKind, Operation, failure_of
from clusterscout.app.launch import LaunchData, launch_data
from clusterscout.catalog.calibration import load_calibration
from clusterscout.domain.models import FabricKind
from clusterscout.launch.nccllog import NcclLogError
from clusterscout.launch.verdict import ComparisonError
from clusterscout.model.calibration import Calibration

FIXTURES = Path(__file__).parents[1] / "fixtures"
IB_2NODE = FIXTURES / "nccl-tests" / "nccl-tests-issue309-h100-ib-ndr-2node-nccl2262.log"


@pytest.fixture(scope="module")
def data(fixture_data_dir: Path) -> LaunchData:
    return launch_data(fixture_data_dir)


@pytest.fixture(scope="module")
def calibration(fixture_data_dir: Path) -> Calibration:
    return load_calibration(fixture_data_dir)


def test_ingest_compares_and_keeps_the_logs_source(
    data: LaunchData, calibration: Calibration
) -> None:
    (result,) = nccl.ingest(
        data, calibration, "alpha-h100-ib", [(IB_2NODE.name, IB_2NODE.read_text())]
    )
    assert (result.comparison.nodes, result.comparison.gpus_per_node) == (2, 8)
    assert result.comparison.verdict.startswith("delivers ")
    assert len(result.records) == len(result.comparison.points)
    first = result.records[0]
    assert first["source_url"] == "https://github.com/NVIDIA/nccl-tests/issues/309"
    assert first["series"] == "alpha-h100-ib-all-reduce-2n"
    assert (first["fabric"], first["per_node_gbps"], first["nodes"]) == ("infiniband", 3200, 2)


def test_ingest_errors_are_bad_input(data: LaunchData, calibration: Calibration) -> None:
    with pytest.raises(NcclLogError) as info:
        nccl.ingest(data, calibration, "alpha-h100-ib", [("empty.log", "hello\n")])
    failure = failure_of(info.value, Operation.LAUNCH)
    assert failure is not None
    assert (failure.kind, failure.code) == (FailureKind.BAD_INPUT, "invalid_log")
    # The device lines show 2 nodes; the user saying 3 contradicts them.
    with pytest.raises(ComparisonError, match="show 2 nodes, not 3"):
        nccl.ingest(data, calibration, "alpha-h100-ib", [("x.log", IB_2NODE.read_text())], 3)


def test_published_results_match_gpu_fabric_and_bandwidth(
    data: LaunchData, calibration: Calibration
) -> None:
    results = nccl.published_results(data, calibration)
    # Both fixture points are H100 InfiniBand at 3200 Gb/s per node: only alpha-h100-ib is.
    assert set(results) == {"alpha-h100-ib"}
    plateau, scan = results["alpha-h100-ib"]
    assert (plateau.id, plateau.message_bytes, plateau.measured) == (
        "nccl-ref-dgxh100-multinode",
        None,  # the source gives the plateau without a size; check-model takes 8 GiB
        380,
    )
    assert plateau.source.startswith("NVIDIA GTC24 session S62129")
    assert scan.source_url is not None and scan.source_url.startswith("https://github.com/stas00/")
    assert scan.message_bytes == 2**27
    assert (scan.measured, scan.unit, scan.nodes) == (278, "GB/s", 4)
    assert scan.predicted > 0


def test_a_point_without_bandwidth_or_on_one_node_matches_nothing(
    data: LaunchData, calibration: Calibration
) -> None:
    point = dict(data.measurements[1])
    unstated = {**point, "id": "no-gbps", "per_node_gbps": None}
    one_node = {**point, "id": "one-node", "nodes": 1}
    other_fabric = {**point, "id": "roce", "fabric": "RoCEv2 8x400G"}
    edited = LaunchData(data.offers, data.knowledge, data.gpus, (unstated, one_node, other_fabric))
    assert nccl.published_results(edited, calibration) == {}


@pytest.mark.parametrize(
    ("fabric", "kind"),
    [
        ("infiniband", FabricKind.INFINIBAND),
        ("tcpxo", FabricKind.TCPXO),
        ("AWS EFA v4 (8x400G) + NVLink5", FabricKind.EFA),
        ("GCP GPUDirect-TCPXO (a3-megagpu-8g)", FabricKind.TCPXO),
        ("RoCEv2 8x400G ConnectX-7", FabricKind.ROCE),
        ("100GbE TCP/IP sockets", FabricKind.ETHERNET),
        ("NVLink5 (NVL72 rack domain)", None),
        (None, None),
    ],
)
def test_fabric_kind_reads_both_shapes(fabric: object, kind: FabricKind | None) -> None:
    assert nccl.fabric_kind(fabric) is kind
