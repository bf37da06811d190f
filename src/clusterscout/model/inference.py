"""Serving a model: weights + KV cache per GPU, and decode speed from a bandwidth roofline.

Rough by design: decode steps only read memory or do math, whichever is slower
(``max(t_memory, t_compute)``), with two efficiencies fitted on published serving
benchmarks; tensor-parallel and pipeline communication, scheduling and speculative decoding
are not modelled. Prefill is modelled only as compute spread over the decode steps
(``prefill_tokens_per_step``), which the calibration points need; a plan's tokens/s is
decode at the full context with prefill left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterscout.domain.models import GpuSpec
from clusterscout.domain.units import bytes_to_gib
from clusterscout.model.calibration import InferenceCalibration
from clusterscout.model.compute import matmul_params
from clusterscout.model.finetune import embedding_params
from clusterscout.model.inputs import ModelShape, Precision

WEIGHT_BYTES: dict[Precision, float] = {
    Precision.BF16: 2.0,
    Precision.FP16: 2.0,
    Precision.FP8: 1.0,
    # 4-bit weights with one FP16 scale and zero point per group of 128 (AWQ/GPTQ's usual
    # group size): 4 + 32/128 bits. Lin et al., "AWQ", MLSys 2024, https://arxiv.org/abs/2306.00978
    Precision.INT4: (4.0 + 32.0 / 128.0) / 8.0,
}
"""Bytes per weight of the blocks' linear layers at each serving precision."""
KV_BYTES: dict[Precision, float] = {
    Precision.BF16: 2.0,
    Precision.FP16: 2.0,
    Precision.FP8: 1.0,
    Precision.INT4: 2.0,
}
"""Bytes per KV-cache element: FP8 serving keeps an FP8 cache (TensorRT-LLM's
``--fp8_kv_cache``, vLLM's ``kv_cache_dtype=fp8``); weight-only INT4 keeps a 16-bit cache."""
EMBEDDING_BYTES = 2.0
"""Embeddings and the output head stay in BF16 at every precision (ModelOpt and vLLM FP8
checkpoints quantise only the blocks' linear layers)."""


@dataclass(frozen=True, slots=True)
class ServingLayout:
    """One model replica: ``tp`` GPUs inside a node times ``pp`` pipeline stages."""

    tp: int
    pp: int

    @property
    def gpus(self) -> int:
        """GPUs of one replica."""
        return self.tp * self.pp


@dataclass(frozen=True, slots=True)
class ServingMemory:
    """Memory of one GPU of a replica, in GiB, and whether it fits the usable capacity."""

    weights_gib: float
    kv_cache_gib: float
    total_gib: float
    capacity_gib: float
    fits: bool


def weight_bytes(model: ModelShape, precision: Precision) -> float:
    """Bytes of all weights: the blocks at ``precision``, embeddings and head in BF16.

    Uses the shape's total parameter count, so a mixture-of-experts shape holds every expert.
    """
    embeddings = min(embedding_params(model), model.params)
    return WEIGHT_BYTES[precision] * (model.params - embeddings) + EMBEDDING_BYTES * embeddings


def kv_bytes_per_token(model: ModelShape, precision: Precision) -> float:
    """KV-cache bytes one token of context takes, over all layers.

    Formula (GQA/MHA): ``2 * l * h_kv * d_head * bytes`` (keys and values, ``d_head = h/a``).
    A shape with multi-head latent attention (``kv_lora_rank`` and ``qk_rope_head_dim``, as
    DeepSeek-V2/V3) caches one compressed latent and one rotary key per layer instead:
    ``l * (kv_lora_rank + qk_rope_head_dim) * bytes``.
    Source: Pope et al., "Efficiently Scaling Transformer Inference", 2022 §2; DeepSeek-V2
    report §2.1 (MLA), https://arxiv.org/abs/2405.04434.
    """
    size = KV_BYTES[precision]
    if model.kv_lora_rank and model.qk_rope_head_dim:
        return float(model.layers * (model.kv_lora_rank + model.qk_rope_head_dim) * size)
    head_dim = model.hidden / model.heads
    return 2.0 * model.layers * model.kv_heads * head_dim * size


