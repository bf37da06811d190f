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
    roofline,
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


def test_utilisation_is_family_level_times_stack_level(rcal: Calibration) -> None:
    shape = GemmShape(width=1000, tokens=1e12, hidden=1000)  # penalty 1: u = u_max / 2
    assert utilisation(rcal, "H100-SXM-80GB", Stack.MEGATRON, shape) == pytest.approx(0.6 / 2)
    assert utilisation(rcal, "H100-SXM-80GB", Stack.PYTORCH, shape) == pytest.approx(0.45 / 2)
    # a GPU of no family takes the default prior, scaled by the same stack factor
    assert utilisation(rcal, "other", Stack.DEEPSPEED, shape) == pytest.approx(0.25 / 2)


def test_a_stack_never_changes_the_ratio_between_two_families(rcal: Calibration) -> None:
    shape = GemmShape(width=2048, tokens=4096, hidden=4096)
    for stack in Stack:
        ratio = utilisation(rcal, "H100-SXM-80GB", stack, shape) / utilisation(
            rcal, "MI300X-192GB", stack, shape
        )
        assert ratio == pytest.approx(0.6 / 0.4)


def test_roofline_scales_the_memory_bound_terms_with_flops_per_byte(rcal: Calibration) -> None:
    cal = replace(rcal, training=replace(rcal.training, roofline_exponent=1.0))
    shape = GemmShape(width=1e12, tokens=1e12, hidden=1000)
    h100 = replace(H100, hbm_tbps=3.35)
    a100 = replace(A100, hbm_tbps=2.039)
    # the H100 is the reference: factor 1; the A100's 312/2.039 FLOPs per byte is about half
    assert roofline(h100, cal).memory == pytest.approx(1.0, rel=1e-3)
    ratio = (312 / 2.039) / (989 / 3.35)
    assert roofline(a100, cal).memory == pytest.approx(ratio)
    assert gemm_penalty(shape, cal, roofline(a100, cal)) == pytest.approx(ratio)
    # without a bandwidth figure the memory factor stays 1; exponent 0 switches it off
    assert roofline(replace(A100, hbm_tbps=None), cal).memory == 1.0
    assert roofline(a100, rcal).memory == 1.0


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
