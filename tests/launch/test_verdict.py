"""Measured vs predicted on real offers, the verdict, and records check-model accepts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from clusterscout.catalog.calibration import load_calibration
from clusterscout.domain.models import CatalogData, FabricKind, Offer
from clusterscout.launch.nccllog import NcclLog, parse_nccl_log
from clusterscout.launch.verdict import (
    ComparisonError,
    compare,
    human_bytes,
    measurement_records,
)
from clusterscout.model.calibration import Calibration
from clusterscout.model.checkmodel import check

DATA = Path(__file__).parents[2] / "data"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl-tests"
H100_2NODE = "nccl-tests-issue309-h100-ib-ndr-2node-nccl2262.log"
SUBSET = "constructed/constructed-h100-2node-4of8gpus-g4-allreduce.log"


@pytest.fixture(scope="module")
def calibration() -> Calibration:
    return load_calibration(DATA)


def log_of(name: str) -> NcclLog:
    return parse_nccl_log((FIXTURES / name).read_text(), name)


def h100_ib_offer(offer_by_id: dict[str, Offer]) -> Offer:
    offer = offer_by_id["crusoe-h100-ib"]
    assert (offer.gpu, offer.fabric, offer.per_node_gbps) == (
        "H100-SXM-80GB",
        FabricKind.INFINIBAND,
        3200,
    )
    return offer


def test_h100_infiniband_two_nodes_gets_a_verdict_and_records_check_model_expresses(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    log = log_of(H100_2NODE)
    result = compare(log, h100_ib_offer(offer_by_id), catalog.gpus, calibration)
    assert (result.nodes, result.gpus_per_node, result.op) == (2, 8, "all_reduce")
    assert result.reference.size_bytes == 2**30
    assert result.reference.measured_busbw_gbs == pytest.approx(448.90)
    assert result.verdict.startswith(f"delivers {result.reference.ratio * 100:.0f}% ")
    assert "at 1 GiB" in result.verdict
    assert result.status in {"ok", "low", "high"}
    sizes = [p.size_bytes for p in result.points]
    assert 8 not in sizes  # busbw 0.00 rows are not compared
    records = measurement_records(log, result, "https://github.com/NVIDIA/nccl-tests/issues/309")
    assert len(records) == len(result.points)
    report = check(records, catalog.gpus, calibration)
    assert report.unexpressed == ()
    assert len(report.results) == len(records)
    by_id = {r.id: r for r in report.results}
    one_gib = by_id["crusoe-h100-ib-all-reduce-2n-1073741824b"]
    assert one_gib.measured == pytest.approx(448.90)
    assert one_gib.predicted == pytest.approx(result.reference.predicted_busbw_gbs)
    assert result.to_dict()["ratio"] == pytest.approx(result.reference.ratio)


def test_all_gather_on_an_eight_gpu_roce_offer(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    log = log_of("gke-a4-b200-gib-rdma-2node-allgather-nccl2266.log")
    result = compare(log, offer_by_id["gcp-a4"], catalog.gpus, calibration)
    assert result.op == "all_gather"
    records = measurement_records(log, result, "dranet")
    assert check(records, catalog.gpus, calibration).unexpressed == ()


def test_slow_fabric_gets_the_fabric_specific_advice(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    # The 2020 p4d log (4 x 100G EFA) judged against a 3200G EFA offer: far below.
    log = log_of("aws-p4d-a100-efa-2node-allreduce-nccl283.log")
    offer = replace(offer_by_id["aws-p5-h100"], gpu="A100-SXM-40GB")
    result = compare(log, offer, catalog.gpus, calibration)
    assert result.status == "low"
    assert "aws-ofi-nccl" in result.verdict
    assert result.reference.size_bytes == 2**30


def test_faster_than_predicted_is_flagged_for_calibration(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    slow_offer = replace(h100_ib_offer(offer_by_id), per_node_gbps=400)
    result = compare(log_of(H100_2NODE), slow_offer, catalog.gpus, calibration)
    assert result.status == "high"
    assert "calibration" in result.verdict


def test_missing_facts_are_named(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    offer = h100_ib_offer(offer_by_id)
    log = log_of(H100_2NODE)
    with pytest.raises(ComparisonError, match="per-node bandwidth"):
        compare(log, replace(offer, per_node_gbps=None), catalog.gpus, calibration)
    with pytest.raises(ComparisonError, match="GPUs per node"):
        compare(log, replace(offer, gpus_per_node=None), catalog.gpus, calibration)
    with pytest.raises(ComparisonError, match="device lines show 2 nodes, not 4"):
        compare(log, offer, catalog.gpus, calibration, nodes=4)
    with pytest.raises(ComparisonError, match="unknown GPU"):
        compare(log, replace(offer, gpu="TPU-v9"), catalog.gpus, calibration)
    broadcast = replace(log, op="broadcast")
    with pytest.raises(ComparisonError, match="does not predict broadcast"):
        compare(broadcast, offer, catalog.gpus, calibration)


def test_node_count_from_ranks_or_from_the_caller(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    offer = offer_by_id["oci-a100-80-v2"]
    oci = log_of("oci-bm-gpu-b4-a100-roce-2node-nccl2293-tests2179.log")
    assert oci.nodes is None
    assert compare(oci, offer, catalog.gpus, calibration).nodes == 2  # 16 ranks / 8 GPUs
    cut = log_of("coreweave-h100-64gpu-ib-sharp-truncated.log")
    with pytest.raises(ComparisonError, match="how many nodes"):
        compare(cut, h100_ib_offer(offer_by_id), catalog.gpus, calibration)
    result = compare(cut, h100_ib_offer(offer_by_id), catalog.gpus, calibration, nodes=8)
    assert result.nodes == 8
    records = measurement_records(cut, result, "coreweave")
    assert {r["confidence"] for r in records} == {"low"}  # warnings lower the confidence


def test_all_zero_log_cannot_be_compared(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    log = log_of(H100_2NODE)
    zeros = replace(log, rows=tuple(r for r in log.rows if r.busbw_gbs == 0))
    with pytest.raises(ComparisonError, match="zero bus bandwidth"):
        compare(zeros, h100_ib_offer(offer_by_id), catalog.gpus, calibration)


@pytest.mark.parametrize(
    ("size", "text"), [(8, "8 B"), (2**10, "1 KiB"), (3 * 2**20, "3 MiB"), (2**34, "16 GiB")]
)
def test_human_bytes(size: int, text: str) -> None:
    assert human_bytes(size) == text


def test_records_have_every_key_the_published_points_have(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    published = json.loads((DATA / "measurements.json").read_text())["points"]
    common = set.intersection(*(set(p) for p in published))
    collectives = [p["workload"] for p in published if p["workload"]["type"] == "collective"]
    common_workload = set.intersection(*(set(w) for w in collectives))
    log = log_of(H100_2NODE)
    result = compare(log, h100_ib_offer(offer_by_id), catalog.gpus, calibration)
    url = "https://github.com/NVIDIA/nccl-tests/issues/309"
    for record in measurement_records(log, result, url):
        assert common <= set(record), common - set(record)
        assert common_workload <= set(record["workload"])
        assert record["source_url"].startswith("https://")


def test_a_run_on_four_of_eight_gpus_per_node_gets_a_verdict_at_that_layout(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    offer = h100_ib_offer(offer_by_id)
    log = log_of(SUBSET)
    assert (log.ranks, log.nodes, log.ranks_per_node) == (8, 2, (4, 4))
    subset = compare(log, offer, catalog.gpus, calibration)
    assert (subset.nodes, subset.gpus_per_node, subset.ranks_per_node) == (2, 8, 4)
    assert subset.status in {"ok", "low", "high"}
    assert subset.verdict.endswith("(measured on 4 of the 8 GPUs of each node)")
    assert subset.to_dict()["ranks_per_node"] == 4
    # Four GPUs reach half the node's NICs: the model expects less than from full nodes.
    full = compare(log_of(H100_2NODE), offer, catalog.gpus, calibration)
    assert full.ranks_per_node == 8 and "GPUs of each node" not in full.verdict
    assert subset.reference.size_bytes == full.reference.size_bytes == 2**30
    assert subset.reference.predicted_busbw_gbs < 0.75 * full.reference.predicted_busbw_gbs
    records = measurement_records(log, subset, SUBSET)
    assert {(r["gpus_per_node"], r["nodes"], r["workload"]["gpus"]) for r in records} == {(4, 2, 8)}
    assert {r["per_node_gbps"] for r in records} == {1600}  # the 4 GPUs' share of 8 x 400G
    assert all(r["id"].startswith("crusoe-h100-ib-all-reduce-2n-4of8-") for r in records)
    # check-model, reading the records alone, predicts what the verdict compared against.
    report = check(records, catalog.gpus, calibration)
    predicted = {r.id: r.predicted for r in report.results}
    ref = next(r for r in records if r["workload"]["message_bytes"] == 2**30)
    assert predicted[ref["id"]] == pytest.approx(subset.reference.predicted_busbw_gbs, rel=1e-6)


def test_subset_layouts_the_model_cannot_take_are_named(
    catalog: CatalogData, offer_by_id: dict[str, Offer], calibration: Calibration
) -> None:
    text = (FIXTURES / SUBSET).read_text()
    uneven = parse_nccl_log(
        text.replace(
            "Rank  4 Group  0 Pid  38112 on     node-b", "Rank  4 Group  0 Pid  41873 on     node-a"
        ),
        "uneven.log",
    )
    assert uneven.ranks_per_node == (5, 3)
    with pytest.raises(ComparisonError, match=r"unevenly over the nodes \(5 \+ 3\)"):
        compare(uneven, h100_ib_offer(offer_by_id), catalog.gpus, calibration)
    # 16 ranks, only four device lines: the caller's node count sets ranks per node.
    oci = log_of("oci-bm-gpu-b4-a100-roce-2node-nccl2293-tests2179.log")
    offer = offer_by_id["oci-a100-80-v2"]
    assert compare(oci, offer, catalog.gpus, calibration, nodes=4).ranks_per_node == 4
    with pytest.raises(ComparisonError, match="16 ranks do not split evenly over 3 nodes"):
        compare(oci, offer, catalog.gpus, calibration, nodes=3)
    with pytest.raises(ComparisonError, match="16 per node, but oci-a100-80-v2 has 8 GPUs"):
        compare(oci, offer, catalog.gpus, calibration, nodes=1)
