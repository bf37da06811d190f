"""Hand-computed memory per GPU."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clusterscout.domain.units import GIB
from clusterscout.model.calibration import Calibration
from clusterscout.model.inputs import (
    ModelShape,
    Parallelism,
    Precision,
    Recompute,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.memory import (
    activation_bytes_per_gpu,
    activation_bytes_per_layer,
    inflight_microbatches,
    memory_per_gpu,
    model_state_bytes,
)
from tests.model.conftest import A100_40, H100


@pytest.mark.parametrize(
    ("sharding", "expected"),
    [
        (Sharding.NONE, (2e9, 2e9, 12e9)),
        (Sharding.ZERO1, (2e9, 2e9, 3e9)),
        (Sharding.ZERO2, (2e9, 0.5e9, 3e9)),
        (Sharding.FSDP, (0.5e9, 0.5e9, 3e9)),
    ],
)
def test_zero_stages(sharding: Sharding, expected: tuple[float, float, float]) -> None:
    state = model_state_bytes(1e9, sharding, 4)
    assert (state.weights, state.grads, state.optimizer) == pytest.approx(expected)


def test_activation_per_layer_korthikanti() -> None:
    sbh = 2048 * 1 * 4096
    assert activation_bytes_per_layer(2048, 1, 4096, 32, 1, 1, Recompute.NONE) == pytest.approx(
        34 * sbh
    )
    assert activation_bytes_per_layer(
        2048, 1, 4096, 32, 2, 1, Recompute.SELECTIVE
    ) == pytest.approx(34 * sbh / 2)
    assert activation_bytes_per_layer(2048, 1, 4096, 32, 1, 2, Recompute.FULL) == pytest.approx(
        2 * sbh / 2
    )


def test_inflight_microbatches() -> None:
    assert inflight_microbatches(4, 1, 8) == 4
    assert inflight_microbatches(4, 1, 2) == 2
    assert inflight_microbatches(4, 2, 8) == pytest.approx(4 * (1 + 3 / 8))
    assert inflight_microbatches(1, 1, 0) == 1


def _workload(recompute: Recompute, sharding: Sharding = Sharding.NONE) -> TrainingWorkload:
    model = ModelShape(7e9, 32, 4096, 32, 32, 32000, 16384)
    return TrainingWorkload(
        model,
        2048,
        64,
        1,
        Precision.BF16,
        Parallelism(tp=2, pp=2, dp=2, sharding=sharding),
        recompute,
    )


def test_activations_per_gpu_and_full_recompute_working_set() -> None:
    sel = activation_bytes_per_gpu(_workload(Recompute.SELECTIVE))
    assert sel == pytest.approx(34 * 2048 * 4096 / 2 * 16 * 2)
    full = activation_bytes_per_gpu(_workload(Recompute.FULL))
    assert full == pytest.approx(2 * 2048 * 4096 / 2 * 16 * 2 + 34 * 2048 * 4096 / 2)


def test_memory_per_gpu_fits(rcal: Calibration) -> None:
    mem = memory_per_gpu(_workload(Recompute.SELECTIVE, Sharding.FSDP), H100, rcal)
    psi = 7e9 / 4
    assert mem.weights_gib == pytest.approx(2 * psi / 2 / GIB)
    assert mem.total_gib == pytest.approx(
        mem.weights_gib + mem.grads_gib + mem.optimizer_gib + mem.activations_gib
    )
    assert mem.capacity_gib == pytest.approx(74.5 * 0.9)
    assert mem.fits
    w = _workload(Recompute.NONE)
    big = memory_per_gpu(replace(w, model=replace(w.model, params=2e10)), A100_40, rcal)
    assert not big.fits
