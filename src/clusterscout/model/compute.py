"""Transformer FLOPs and the achievable GEMM throughput of a GPU."""

from __future__ import annotations

from clusterscout.domain.models import GpuSpec
from clusterscout.model.calibration import Calibration, UtilisationCurve
from clusterscout.model.inputs import ModelShape, Precision, Recompute


def matmul_params(model: ModelShape) -> float:
    """Parameters that take part in matrix multiplies.

    Formula: ``params - hidden * vocab`` for untied embeddings (the input embedding is a
    lookup, not a GEMM), ``params`` when tied (the shared matrix is the output projection).
    Clamped at zero for inconsistent shapes.
    """
    lookup = 0.0 if model.tied_embeddings else float(model.hidden * model.vocab)
    return max(model.params - lookup, 0.0)


def model_flops_per_token(model: ModelShape, seq_len: int) -> float:
    """Model FLOPs of one training token (forward + backward, no recomputation).

    Formula: ``6 * N_mm + 12 * l * h * s`` — 2 FLOPs per weight forward and 4 backward, plus
    the attention score and value products (``2 * 2 * s * h`` per layer forward, x3 for
    training), counted without causal masking as Megatron-LM and NeMo report MFU.
    For a GPT block (``N_mm = 12*l*h^2 + h*V``) this equals Narayanan et al. 2021's
    ``72*l*h^2*(1 + s/(6h) + V/(12*l*h))``.
    Source: Narayanan et al. SC'21 appendix; EleutherAI "Transformer Math 101".
    """
    attention = 12.0 * model.layers * model.hidden * seq_len
    return 6.0 * matmul_params(model) + attention


def hardware_flops_per_token(model: ModelShape, seq_len: int, recompute: Recompute) -> float:
    """FLOPs the GPUs actually execute per token, including recomputation.

    Formula: full recompute repeats the forward pass, ``F * 4/3``; selective recompute
    repeats the attention score/value products, ``F + 4 * l * h * s``; none adds nothing.
    Source: Korthikanti et al. 2022 §5 (selective recomputation); Narayanan et al. 2021.
    """
    flops = model_flops_per_token(model, seq_len)
    if recompute is Recompute.FULL:
        return flops * 4.0 / 3.0
    if recompute is Recompute.SELECTIVE:
        return flops + 4.0 * model.layers * model.hidden * seq_len
    return flops


def utilisation(curve: UtilisationCurve, hidden: int) -> float:
    """Achievable fraction of dense BF16 peak for GEMMs of width ``hidden``.

    Formula: ``u(h) = u_max * h / (h + h_half)``: larger GEMMs use the tensor cores better
    (Megatron-LM 2021 weak scaling rises from 44% to 52% of peak as h grows). ``u_max`` and
    ``h_half`` are fitted per GPU model by scripts/calibrate.py.
    """
    return curve.u_max * hidden / (hidden + curve.hidden_half)


def peak_tflops(gpu: GpuSpec, precision: Precision) -> float:
    """Dense peak TFLOP/s of the GPU in ``precision`` (for MFU).

    Raises:
        ValueError: when the catalog has no such figure for the GPU.
    """
    value = gpu.fp8_dense_tflops if precision is Precision.FP8 else gpu.bf16_dense_tflops
    if value is None:
        msg = f"{gpu.name} has no published dense {precision.value} TFLOP/s"
        raise ValueError(msg)
    return value


def achieved_tflops_per_gpu(
    gpu: GpuSpec, precision: Precision, hidden: int, calibration: Calibration
) -> float:
    """Sustained TFLOP/s of one GPU on the GEMMs of a model of width ``hidden``.

    Formula: ``bf16_peak * u(h)``, times the calibrated FP8 speed-up for FP8 (only the GEMMs
    speed up, so the gain is well below the 2x peak ratio).
    Source: DGXC Llama 3.1 70B BF16 vs FP8 step times (dgxc-llama31-70b-*).
    """
    bf16 = peak_tflops(gpu, Precision.BF16)
    if precision is Precision.FP8:
        peak_tflops(gpu, Precision.FP8)  # the GPU must support FP8
    u = utilisation(calibration.curve_for(gpu.name), hidden)
    speedup = calibration.training.fp8_speedup if precision is Precision.FP8 else 1.0
    return bf16 * u * speedup
