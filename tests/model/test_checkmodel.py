"""Calibration targets on data/measurements.json, and the point-reading rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clusterscout.catalog.load import load_gpus
from clusterscout.model.calibration import Calibration
from clusterscout.model.checkmodel import (
    LARGE_MESSAGE_BYTES,
    PointResult,
    UnexpressibleError,
    check,
    express,
    figures_by_family,
    figures_by_stack,
    interpretation,
    percentile,
    predict,
    ratio_checks,
    source_group,
    summarise,
)
from tests.model.conftest import DATA_DIR, GPUS

SHARED = Path(__file__).resolve().parents[3] / "shared" / "research" / "measurements.json"


def _points() -> list[dict[str, Any]]:
    data = json.loads((DATA_DIR / "measurements.json").read_text(encoding="utf-8"))
    points: list[dict[str, Any]] = data["points"]
    return points


def test_every_original_research_point_is_kept_with_its_id_and_value() -> None:
    if not SHARED.exists():
        pytest.skip("shared research copy not present on this machine")
    original = json.loads(SHARED.read_text(encoding="utf-8"))["points"]
    merged = {p["id"]: p for p in _points()}
    for point in original:
        assert merged[point["id"]]["value"] == point["value"]


def test_every_point_has_a_source_url_and_a_unique_id() -> None:
    points = _points()
    assert all(str(p.get("source_url", "")).startswith("https://") for p in points)
    assert len({p["id"] for p in points}) == len(points)


def test_check_model_meets_targets(cal: Calibration) -> None:
    report = check(_points(), load_gpus(DATA_DIR), cal)
    assert report.total == len(_points())
    inconsistent = [u for u in report.unexpressed if u.reason.startswith("inconsistent")]
    assert not inconsistent
    assert len(report.results) >= 100
    assert report.median_abs_error_pct <= 10.0
    assert report.p90_abs_error_pct <= 25.0
    # the stored figures must match the data they came from (the file is current)
    assert report.p90_abs_error_pct == pytest.approx(cal.p90_abs_error_pct, abs=0.05)
    assert report.median_abs_error_pct == pytest.approx(cal.median_abs_error_pct, abs=0.05)
    assert len(report.dense_results) == cal.figures["in_sample"].points
    # held out by source, the issue-8 targets
    held = cal.figures["holdout"]
    assert held.median_abs_error_pct <= 10.0
    assert held.p90_abs_error_pct <= 25.0
    assert abs(held.median_signed_error_pct) <= 5.0
    # issue 25: every calibrated GPU family is unbiased in sample within 8 %
    families = figures_by_family(report.dense_results, cal)
    for fam in cal.families.values():
        if fam.calibrated:
            assert abs(families[fam.name].median_signed_error_pct) <= 8.0, fam.name
    out = report.to_dict()
    assert out["expressed"] == len(report.results)
    assert {"id", "reason"} == set(out["unexpressed"][0])


def test_moe_points_are_expressed_and_reported_apart(cal: Calibration) -> None:
    # the catalog's GPUs (B300 too), as scripts/calibrate_moe.py expresses them
    report = check(_points(), load_gpus(DATA_DIR), cal)
    moe = report.moe_results
    # issue 11: at least 10 published MoE training points, none of them in the dense figures
    assert len(moe) >= 10
    assert all(r.stack is not None for r in moe)
    assert not {r.id for r in moe} & {r.id for r in report.dense_results}
    # the stored MoE figures come from the fitted points and constants (the file is current)
    stored = cal.moe.figures["in_sample"]
    excluded = {p["id"] for p in _points() if p.get("exclude_from_fit")}
    assert stored.points == len([r for r in moe if r.id not in excluded])
    fitted = summarise(r for r in moe if r.id not in excluded)
    assert fitted.median_abs_error_pct == pytest.approx(stored.median_abs_error_pct, abs=0.05)
    assert "holdout" in cal.moe.figures
    assert report.to_dict()["moe"]["points"] == len(moe)


def test_every_unexpressed_point_has_a_reason(cal: Calibration) -> None:
    report = check(_points(), GPUS, cal)
    assert all(u.reason for u in report.unexpressed)


def test_helpers() -> None:
    assert percentile([], 90) == 0
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([0, 10], 90) == pytest.approx(9)
    assert source_group({"source_url": "https://github.com/NVIDIA/NeMo/blob/x/a.md"}) == (
        "github.com/NVIDIA/NeMo"
    )
    assert source_group({"source_url": "https://arxiv.org/abs/2104.04473v5"}) == (
        "arxiv.org/abs/2104.04473"
    )
    assert source_group({"source_url": "https://huggingface.co/bigscience/bloom"}) == (
        "huggingface.co/bigscience"
    )
    assert source_group({"id": "p", "source_group": "talk"}) == "talk"
    assert source_group({"id": "p"}) == "p"
    assert interpretation({"id": "x", "source_url": "https://example.com/a"}) == {}


def _row(measured: float, predicted: float, speed: bool, stack: str | None) -> PointResult:
    return PointResult("p", "m", "u", measured, predicted, "high", speed, stack, "g")


def test_signed_error_is_optimism_for_speeds_and_for_times() -> None:
    # a throughput predicted 10% high and a time predicted 10% short are both optimistic
    fast = _row(100.0, 110.0, True, "megatron")
    short = _row(10.0, 9.0, False, "pytorch")
    slow = _row(10.0, 12.5, False, "pytorch")
    assert fast.signed_error_pct == pytest.approx(10.0)
    assert short.signed_error_pct == pytest.approx((10 / 9 - 1) * 100)
    assert slow.signed_error_pct == pytest.approx(-20.0)
    fig = summarise([fast, short, slow])
    assert fig.points == 3
    assert fig.optimistic_share == pytest.approx(2 / 3)
    assert fig.median_signed_error_pct == pytest.approx(10.0)
    assert fig.median_abs_error_pct == pytest.approx(10.0)
    by_stack = figures_by_stack([fast, short, slow, _row(1, 1, True, None)])
    assert set(by_stack) == {"megatron", "pytorch"}
    assert by_stack["pytorch"].points == 2
    assert summarise([]).points == 0


BASE: dict[str, Any] = {
    "id": "x",
    "source_url": "https://example.com/x",
    "gpu": "H100",
    "gpus_per_node": 8,
    "nodes": 2,
    "fabric": "infiniband",
    "per_node_gbps": 3200,
    "workload": {"type": "collective", "op": "all_reduce", "message_bytes": None},
    "metric": "busbw",
    "value": 380,
    "unit": "GB/s",
    "confidence": "high",
}

TRAINING: dict[str, Any] = {
    "type": "training",
    "stack": "pytorch",
    "model": {"name": "M", "params": 7e9, "layers": 32, "hidden": 4096, "vocab": 32000},
    "seq_len": 2048,
    "global_batch": 64,
    "micro_batch": None,
    "parallelism": {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "vp": 1, "dp": None, "sharding": "fsdp"},
    "precision": None,
    "recompute": None,
}


def _with(**changes: Any) -> dict[str, Any]:
    point = json.loads(json.dumps(BASE))
    point.update(changes)
    return point


def _training(
    metric: str = "tokens_per_s_per_gpu", unit: str = "tokens/s/GPU", **work: Any
) -> dict[str, Any]:
    workload = json.loads(json.dumps(TRAINING))
    workload.update(work)
    return _with(workload=workload, metric=metric, unit=unit, value=1000)


def test_express_collective_defaults_to_large_message() -> None:
    e = express(BASE, GPUS)
    assert e.output_key == "busbw_gbs"
    assert e.stack is None
    assert e.scenario.workload.message_bytes == LARGE_MESSAGE_BYTES  # type: ignore[union-attr]
    gbit = express(_with(unit="Gbit/s"), GPUS)
    assert gbit.scale == pytest.approx(8.0)
    ring = _with(
        nodes=1,
        unit="us",
        metric="time",
        workload={
            "type": "collective",
            "op": "all_reduce",
            "message_bytes": 8,
            "algorithm": "ring",
        },
    )
    e3 = express(ring, GPUS)
    assert e3.scale == 1e6
    assert e3.scenario.workload.algorithm.value == "ring"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"workload": {"type": "p2p"}}, "no scenario kind"),
        ({"value": "30-40"}, "range or bound"),
        ({"gpu": None}, "GPU model not stated"),
        ({"gpu": "V100"}, "not in the catalog"),
        ({"nodes": None}, "node count"),
        ({"gpus_per_node": None}, "GPUs per node"),
        ({"nvlink_domain_gpus": 72}, "NVL72"),
        ({"workload": {"type": "collective", "in_network_reduction": True}}, "SHARP"),
        ({"fabric": None}, "fabric not stated"),
        ({"per_node_gbps": None}, "per-node bandwidth"),
        ({"metric": "latency histogram"}, "not an nccl-tests output"),
        ({"unit": "furlongs"}, "not converted"),
    ],
)
def test_express_refuses_with_reason(changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(UnexpressibleError, match=reason):
        express(_with(**changes), GPUS)


@pytest.mark.parametrize(
    ("work", "metric", "reason"),
    [
        ({"seq_len": None}, "tokens_per_s_per_gpu", "seq len"),
        ({"global_batch": None}, "tokens_per_s_per_gpu", "global batch"),
        ({"parallelism": None}, "tokens_per_s_per_gpu", "parallel layout"),
        ({"model": {"name": "X"}}, "tokens_per_s_per_gpu", "model size"),
        ({"model": {"name": "X", "params": 1e9, "experts": 8}}, "tokens_per_s_per_gpu", "top-k"),
        ({"precision": "fp4"}, "tokens_per_s_per_gpu", "not modelled"),
        ({"stack": "other"}, "tokens_per_s_per_gpu", "no fitted constants"),
        ({}, "time_to_train", "no absolute model output"),
        ({"global_batch": 3}, "tokens_per_s_per_gpu", "inconsistent"),
    ],
)
def test_express_training_refuses_with_reason(
    work: dict[str, Any], metric: str, reason: str
) -> None:
    with pytest.raises(UnexpressibleError, match=reason):
        express(_training(metric=metric, **work), GPUS)


def test_express_training_rules() -> None:
    e = express(_training(), GPUS)
    w = e.scenario.workload
    assert e.output_key == "tokens_per_s_per_gpu" and e.scale == 1.0 and e.stack == "pytorch"
    assert w.parallelism.sharding.value == "fsdp"  # type: ignore[union-attr]
    assert w.micro_batch == 1 and w.precision.value == "bf16"  # type: ignore[union-attr]
    # params from Narayanan et al. eq. (2) when only the shape is given
    shape = express(
        _training(model={"name": "GPT", "layers": 24, "hidden": 2304, "vocab": 51200}), GPUS
    )
    assert 1.5e9 < shape.scenario.workload.model.params < 1.9e9  # type: ignore[union-attr]
    whole = express(_training(metric="tokens_per_s", unit="tokens/s"), GPUS)
    assert whole.scale == 16.0
    step = express(_training(metric="step_time", unit="ms"), GPUS)
    assert step.output_key == "step_time_s" and step.scale == 1000.0
    mfu = express(_training(metric="mfu", unit="%"), GPUS)
    assert mfu.scale == 100.0
    assert express(_training(metric="mfu", unit="fraction"), GPUS).scale == 1.0
    hw = _training(metric="model_tflops_per_gpu", unit="TFLOP/s/GPU", recompute="full")
    assert express(hw, GPUS).scale == 1.0
    hw["flops_include_recompute"] = True
    assert express(hw, GPUS).scale == pytest.approx(4 / 3)
    tied = express(_training(model={"name": "M", "params": 7e9, "tied_embeddings": True}), GPUS)
    assert tied.scenario.workload.model.tied_embeddings  # type: ignore[union-attr]


def test_interpretations_apply_by_group_and_id() -> None:
    titan = _training(fabric=None)
    titan["source_url"] = "https://github.com/pytorch/torchtitan/blob/x/b.md"
    titan["gpu"] = "H100-SXM-96GB-HBM2e-500W"
    e = express(titan, GPUS)
    assert e.scenario.cluster.fabric is not None
    assert e.gpu.name == "H100-SXM-80GB"
    meta = _training(stack="other")
    meta["source_url"] = "https://arxiv.org/abs/2407.21783"
    e2 = express(meta, GPUS)
    assert e2.stack == "megatron"
    assert e2.scenario.workload.parallelism.sharding.value == "zero2"  # type: ignore[union-attr]


def test_point_the_gpu_cannot_run_is_reported(cal: Calibration) -> None:
    point = _training(precision="fp8")
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


def test_report_json_carries_bias_and_stack(cal: Calibration) -> None:
    out = check(_points(), GPUS, cal).to_dict()
    assert 0 <= out["optimistic_share"] <= 1
    stacks = {r["stack"] for r in out["results"]}
    assert {"megatron", "pytorch", "deepspeed", None} <= stacks
    assert all("signed_error_pct" in r and r["source_group"] for r in out["results"])


def test_fast_prediction_equals_the_full_estimate(cal: Calibration) -> None:
    from clusterscout.model.estimate import estimate

    seen = set()
    for point in _points():
        try:
            e = express(point, GPUS)
        except UnexpressibleError:
            continue
        if e.stack is None or e.output_key in seen:
            continue
        seen.add(e.output_key)
        full = getattr(estimate(e.scenario, e.gpu, cal).result, e.output_key) * e.scale
        assert predict(e, cal) == pytest.approx(full, rel=1e-12)
    assert {"step_time_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu"} <= seen


def _gpu_row(pid: str, gpu: str, measured: float, predicted: float) -> PointResult:
    return PointResult(pid, "tokens_per_s_per_gpu", "t", measured, predicted, "high", gpu=gpu)


def test_ratio_check_compares_the_models_ratio_with_the_published_one() -> None:
    rows = [
        _gpu_row("a", "H100-SXM-80GB", 200.0, 220.0),
        _gpu_row("b", "A100-SXM-80GB", 100.0, 88.0),
    ]
    ratios = [
        {"id": "r", "benchmark": "x", "a": "a", "b": "b", "value": 2.0, "confidence": "high"},
        {"id": "gone", "a": "a", "b": "missing", "value": 2.0},
        {"id": "zero", "a": "a", "b": "b", "value": 0},
    ]
    checked, skipped = ratio_checks(ratios, rows)
    (r,) = checked
    # a reads 10 % fast and b 12 % slow: the model's ratio is 2 * 1.1 / 0.88
    assert r.predicted == pytest.approx(2.5)
    assert r.error_pct == pytest.approx(25.0)
    assert (r.gpu_a, r.gpu_b) == ("H100-SXM-80GB", "A100-SXM-80GB")
    assert [u.id for u in skipped] == ["gone", "zero"] and "missing" in skipped[0].reason
    assert "not a positive ratio" in skipped[1].reason


def test_the_stored_ratios_name_points_of_two_gpu_families(cal: Calibration) -> None:
    data = json.loads((DATA_DIR / "measurements.json").read_text(encoding="utf-8"))
    ids = {p["id"] for p in data["points"]}
    assert data["ratios"]
    for ratio in data["ratios"]:
        assert {ratio["a"], ratio["b"]} <= ids
        assert ratio["source_url"].startswith("https://") and ratio["value"] > 0
    report = check(_points(), load_gpus(DATA_DIR), cal)
    checked, _ = ratio_checks(data["ratios"], report.results)
    assert {cal.family_for(r.gpu_a).name != cal.family_for(r.gpu_b).name for r in checked} == {True}
