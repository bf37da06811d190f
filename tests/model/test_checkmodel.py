"""Calibration targets on data/measurements.json, and the point-reading rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.checkmodel import (
    LARGE_MESSAGE_BYTES,
    UnexpressibleError,
    check,
    express,
    fabric_kind,
    parse_size_bytes,
    percentile,
)
from tests.model.conftest import DATA_DIR, GPUS

SHARED = Path(__file__).resolve().parents[3] / "shared" / "research" / "measurements.json"


def _points() -> list[dict[str, Any]]:
    data = json.loads((DATA_DIR / "measurements.json").read_text(encoding="utf-8"))
    points: list[dict[str, Any]] = data["points"]
    return points


def test_measurements_copy_is_unchanged() -> None:
    if not SHARED.exists():
        pytest.skip("shared research copy not present on this machine")
    assert (DATA_DIR / "measurements.json").read_bytes() == SHARED.read_bytes()


def test_check_model_meets_targets(cal: Calibration) -> None:
    report = check(_points(), GPUS, cal)
    assert report.total == len(_points())
    inconsistent = [u for u in report.unexpressed if u.reason.startswith("inconsistent")]
    assert not inconsistent
    assert len(report.results) >= 50
    assert report.median_abs_error_pct <= 10.0
    assert report.p90_abs_error_pct <= 25.0
    # the stored band is what the planner shows; it must match the data it came from
    assert report.p90_abs_error_pct == pytest.approx(cal.p90_abs_error_pct, abs=0.5)
    out = report.to_dict()
    assert out["expressed"] == len(report.results)
    assert {"id", "reason"} == set(out["unexpressed"][0])


def test_every_unexpressed_point_has_a_reason(cal: Calibration) -> None:
    report = check(_points(), GPUS, cal)
    assert all(u.reason for u in report.unexpressed)


def test_helpers() -> None:
    assert parse_size_bytes("16MiB") == 16 * 2**20
    assert parse_size_bytes("up to 128MiB") == 128 * 2**20
    assert parse_size_bytes("4GiB") == 4 * 2**30
    assert parse_size_bytes("large") is None
    assert fabric_kind("AWS EFA v4 (8x400G)") is FabricKind.EFA
    assert fabric_kind("GCP GPUDirect-TCPXO") is FabricKind.TCPXO
    assert fabric_kind("A3 High GPUDirect-TCPX") is FabricKind.TCPX
    assert fabric_kind("100GbE TCP/IP sockets") is FabricKind.ETHERNET
    assert fabric_kind("25G Ethernet") is FabricKind.ETHERNET
    assert fabric_kind("RoCEv2") is FabricKind.ROCE
    assert fabric_kind("Omni-Path") is None
    assert fabric_kind(None) is None
    assert percentile([], 90) == 0
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([0, 10], 90) == pytest.approx(9)


BASE: dict[str, Any] = {
    "id": "x",
    "gpu": "H100",
    "gpus_per_node": 8,
    "nodes": 2,
    "fabric": "InfiniBand NDR",
    "per_node_gbps": 3200,
    "workload": {"type": "collective", "op": "all_reduce"},
    "metric": "busbw",
    "value": 380,
    "unit": "GB/s",
    "confidence": "high",
}


def _with(**changes: Any) -> dict[str, Any]:
    point = json.loads(json.dumps(BASE))
    point.update(changes)
    return point


def test_express_collective_defaults_to_large_message() -> None:
    e = express(BASE, GPUS)
    assert e.output_key == "busbw_gbs"
    assert e.scenario.workload.message_bytes == LARGE_MESSAGE_BYTES  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"workload": {"type": "p2p"}}, "no scenario kind"),
        ({"value": "30-40"}, "range or bound"),
        ({"gpu": None}, "GPU model not stated"),
        ({"gpu": "V100"}, "not in the catalog"),
        ({"nodes": None}, "node count"),
        ({"fabric": "NVL72 rack"}, "NVL72"),
        ({"fabric": "IB with SHARP"}, "SHARP"),
        ({"fabric": "Omni-Path"}, "fabric not stated"),
        ({"per_node_gbps": None}, "per-node bandwidth"),
        ({"metric": "latency histogram"}, "not an nccl-tests output"),
        ({"workload": {"type": "training", "model": "GPT 1B"}}, "sequence length"),
        ({"workload": {"type": "training", "model": "GPT 1B", "seq_len": 2048}}, "global batch"),
        (
            {
                "workload": {
                    "type": "training",
                    "model": "X",
                    "seq_len": 2048,
                    "global_batch": 8,
                    "tp": 1,
                }
            },
            "model size",
        ),
        (
            {
                "workload": {
                    "type": "training",
                    "model": "GPT 1B",
                    "seq_len": 2048,
                    "global_batch": 8,
                }
            },
            "parallel layout",
        ),
        (
            {
                "workload": {
                    "type": "training",
                    "model": "GPT 1B",
                    "seq_len": 2048,
                    "global_batch": 8,
                    "tp": 1,
                },
                "metric": "MFU",
            },
            "no absolute",
        ),
        (
            {
                "workload": {
                    "type": "training",
                    "model": "GPT 1B",
                    "seq_len": 2048,
                    "global_batch": 3,
                    "tp": 1,
                },
                "metric": "step time",
            },
            "inconsistent",
        ),
    ],
)
def test_express_refuses_with_reason(changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(UnexpressibleError, match=reason):
        express(_with(**changes), GPUS)


def test_express_training_rules() -> None:
    point = _with(
        id="megatron2021-weak-test",
        nodes=1,
        metric="TFLOP/s per GPU",
        unit="TFLOP/s",
        workload={
            "type": "training",
            "model": "GPT 1.7B",
            "hidden": 2304,
            "layers": 24,
            "model_parallel": 16,
            "global_batch": 512,
            "seq_len": 2048,
        },
    )
    point["nodes"] = 2
    e = express(point, GPUS)
    w = e.scenario.workload
    assert e.scale == pytest.approx(4 / 3)
    assert w.parallelism.tp == 8 and w.parallelism.pp == 2  # type: ignore[union-attr]
    assert w.recompute.value == "full"  # type: ignore[union-attr]
    fsdp = _with(
        nodes=1,
        metric="tokens/s per GPU",
        workload={
            "type": "training",
            "model": "MPT-7B",
            "parallelism": "FSDP FULL_SHARD",
            "global_batch": 8,
            "seq_len": 2048,
            "activation_ckpt": False,
            "precision": "FP8",
        },
    )
    e2 = express(fsdp, GPUS)
    assert e2.output_key == "tokens_per_s_per_gpu"
    assert e2.scenario.workload.parallelism.sharding.value == "fsdp"  # type: ignore[union-attr]
    sel = _with(
        nodes=1,
        metric="iteration time",
        workload={
            "type": "training",
            "model": "GPT 22B",
            "tp": 8,
            "global_batch": 4,
            "seq_len": 2048,
            "recompute": "sequence-parallel + selective",
        },
    )
    assert express(sel, GPUS).scenario.workload.recompute.value == "selective"  # type: ignore[union-attr]
    ring = _with(
        fabric="NVLink4 (NVLS disabled)",
        nodes=1,
        unit="us",
        metric="time",
        workload={"type": "collective", "op": "all_reduce", "message_bytes": 8},
    )
    e3 = express(ring, GPUS)
    assert e3.scale == 1e6
    assert e3.scenario.workload.algorithm.value == "ring"  # type: ignore[union-attr]


def test_point_the_gpu_cannot_run_is_reported(cal: Calibration) -> None:
    point = _with(
        nodes=1,
        metric="step time",
        unit="s",
        workload={
            "type": "training",
            "model": "GPT 1B",
            "tp": 1,
            "seq_len": 2048,
            "global_batch": 8,
            "precision": "FP8",
        },
    )
    point["gpu"] = "A100"
    report = check([point], GPUS, cal)
    assert report.unexpressed[0].reason.startswith("inconsistent point")
    assert report.median_abs_error_pct == 0


def test_malformed_points_are_reported_not_raised(cal: Calibration) -> None:
    expressed = {r.id for r in check(_points(), GPUS, cal).results}
    good = next(p for p in _points() if p["id"] in expressed)
    broken_workload = {**good, "id": "broken", "workload": 5}
    zero = {**good, "id": "zero", "value": 0}
    wrong_type = {**good, "id": "wrong-type", "nodes": "many"}
    report = check([1, None, broken_workload, zero, wrong_type], GPUS, cal)  # type: ignore[list-item]
    reasons = {u.id: u.reason for u in report.unexpressed}
    assert report.total == 5
    assert not report.results
    assert reasons["?"].startswith("not a JSON object")
    assert reasons["broken"].startswith("malformed point: AttributeError")
    assert reasons["zero"] == "value 0 is not a positive measurement"
    assert reasons["wrong-type"].startswith("malformed point: ")
