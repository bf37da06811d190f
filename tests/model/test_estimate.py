"""estimate() answers every scenario kind with exactly the DESIGN output keys."""

from __future__ import annotations

import pytest

from clusterscout.domain.errors import InputError
from clusterscout.domain.gpus import GpuIndex
from clusterscout.model.calibration import Calibration
from clusterscout.model.estimate import estimate
from clusterscout.model.scenario import parse_scenario
from tests.model.conftest import GPUS, NO_FIGURES
from tests.model.examples import output
from tests.model.test_scenario import COLLECTIVE, TRAINING

TRAINING_KEYS = {
    "step_time_s",
    "tokens_per_s_per_gpu",
    "model_tflops_per_gpu",
    "mfu",
    "scaling_efficiency",
    "memory_gib_per_gpu",
    "fits",
    "breakdown_s",
    "calibrated",
    "gpu_family",
}


def test_collective_keys(cal: Calibration) -> None:
    s = parse_scenario(COLLECTIVE)
    out = output(estimate(s, GpuIndex.of(GPUS).require(s.cluster.gpu, "cluster.gpu"), cal))
    assert set(out) == {"time_s", "algbw_gbs", "busbw_gbs"}
    assert 300 < out["busbw_gbs"] < 400


def test_training_keys(cal: Calibration) -> None:
    s = parse_scenario(TRAINING)
    out = output(estimate(s, GpuIndex.of(GPUS).require(s.cluster.gpu, "cluster.gpu"), cal))
    assert set(out) == TRAINING_KEYS
    assert set(out["breakdown_s"]) >= {"compute", "bubble", "tp_comm", "dp_comm_exposed", "pp_comm"}
    assert 0.3 < out["mfu"] < 0.7
    assert isinstance(out["fits"], bool)


def test_training_estimate_says_when_its_gpu_family_rests_on_a_prior(cal: Calibration) -> None:
    for gpu, family, calibrated in (("H100", "H100", True), ("MI300X", "MI300X", False)):
        raw = {**TRAINING, "cluster": {**TRAINING["cluster"], "gpu": gpu}}
        s = parse_scenario(raw)
        out = output(estimate(s, GpuIndex.of(GPUS).require(gpu, "cluster.gpu"), cal))
        assert (out["gpu_family"], out["calibrated"]) == (family, calibrated)


def test_batch_and_hpc_keys(cal: Calibration) -> None:
    b = parse_scenario(
        {
            "cluster": {"gpu": "H100", "nodes": 2, "fabric": "ethernet", "per_node_gbps": 100},
            "workload": {"kind": "batch", "gpu_hours": 100},
        }
    )
    assert set(output(estimate(b, GPUS[0], cal))) == {"time_s", "scaling_efficiency"}
    h = parse_scenario(
        {
            "cluster": {"gpu": "H100", "nodes": 4, "fabric": "roce", "per_node_gbps": 1600},
            "workload": {
                "kind": "hpc",
                "step_time_one_node_s": 1.0,
                "comm_share": 0.3,
                "message_bytes": 1e6,
                "steps": 5,
            },
        }
    )
    out = output(estimate(h, GPUS[0], cal))
    assert set(out) == {"step_time_s", "comm_time_s", "time_s", "scaling_efficiency"}
    assert out["scaling_efficiency"] < 1


def test_missing_gpu_figures_name_the_field(cal: Calibration) -> None:
    fp8 = parse_scenario({**TRAINING, "workload": {**TRAINING["workload"], "precision": "fp8"}})
    with pytest.raises(InputError) as info:
        estimate(fp8, GpuIndex.of(GPUS).require("A100", "cluster.gpu"), cal)
    assert info.value.field == "workload.precision"
    with pytest.raises(InputError) as info:
        estimate(parse_scenario(TRAINING), NO_FIGURES, cal)
    assert info.value.field == "cluster.gpu"
