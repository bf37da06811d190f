"""Transformer FLOPs and the achievable GEMM throughput of a GPU."""

from __future__ import annotations

from dataclasses import dataclass

from clusterscout.domain.models import GpuSpec
from clusterscout.model.calibration import Calibration
from clusterscout.model.finetune import (
    FROZEN_WEIGHT_FLOPS,
    TRAINED_WEIGHT_FLOPS,
    adapter_params,
)
from clusterscout.model.inputs import (
    DEFAULT_LORA_RANK,
    JobKind,
    ModelShape,
    Precision,
    Recompute,
    Stack,
)


def matmul_params(model: ModelShape) -> float:
    """Parameters that take part in one token's matrix multiplies.

    Formula: ``active - hidden * vocab`` for untied embeddings (the input embedding is a
    lookup, not a GEMM), ``active`` when tied (the shared matrix is the output projection);
    ``active`` is ``params`` for a dense model and the routed-to experts' share for MoE
    (``ModelShape.active_params``). Clamped at zero for inconsistent shapes.
    """
    lookup = 0.0 if model.tied_embeddings else float(model.hidden * model.vocab)
    return max(model.active_params - lookup, 0.0)


def expert_flops_per_token(model: ModelShape) -> float:
    """Training FLOPs of one token in its routed experts (a part of ``model_flops_per_token``).

    Formula: ``6 * L_moe * k * 3 * h * f_e``; 0 for a dense model. These run as grouped GEMMs
    over a few tokens per expert, slower than dense GEMMs of the same size (``moe_efficiency``).
    """
    return 6.0 * model.moe_layers * model.top_k * model.params_per_expert


def model_flops_per_token(
    model: ModelShape,
    seq_len: int,
    job: JobKind = JobKind.PRETRAIN,
    lora_rank: int = DEFAULT_LORA_RANK,
) -> float:
    """Model FLOPs of one training token (forward + backward, no recomputation).

    Formula: ``6 * N_mm + 12 * l * w * s`` — 2 FLOPs per weight forward and 4 backward, plus
    the attention score and value products (``2 * 2 * s * w`` per layer forward, x3 for
    training, ``w = heads * head_dim``, the model width ``h`` unless the shape sets the head
    width apart), counted without causal masking as Megatron-LM and NeMo report MFU.
    For a GPT block (``N_mm = 12*l*h^2 + h*V``) this equals Narayanan et al. 2021's
    ``72*l*h^2*(1 + s/(6h) + V/(12*l*h))``.
    LoRA/QLoRA: ``4 * N_mm + 6 * N_adapter + 12 * l * h * s``: frozen weights need no
    weight-gradient matmul (``finetune.FROZEN_WEIGHT_FLOPS``); the attention products still
    need both input gradients.
    Source: Narayanan et al. SC'21 appendix; EleutherAI "Transformer Math 101".
    """
    attention = 12.0 * model.layers * model.attention_width * seq_len
    if job.adapters:
        adapters = TRAINED_WEIGHT_FLOPS * adapter_params(model, lora_rank)
        return FROZEN_WEIGHT_FLOPS * matmul_params(model) + adapters + attention
    return TRAINED_WEIGHT_FLOPS * matmul_params(model) + attention


def forward_flops_per_token(
    model: ModelShape,
    seq_len: int,
    job: JobKind = JobKind.PRETRAIN,
    lora_rank: int = DEFAULT_LORA_RANK,
) -> float:
    """FLOPs of one token's forward pass: ``2 * N_mm (+ 2 * N_adapter) + 4 * l * h * s``."""
    adapters = 2.0 * adapter_params(model, lora_rank) if job.adapters else 0.0
    return (
        2.0 * matmul_params(model) + adapters + 4.0 * model.layers * model.attention_width * seq_len
    )


