"""Inference points in the roofline's terms: what is expressed, what is not and why."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from clusterscout.catalog.load import load_gpus
from clusterscout.model.calibration import InferenceCalibration
from clusterscout.model.checkinference import check, express, predict

GPUS = load_gpus(Path(__file__).resolve().parents[2] / "data")
POINT: dict[str, Any] = {
    "id": "p",
    "source_url": "https://example.org/bench",
    "gpu": "H100-SXM-80GB",
    "workload": {
        "type": "inference",
        "model": {
            "params": 8.03e9,
            "layers": 32,
            "hidden": 4096,
            "heads": 32,
            "kv_heads": 8,
            "vocab": 128256,
            "ffn_hidden": 14336,
        },
        "precision": "fp8",
        "parallelism": {"tp": 2, "pp": 1},
        "input_len": 1000,
        "output_len": 1000,
        "concurrency": 16,
    },
    "metric": "output_tokens_per_s",
    "value": 1000.0,
    "unit": "tokens/s",
}
CAL = InferenceCalibration(0.7, 0.3)


def _with(path: str, value: Any) -> dict[str, Any]:
    point = copy.deepcopy(POINT)
    target = point
    *parents, key = path.split(".")
    for part in parents:
        target = target[part]
    target[key] = value
    return point


def test_metrics_agree_with_each_other() -> None:
    total = predict(express(POINT, GPUS), CAL)
    per_gpu = predict(express(_with("metric", "output_tokens_per_s_per_gpu"), GPUS), CAL)
    itl_ms = predict(express(_with("metric", "itl"), GPUS), CAL)
    assert per_gpu == pytest.approx(total / 2)
    assert itl_ms == pytest.approx(16 / total * 1e3)


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        ("metric", "ttft", "metric 'ttft'"),
        ("workload.precision", "fp4", "precision 'fp4'"),
        ("workload.parallelism", {"tp": None}, "parallel degree not stated"),
        ("gpu", "TPU-v5", "not in the catalog"),
        ("workload.concurrency", None, "concurrency not stated"),
        ("workload.model", {"params": 6.7e11, "experts": 256}, "mixture-of-experts"),
    ],
)
def test_points_the_roofline_cannot_express_say_why(path: str, value: Any, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        express(_with(path, value), GPUS)


def test_check_skips_other_points_and_lists_the_unexpressed() -> None:
    training = {"id": "t", "workload": {"type": "training"}}
    report = check([POINT, training, "junk", _with("workload.concurrency", 0)], GPUS, CAL)
    assert [r.id for r in report.results] == ["p"]
    assert [u.id for u in report.unexpressed] == ["p"]
    assert report.results[0].speed_metric