def serving_memory(
    model: ModelShape,
    precision: Precision,
    context: int,
    concurrency: int,
    layout: ServingLayout,
    gpu: GpuSpec,
    usable_fraction: float,
) -> ServingMemory:
    """Weights and KV cache on one GPU of a replica, against the usable memory.

    Formula: ``W / (tp*pp) + KV / (min(tp, h_kv) * pp)`` with ``KV = kv_per_token * context *
    concurrency``: KV heads split over TP ranks until each rank holds one, then repeat.
    The reserve for activations, CUDA graphs and the allocator is the share of memory left
    out (``usable_fraction``, as vLLM's default ``gpu_memory_utilization=0.9`` leaves 10%).
    """
    weights = weight_bytes(model, precision) / layout.gpus
    kv_split = min(layout.tp, max(model.kv_heads, 1)) * layout.pp
    kv = kv_bytes_per_token(model, precision) * context * concurrency / kv_split
    total = bytes_to_gib(weights + kv)
    capacity = gpu.memory_gib * usable_fraction
    return ServingMemory(
        bytes_to_gib(weights), bytes_to_gib(kv), total, capacity, total <= capacity
    )


def peak_serving_tflops(gpu: GpuSpec, precision: Precision) -> float | None:
    """Dense TFLOP/s the GEMMs of ``precision`` run at (INT4 dequantises to BF16)."""
    if precision is Precision.FP8:
        return gpu.fp8_dense_tflops
    return gpu.bf16_dense_tflops


def decode_step_s(
    model: ModelShape,
    precision: Precision,
    gpu: GpuSpec,
    layout: ServingLayout,
    concurrency: int,
    context: float,
    calibration: InferenceCalibration,
    prefill_tokens_per_step: float = 0.0,
) -> float:
    """Time for every running sequence of one replica to produce one token.

    Formula: ``max(t_mem, t_math) + t_prefill`` with
    ``t_mem = (W/tp + KV/(min(tp,h_kv)*pp)) / (B_hbm * e_bw)`` — with ``pp`` stages the batch
    runs as ``pp`` micro-batches, so each stage reads its weights once per micro-batch and
    pipelining adds memory, not decode speed; ``t_math = (2 N_mm + 4 l h c) * n / (G *
    peak * e_math)`` for ``n`` sequences at mean context ``c``; ``t_prefill = 2 N_mm *
    p / (G * peak * e_math)`` for ``p`` prompt tokens per step (amortised prefill).
    ``e_bw`` and ``e_math`` are fitted (scripts/calibrate_inference.py).
    Source: Pope et al. 2022 §3 (decode is memory-bound at small batch); Williams et al.,
    "Roofline", CACM 2009.

    Raises:
        ValueError: when the GPU has no memory bandwidth or TFLOP/s figure.
    """
    peak = peak_serving_tflops(gpu, precision)
    if gpu.hbm_tbps is None or peak is None:
        msg = f"{gpu.name} has no published memory bandwidth or {precision.value} TFLOP/s"
        raise ValueError(msg)
    kv_split = min(layout.tp, max(model.kv_heads, 1)) * layout.pp
    kv = kv_bytes_per_token(model, precision) * context * concurrency
    bytes_read = weight_bytes(model, precision) / layout.tp + kv / kv_split
    t_mem = bytes_read / (gpu.hbm_tbps * 1e12 * calibration.bandwidth_efficiency)
    math_rate = layout.gpus * peak * 1e12 * calibration.compute_efficiency
    per_token = 2.0 * matmul_params(model) + 4.0 * model.layers * model.hidden * context
    t_math = per_token * concurrency / math_rate
    t_prefill = 2.0 * matmul_params(model) * prefill_tokens_per_step / math_rate
    return max(t_mem, t_math) + t_prefill
