"""Inference points in the serving model's terms: what is expressed, what is not and why."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from clusterscout.catalog.calibration import load_calibration
from clusterscout.catalog.load import load_gpus
from clusterscout.model.calibration import InferenceCalibration
from clusterscout.model.checkinference import check, express, expressible, predict

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = load_gpus(DATA)
REAL = load_calibration(DATA)
POINT: dict[str, Any] = {
    "id": "p",
    "source_url": "https://example.org/bench",
    "gpu": "H100-SXM-80GB",
    "workload": {
        "type": "inference",
        "engine": "vLLM",
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
MOE = {
    "params": 46.7e9,
    "layers": 32,
    "hidden": 4096,
    "heads": 32,
    "kv_heads": 8,
    "vocab": 32000,
    "ffn_hidden": 14336,
    "experts": 8,
    "top_k": 2,
    "expert_ffn_hidden": 14336,
    "moe_layer_freq": 1,
}
CAL = InferenceCalibration(0.7, 0.3, prefill_efficiency=0.5, layer_overhead_s=50e-6)


def _with(path: str, value: Any, point: dict[str, Any] | None = None) -> dict[str, Any]:
    point = copy.deepcopy(point or POINT)
    target = point
    *parents, key = path.split(".")
    for part in parents:
        target = target[part]
    target[key] = value
    return point


def test_metrics_agree_with_each_other() -> None:
    total = predict(express(POINT, GPUS, REAL), CAL)
    per_gpu = predict(express(_with("metric", "output_tokens_per_s_per_gpu"), GPUS, REAL), CAL)
    itl_ms = predict(express(_with("metric", "itl"), GPUS, REAL), CAL)
    tpot_ms = predict(express(_with("metric", "tpot"), GPUS, REAL), CAL)
    assert per_gpu == pytest.approx(total / 2)
    assert itl_ms == pytest.approx(16 / total * 1e3)
    assert tpot_ms == itl_ms


def test_a_batch_latency_is_its_prefill_plus_the_decode_steps() -> None:
    batch = _with("metric", "batch_latency", _with("unit", "ms"))
    ttft = express(_with("metric", "ttft", _with("unit", "ms")), GPUS, REAL)
    ms = predict(express(batch, GPUS, REAL), CAL)
    seconds = predict(express(_with("unit", "s", batch), GPUS, REAL), CAL)
    itl = _with("metric", "itl")
    step_ms = predict(express(itl, GPUS, REAL), CAL)
    assert seconds == pytest.approx(ms / 1e3)
    # 999 decode steps follow the first token; these steps carry no prompt work, so each is
    # shorter than a continuous-batching step that does
    assert predict(ttft, CAL) < ms < predict(ttft, CAL) + 999 * step_ms


def test_time_to_first_token_grows_with_the_prompt_and_the_batch() -> None:
    ttft = _with("metric", "ttft", _with("unit", "ms"))
    one = predict(express(_with("workload.concurrency", 1, ttft), GPUS, REAL), CAL)
    eight = predict(express(_with("workload.concurrency", 8, ttft), GPUS, REAL), CAL)
    longer = predict(express(_with("workload.input_len", 8000, ttft), GPUS, REAL), CAL)
    assert one < eight < 8 * one + 1e-9 < longer


def test_moe_points_are_expressed_with_their_experts() -> None:
    point = express(_with("workload.model", MOE), GPUS, REAL)
    assert point.model.is_moe and point.kind == "moe"
    assert point.model.experts == 8 and point.model.top_k == 2
    dense = express(POINT, GPUS, REAL)
    assert dense.kind == "decode"
    assert express(_with("metric", "ttft"), GPUS, REAL).kind == "ttft"


def test_decode_only_points_carry_no_prompt_work() -> None:
    mixed = predict(express(POINT, GPUS, REAL), CAL)
    decode_only = predict(express(_with("workload.phase", "decode"), GPUS, REAL), CAL)
    assert decode_only > mixed


def test_old_tensorrt_llm_runs_use_the_legacy_attention_kernels() -> None:
    old = express(_with("workload.engine", "TensorRT-LLM v0.6.1 (static)"), GPUS, REAL)
    v05 = express(_with("workload.engine", "TensorRT-LLM v0.5"), GPUS, REAL)
    new = express(_with("workload.engine", "TensorRT-LLM v0.7a"), GPUS, REAL)
    assert old.legacy_attention and v05.legacy_attention and not new.legacy_attention
    slow = InferenceCalibration(0.7, 0.3, legacy_gqa_reads=1.0)
    assert predict(old, slow) < predict(new, slow)


def test_points_marked_out_of_the_fit_are_still_checked() -> None:
    marked = express({**POINT, "exclude_from_fit": True}, GPUS, REAL)
    assert not marked.fitted
    assert express(POINT, GPUS, REAL).fitted


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        ("metric", "tokens", "metric 'tokens'"),
        ("workload.precision", "fp4", "precision 'fp4'"),
        ("workload.parallelism", {"tp": None}, "parallel degree not stated"),
        ("workload.parallelism", {"tp": 1, "ep": 32, "dp": 32}, "expert parallelism"),
        ("workload.parallelism", {"tp": 16}, "across nodes"),
        ("gpu", "TPU-v5", "not in the catalog"),
        ("workload.concurrency", None, "concurrency not stated"),
        ("workload.model", {"params": 6.7e11, "experts": 256}, "top-k"),
    ],
)
def test_points_the_model_cannot_express_say_why(path: str, value: Any, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        express(_with(path, value), GPUS, REAL)


def test_a_batch_latency_needs_a_time_unit() -> None:
    with pytest.raises(ValueError, match="not ms or s"):
        express(_with("metric", "batch_latency", _with("unit", "min")), GPUS, REAL)


def test_check_skips_other_points_and_lists_the_unexpressed() -> None:
    training = {"id": "t", "workload": {"type": "training"}}
    result = check([POINT, training, "junk", _with("workload.concurrency", 0)], GPUS, REAL)
    assert [r.id for r in result.report.results] == ["p"]
    assert [u.id for u in result.report.unexpressed] == ["p"]
    assert result.report.results[0].speed_metric
    assert set(result.by_kind) == {"decode"}
    assert set(result.by_gpu) == {"H100-SXM-80GB"}


def test_check_needs_inference_constants() -> None:
    with pytest.raises(ValueError, match="no inference constants"):
        check([POINT], GPUS, replace(REAL, inference=None))


def test_the_shipped_points_are_expressed_and_checked_against_the_shipped_constants() -> None:
    raw = json.loads((DATA / "measurements.json").read_text(encoding="utf-8"))["points"]
    points, _ = expressible(raw, GPUS, REAL)
    inference = REAL.inference
    assert inference is not None
    # the calibration's evidence counts are these points per GPU, so they cannot drift apart
    counts: dict[str, int] = {}
    for p in points:
        counts[p.gpu.name] = counts.get(p.gpu.name, 0) + 1
    assert counts == dict(inference.evidence)
    assert {"decode", "ttft", "moe"} <= {p.kind for p in points}