def hardware_flops_per_token(
    model: ModelShape,
    seq_len: int,
    recompute: Recompute,
    job: JobKind = JobKind.PRETRAIN,
    lora_rank: int = DEFAULT_LORA_RANK,
) -> float:
    """FLOPs the GPUs actually execute per token, including recomputation.

    Formula: full recompute repeats the forward pass, ``F + F_fwd`` (``F * 4/3`` when every
    weight is trained); selective recompute repeats the attention score/value products,
    ``F + 4 * l * h * s``; none adds nothing.
    Source: Korthikanti et al. 2022 §5 (selective recomputation); Narayanan et al. 2021.
    """
    flops = model_flops_per_token(model, seq_len, job, lora_rank)
    if recompute is Recompute.FULL:
        return flops + forward_flops_per_token(model, seq_len, job, lora_rank)
    if recompute is Recompute.SELECTIVE:
        return flops + 4.0 * model.layers * model.attention_width * seq_len
    return flops


def attention_flops_per_token(model: ModelShape, seq_len: int, recompute: Recompute) -> float:
    """The part of ``hardware_flops_per_token`` in the attention score and value products.

    Formula: ``12 * l * h * s``, times 4/3 with full recomputation, plus ``4 * l * h * s``
    with selective recomputation (which repeats exactly these products).
    """
    attention = 12.0 * model.layers * model.attention_width * seq_len
    if recompute is Recompute.FULL:
        return attention * 4.0 / 3.0
    if recompute is Recompute.SELECTIVE:
        return attention + 4.0 * model.layers * model.attention_width * seq_len
    return attention


@dataclass(frozen=True, slots=True)
class GemmShape:
    """What sets the efficiency of one GPU's matrix multiplies in a training step.

    Attributes:
        width: per-GPU GEMM width, ``hidden / tp``.
        tokens: tokens of one micro-batch on one GPU, ``micro_batch * seq_len / cp``.
        hidden: the model width (the non-GEMM work per token grows like it).
        linear_share: share of the step's FLOPs in the weight GEMMs (the rest is attention,
            which FP8 does not speed up).
    """

    width: float
    tokens: float
    hidden: float
    linear_share: float = 1.0


REFERENCE_TFLOPS = 989.0
"""Dense BF16 peak of the reference GPU (H100 SXM) at which the penalty constants are stated."""
REFERENCE_FLOPS_PER_BYTE = 989.0 / 3.35
"""Its dense BF16 FLOPs per byte of HBM bandwidth (989 TFLOP/s over 3.35 TB/s, datasheet)."""


@dataclass(frozen=True, slots=True)
class Roofline:
    """How much a GPU magnifies the non-GEMM work against the reference GPU (H100 SXM).

    Attributes:
        memory: factor on memory-bound work (``(peak/bandwidth / reference)^x``).
        overhead: factor on fixed per-micro-batch overheads (``(peak / reference)^x``).
    """

    memory: float = 1.0
    overhead: float = 1.0


def roofline(gpu: GpuSpec, calibration: Calibration) -> Roofline:
    """The penalty factors of ``gpu`` (``TrainingCalibration.roofline_exponent``).

    Formula: memory-bound work (norms, activations, residuals, narrow GEMMs' operand traffic)
    costs bytes, GEMMs cost FLOPs, so its time relative to the GEMMs grows with the GPU's
    FLOPs per byte: ``((F/B) / (F/B)_ref)^x``; a fixed launch or host gap per micro-batch
    grows with the peak: ``(F / F_ref)^x``. A GPU without a bandwidth figure keeps factor 1.
    Source: Williams et al. 2009 (the roofline model); datasheet peaks and bandwidths in
    data/gpus.toml.
    """
    x = calibration.training.roofline_exponent
    peak = gpu.bf16_dense_tflops
    if not x or peak is None:
        return Roofline()
    overhead = (peak / REFERENCE_TFLOPS) ** x
    if not gpu.hbm_tbps:
        return Roofline(overhead=overhead)
    memory = (peak / gpu.hbm_tbps / REFERENCE_FLOPS_PER_BYTE) ** x
    return Roofline(memory=memory, overhead=overhead)


