"""Hand-computed FLOPs and throughput."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clusterscout.model.calibration import Calibration
from clusterscout.model.compute import (
    GemmShape,
    achieved_tflops_per_gpu,
    attention_flops_per_token,
    gemm_penalty,
    hardware_flops_per_token,
    matmul_params,
    model_flops_per_token,
    peak_tflops,
    utilisation,
)
from clusterscout.model.inputs import ModelShape, Precision, Recompute, Stack
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


def test_attention_flops_follow_recomputation() -> None:
    a = 12 * L * H * S
    assert attention_flops_per_token(GPT, S, Recompute.NONE) == a
    assert attention_flops_per_token(GPT, S, Recompute.FULL) == pytest.approx(a * 4 / 3)
    assert attention_flops_per_token(GPT, S, Recompute.SELECTIVE) == pytest.approx(a * 4 / 3)


def test_penalty_adds_the_cost_of_each_narrow_dimension(rcal: Calibration) -> None:
    wide = GemmShape(width=1e12, tokens=1e12, hidden=1000)
    assert gemm_penalty(wide, rcal) == pytest.approx(1.0)  # hidden_half 1000 / hidden 1000
    train = replace(rcal.training, gemm_width_half=500.0, gemm_tokens_half=2000.0)
    cal = replace(rcal, training=train)
    shape = GemmShape(width=1000, tokens=4000, hidden=4000)
    assert gemm_penalty(shape, cal) == pytest.approx(0.5 + 0.5 + 0.25)


def test_utilisation_per_stack(rcal: Calibration) -> None:
    shape = GemmShape(width=1000, tokens=1e12, hidden=1000)
    assert utilisation(rcal, "H100-SXM-80GB", Stack.MEGATRON, shape) == pytest.approx(0.3)
    assert utilisation(rcal, "H100-SXM-80GB", Stack.PYTORCH, shape) == pytest.approx(0.225)
    assert utilisation(rcal, "other", Stack.DEEPSPEED, shape) == pytest.approx(0.25)


def test_peak_and_achieved(rcal: Calibration) -> None:
    assert peak_tflops(H100, Precision.FP8) == 1979
    assert peak_tflops(A100, Precision.FP16) == 312
    with pytest.raises(ValueError, match="fp8"):
        peak_tflops(A100, Precision.FP8)
    shape = GemmShape(width=4096, tokens=1e12, hidden=4096)
    bf16 = achieved_tflops_per_gpu(H100, Precision.BF16, Stack.MEGATRON, shape, rcal)
    assert bf16 == pytest.approx(989 * 0.6 * 4096 / 5096)
    # FP8 shortens only the math-bound part of the weight GEMMs: 1/1.5 of 1, plus the penalty
    fp8 = achieved_tflops_per_gpu(H100, Precision.FP8, Stack.MEGATRON, shape, rcal)
    assert fp8 == pytest.approx(989 * 0.6 / (1 / 1.5 + 1000 / 4096))
    half = replace(shape, linear_share=0.5)
    fp8_half = achieved_tflops_per_gpu(H100, Precision.FP8, Stack.MEGATRON, half, rcal)
    assert fp8_half == pytest.approx(989 * 0.6 / (0.5 / 1.5 + 0.5 + 1000 / 4096))
    with pytest.raises(ValueError, match="fp8"):
        achieved_tflops_per_gpu(A100, Precision.FP8, Stack.MEGATRON, shape, rcal)
