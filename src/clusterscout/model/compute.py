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

    Formula: ``6 * N_mm + 12 * l * h * s`` — 2 FLOPs per weight forward and 4 backward, plus
    the attention score and value products (``2 * 2 * s * h`` per layer forward, x3 for
    training), counted without causal masking as Megatron-LM and NeMo report MFU.
    For a GPT block (``N_mm = 12*l*h^2 + h*V``) this equals Narayanan et al. 2021's
    ``72*l*h^2*(1 + s/(6h) + V/(12*l*h))``.
    LoRA/QLoRA: ``4 * N_mm + 6 * N_adapter + 12 * l * h * s``: frozen weights need no
    weight-gradient matmul (``finetune.FROZEN_WEIGHT_FLOPS``); the attention products still
    need both input gradients.
    Source: Narayanan et al. SC'21 appendix; EleutherAI "Transformer Math 101".
    """
    attention = 12.0 * model.layers * model.hidden * seq_len
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
    return 2.0 * matmul_params(model) + adapters + 4.0 * model.layers * model.hidden * seq_len


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
        return flops + 4.0 * model.layers * model.hidden * seq_len
    return flops


def attention_flops_per_token(model: ModelShape, seq_len: int, recompute: Recompute) -> float:
    """The part of ``hardware_flops_per_token`` in the attention score and value products.

    Formula: ``12 * l * h * s``, times 4/3 with full recomputation, plus ``4 * l * h * s``
    with selective recomputation (which repeats exactly these products).
    """
    attention = 12.0 * model.layers * model.hidden * seq_len
    if recompute is Recompute.FULL:
        return attention * 4.0 / 3.0
    if recompute is Recompute.SELECTIVE:
        return attention + 4.0 * model.layers * model.hidden * seq_len
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


def gemm_penalty(shape: GemmShape, calibration: Calibration) -> float:
    """Extra time of small GEMMs and non-GEMM work, relative to ideal large GEMMs.

    Formula: ``w_half / w + T_half / T + h_half / h``. Each term is the time a narrow
    dimension adds (tile quantisation and memory-bound prologues of thin GEMMs, launch gaps of
    short micro-batches, norms/activations/softmax that grow like ``h`` while GEMMs grow like
    ``h^2``); as costs in time they add.
    """
    train = calibration.training
    return (
        train.gemm_width_half / shape.width
        + train.gemm_tokens_half / shape.tokens
        + train.hidden_half / shape.hidden
    )


def utilisation(calibration: Calibration, gpu_name: str, stack: Stack, shape: GemmShape) -> float:
    """Achievable fraction of dense BF16 peak for the BF16 GEMMs one GPU runs.

    Formula: ``u = u_max(gpu, stack) / (1 + penalty)`` (``gemm_penalty``). ``u_max`` is fitted
    per GPU family and stack: the same GPU reaches different fractions of peak under
    Megatron, PyTorch FSDP and DeepSpeed kernels.
    Source: Megatron-LM 2021 weak scaling (44% -> 52% of peak as GEMMs grow); llm-foundry,
    NVIDIA DGXC and NeMo tables; scripts/calibrate.py.
    """
    u_max = calibration.curve_for(gpu_name).u_max(stack)
    return u_max / (1.0 + gemm_penalty(shape, calibration))


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

    Formula: ``bf16_peak * u_max / (a/g + (1 - a) + penalty)`` with ``a`` the linear share of
    the FLOPs and ``g`` the calibrated FP8 GEMM speed-up (1 in BF16/FP16): FP8 only shortens
    the math-bound part of the weight GEMMs; attention and the penalty's memory-bound work
    run as in BF16, so large GEMMs gain more than small ones. In BF16 this is ``peak * u``.
    Source: DGXC and NeMo BF16 vs FP8 step times (dgxc-*-fp8-*, nemo2407-*).
    """
    bf16 = peak_tflops(gpu, Precision.BF16)
    gain = 1.0
    if precision is Precision.FP8:
        peak_tflops(gpu, Precision.FP8)  # the GPU must support FP8
        gain = calibration.training.fp8_speedup
    u_max = calibration.curve_for(gpu.name).u_max(stack)
    share = shape.linear_share
    time_units = share / gain + (1.0 - share) + gemm_penalty(shape, calibration)
    return bf16 * u_max / time_units