def gemm_penalty(
    shape: GemmShape, calibration: Calibration, factors: Roofline | None = None
) -> float:
    """Extra time of small GEMMs and non-GEMM work, relative to ideal large GEMMs.

    Formula: ``r_m (w_half / w + h_half / h) + r_o T_half / T``. Each term is the time a
    narrow dimension adds (tile quantisation and memory-bound prologues of thin GEMMs, launch
    gaps of short micro-batches, norms/activations/residuals that grow like ``h`` while GEMMs
    grow like ``h^2``); as costs in time they add. ``r_m`` and ``r_o`` are the GPU's roofline
    factors (``roofline``; 1 on the reference GPU).
    """
    train = calibration.training
    r = factors or Roofline()
    return (
        r.memory * (train.gemm_width_half / shape.width + train.hidden_half / shape.hidden)
        + r.overhead * train.gemm_tokens_half / shape.tokens
    )


def utilisation(
    calibration: Calibration,
    gpu_name: str,
    stack: Stack,
    shape: GemmShape,
    factors: Roofline | None = None,
) -> float:
    """Achievable fraction of dense BF16 peak for the BF16 GEMMs one GPU runs.

    Formula: ``u = u_max(gpu, stack) / (1 + penalty)`` (``gemm_penalty``), with
    ``u_max = level(family) * level(stack)`` (``Calibration.u_max``): the family sets how
    close its GEMMs come to peak, the stack scales that by the same factor on every family.
    Source: Megatron-LM 2021 weak scaling (44% -> 52% of peak as GEMMs grow); llm-foundry,
    NVIDIA DGXC and NeMo tables; scripts/calibrate.py.
    """
    return calibration.u_max(gpu_name, stack) / (1.0 + gemm_penalty(shape, calibration, factors))


def peak_tflops(gpu: GpuSpec, precision: Precision) -> float:
    """Dense peak TFLOP/s of the GPU in ``precision`` (for MFU).

    Raises:
        ValueError: when the catalog has no such figure for the GPU.
    """
    # FP16 runs at the BF16 tensor-core rate on every GPU in the catalog.
    value = gpu.fp8_dense_tflops if precision is Precision.FP8 else gpu.bf16_dense_tflops
    if value is None:
        msg = f"{gpu.name} has no published dense {precision.value} TFLOP/s"
        raise ValueError(msg)
    return value


def achieved_tflops_per_gpu(
    gpu: GpuSpec,
    precision: Precision,
    stack: Stack,
    shape: GemmShape,
    calibration: Calibration,
) -> float:
    """Sustained TFLOP/s of one GPU on a step's work.

    Formula: ``bf16_peak * u_max / (a/g + (1 - a)/e_att + penalty)`` with ``a`` the linear
    share of the FLOPs, ``g`` the calibrated FP8 GEMM speed-up (1 in BF16/FP16) and ``e_att``
    the attention products' rate relative to the GEMMs (``Calibration.attention_efficiency``
    of the GPU's family): FP8 only
    shortens the math-bound part of the weight GEMMs; attention (fused kernels, BF16) and the
    penalty's memory-bound work run as in BF16, so large GEMMs gain more than small ones.
    Source: DGXC and NeMo BF16 vs FP8 step times (dgxc-*-fp8-*, nemo2407-*); Dao 2023 and
    Shah et al. 2024 (FlashAttention-2/3 reach a lower share of peak than dense GEMMs).
    """
    bf16 = peak_tflops(gpu, Precision.BF16)
    gain = 1.0
    if precision is Precision.FP8:
        peak_tflops(gpu, Precision.FP8)  # the GPU must support FP8
        gain = calibration.training.fp8_speedup
    u_max = calibration.u_max(gpu.name, stack)
    share = shape.linear_share
    attention = (1.0 - share) / calibration.attention_efficiency(gpu.name)
    penalty = gemm_penalty(shape, calibration, roofline(gpu, calibration))
    return bf16 * u_max / (share / gain + attention + penalty)
