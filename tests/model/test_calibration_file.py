"""data/calibration.toml loads; broken files fail with the key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterscout.catalog.calibration import (
    CalibrationError,
    load_calibration,
    parse_calibration,
)
from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import MoeCalibration
from clusterscout.model.inputs import Stack
from tests.model.conftest import DATA_DIR

TEXT = (DATA_DIR / "calibration.toml").read_text(encoding="utf-8")


def test_real_file_loads_with_every_fabric_and_sources() -> None:
    cal = load_calibration(DATA_DIR)
    assert set(cal.fabrics) == set(FabricKind)
    assert all(f.sources for f in cal.fabrics.values())
    assert cal.intra_node.sources and cal.training.sources
    assert cal.default_family.sources and not cal.default_family.calibrated
    assert 0 < cal.p90_abs_error_pct <= 25
    # The held-out error is measured too, and it is what the planner shows as its band.
    assert cal.holdout_p90_abs_error_pct is not None
    assert cal.error_band_pct == cal.holdout_p90_abs_error_pct
    assert cal.family_for("H100-SXM-80GB").calibrated
    assert cal.u_max("H100-SXM-80GB", Stack.PYTORCH) > 0
    assert 0 < cal.u_max("H100-SXM-80GB", Stack.MEGATRON) <= 1
    assert cal.stack(Stack.MEGATRON).level == 1.0
    # every family says what its level rests on, and a calibrated one has the points for it
    for fam in cal.families.values():
        assert fam.sources and 0 < fam.level <= 1
        assert fam.calibrated == (fam.points >= 5)
    assert set(cal.stacks) == set(Stack)
    assert all(s.sources for s in cal.stacks.values())
    # the error figures of the calibration run, with the signed bias and the test set
    assert {"in_sample", "holdout", "holdout.pytorch", "test"} <= set(cal.figures)
    assert cal.test_sources
    assert cal.figures["holdout"].p90_abs_error_pct == cal.holdout_p90_abs_error_pct


def test_without_holdout_figures_the_band_is_the_in_sample_p90() -> None:
    text = "\n".join(line for line in TEXT.splitlines() if not line.startswith("holdout_"))
    cal = parse_calibration(text)
    assert cal.holdout_p90_abs_error_pct is None
    assert cal.error_band_pct == cal.p90_abs_error_pct


def test_a_single_holdout_fold_is_an_error() -> None:
    text = "\n".join(
        "holdout_folds = 1" if line.startswith("holdout_folds") else line
        for line in TEXT.splitlines()
    )
    with pytest.raises(CalibrationError, match=r"check\.holdout_folds"):
        parse_calibration(text)


def test_unknown_key_is_an_error() -> None:
    with pytest.raises(CalibrationError, match=r"training\.fudge"):
        parse_calibration(TEXT.replace("[training]", "[training]\nfudge = 1"))


def test_missing_sources_is_an_error() -> None:
    broken = "\n".join(
        line for line in TEXT.splitlines() if not line.startswith("sources") or "[check]" in line
    )
    with pytest.raises(CalibrationError, match="sources"):
        parse_calibration(broken)


def test_missing_fabric_and_default_curve() -> None:
    start = TEXT.index("[fabrics.tcpx]")
    end = TEXT.index("[fabrics.ethernet]")
    with pytest.raises(CalibrationError, match=r"fabrics\.tcpx"):
        parse_calibration(TEXT[:start] + TEXT[end:])
    start = TEXT.index('[families."default"]')
    end = TEXT.index("[stacks.megatron]")
    with pytest.raises(CalibrationError, match=r"families\.default"):
        parse_calibration(TEXT[:start] + TEXT[end:])


def test_a_family_cannot_claim_calibration_without_points() -> None:
    start = TEXT.index('[families."MI300X"]')
    table = TEXT[start : TEXT.index("\n\n", start)]
    claimed = table.replace("calibrated = false", "calibrated = true")
    with pytest.raises(CalibrationError, match=r"families\.MI300X\.calibrated"):
        parse_calibration(TEXT.replace(table, claimed))


def test_a_gpu_in_two_families_is_an_error() -> None:
    start = TEXT.index('[families."H200"]')
    table = TEXT[start : TEXT.index("\n\n", start)]
    both = table.replace('gpus = ["H200-SXM-141GB"]', 'gpus = ["H200-SXM-141GB", "H100-SXM-80GB"]')
    with pytest.raises(CalibrationError, match="H100-SXM-80GB is also in"):
        parse_calibration(TEXT.replace(table, both))


def test_missing_stack_is_an_error() -> None:
    start = TEXT.index("[stacks.deepspeed]")
    end = TEXT.index("[training]")
    with pytest.raises(CalibrationError, match=r"stacks\.deepspeed"):
        parse_calibration(TEXT[:start] + TEXT[end:])


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match=r"calibration\.toml"):
        parse_calibration("this is = = not toml")
    with pytest.raises(CalibrationError, match="cannot read"):
        load_calibration(tmp_path)


def test_serving_constants_load_in_their_units_with_evidence_per_gpu() -> None:
    inference = load_calibration(DATA_DIR).inference
    assert inference is not None
    # microseconds in the file, seconds in the model
    assert 0 < inference.layer_overhead_s < 1e-3 and 0 < inference.prefill_layer_overhead_s < 1e-3
    assert 0 < inference.weight_only_bandwidth <= 1 and 0 < inference.fp8_math <= 1
    assert inference.evidence_for("H100-SXM-80GB") >= 5
    assert inference.evidence_for("MI300X-192GB") == 0
    assert {"holdout.decode", "holdout.ttft", "holdout.moe"} <= set(inference.figures)


def test_an_older_serving_table_gets_neutral_defaults() -> None:
    # a file written before prefill, fixed costs and evidence existed still loads: prefill
    # shares the decode math efficiency, the cache the weights' bandwidth, no fixed costs
    kept, inside = [], False
    for line in TEXT.splitlines():
        if line.startswith("["):
            inside = line.startswith("[inference")
        if not inside:
            kept.append(line)
    old = "\n".join(kept) + (
        '\n[inference]\nbandwidth_efficiency = 0.7\ncompute_efficiency = 0.28\nsources = "x"\n'
    )
    inference = parse_calibration(old).inference
    assert inference is not None
    assert inference.prefill_efficiency == 0.28 and inference.kv_bandwidth_efficiency == 0.7
    assert inference.layer_overhead_s == 0 and inference.evidence == {}


def test_a_file_without_moe_tables_gets_neutral_moe_constants() -> None:
    cal = parse_calibration(TEXT[: TEXT.index("[moe]")])
    assert cal.moe == MoeCalibration()
    assert cal.band_for(moe=True) == cal.error_band_pct


def test_the_default_prior_lists_no_gpus() -> None:
    start = TEXT.index('[families."default"]')
    table = TEXT[start : TEXT.index("\n\n", start)]
    with_gpu = table.replace("gpus = []", 'gpus = ["H100-PCIe-80GB"]')
    with pytest.raises(CalibrationError, match=r"families\.default: the prior lists no GPUs"):
        parse_calibration(TEXT.replace(table, with_gpu))
