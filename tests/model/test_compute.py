"""Hand-computed FLOPs and throughput."""

from __future__ import annotations

import pytest

from clusterscout.model.calibration import Calibration
from clusterscout.model.compute import (
    achieved_tflops_per_gpu,
    hardware_flops_per_token,
    matmul_params,
    model_flops_per_token,
    peak_tflops,
    utilisation,
)
from clusterscout.model.inputs import ModelShape, Precision, Recompute
from tests.model.conftest import A100, H100

L, H, V, S = 24, 2048, 51200, 2048
GPT = ModelShape(12 * L * H * H + H * V, L, H, 16, 16, V, 4 * H, tied_embeddings=True)


def test_matmul_params_drop_the_input_embedding_only_when_untied() -> None:
    assert matmul_params(GPT) == GPT.params
    untied = ModelShape(1e9, 2, 1000, 8, 8, 1000, 4000)
    assert matmul_params(untied) == pytest.approx(1e9 - 1e6)
    tiny = ModelShape(10.0, 2, 1000, 8, 8, 1000, 4000)
    assert matmul_params(tiny) == 0


def test_model_flops_equal_narayanan_formula_for_gpt() -> None:
    narayanan = 72 * L * H * H * (1 + S / (6 * H) + V / (12 * L * H))
    assert model_flops_per_token(GPT, S) == pytest.approx(narayanan)


def test_hardware_flops_add_recomputation() -> None:
    f = model_flops_per_token(GPT, S)
    assert hardware_flops_per_token(GPT, S, Recompute.NONE) == f
    assert hardware_flops_per_token(GPT, S, Recompute.FULL) == pytest.approx(f * 4 / 3)
    assert hardware_flops_per_token(GPT, S, Recompute.SELECTIVE) == pytest.approx(f + 4 * L * H * S)


def test_utilisation_curve(rcal: Calibration) -> None:
    assert utilisation(rcal.curve_for("H100-SXM-80GB"), 1000) == pytest.approx(0.3)
    assert utilisation(rcal.curve_for("other"), 1000) == pytest.approx(0.5)


def test_peak_and_achieved(rcal: Calibration) -> None:
    assert peak_tflops(H100, Precision.FP8) == 1979
    with pytest.raises(ValueError, match="fp8"):
        peak_tflops(A100, Precision.FP8)
    bf16 = achieved_tflops_per_gpu(H100, Precision.BF16, 4096, rcal)
    assert bf16 == pytest.approx(989 * 0.6 * 4096 / 5096)
    fp8 = achieved_tflops_per_gpu(H100, Precision.FP8, 4096, rcal)
    assert fp8 == pytest.approx(bf16 * 1.5)
    with pytest.raises(ValueError, match="fp8"):
        achieved_tflops_per_gpu(A100, Precision.FP8, 4096, rcal)
