"""Serving a model: weights + KV cache per GPU, decode steps and time to first token.

One decode step of a replica reads the weights its tokens touch and the KV cache of every
running sequence, or does their math, whichever is slower (a roofline); on top come costs that
do not shrink with the batch: a fixed time per layer (kernel launches, norms, sampling) and,
with tensor parallelism, two all-reduces per layer of the step's activations, which are
latency-bound for small batches. Weight-only formats (INT4, and FP8 on GPUs without FP8 math)
dequantise on the fly and reach a fitted share of the bandwidth. Mixture-of-experts models
read only the experts the step's tokens are routed to. Prefill (time to first token) is the
prompt's math at a fitted efficiency, its all-reduces and the same fixed costs. Constants are
fitted on published serving benchmarks (scripts/calibrate_inference.py); speculative decoding,
scheduling and queueing are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterscout.domain.models import GpuSpec
from clusterscout.domain.units import bytes_to_gib
from clusterscout.model.calibration import Calibration, InferenceCalibration
from clusterscout.model.collectives import busbw_factor, intra_node_busbw_gbs
from clusterscout.model.compute import matmul_params
from clusterscout.model.finetune import embedding_params
from clusterscout.model.inputs import Algorithm, CollectiveOp, ModelShape, Precision

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
ACTIVATION_BYTES = 2.0
"""Bytes per element of the activations the tensor-parallel all-reduces carry (16-bit)."""
ALLREDUCES_PER_LAYER = 2
"""Megatron-style tensor parallelism sums the attention and the MLP outputs once each per
layer (Shoeybi et al., "Megatron-LM", 2019, §3)."""


@dataclass(frozen=True, slots=True)
class ServingLayout:
    """One model replica: ``tp`` GPUs inside a node times ``pp`` pipeline stages.

    The routed experts of a mixture-of-experts model divide over the ``tp`` GPUs of a stage
    (sharded, or whole experts per GPU with expert parallelism inside the TP group: the bytes
    per GPU are the same). Wide expert parallelism with data-parallel attention is not a
    serving layout here.
    """

    tp: int
    pp: int

    @property
    def gpus(self) -> int:
        """GPUs of one replica."""
        return self.tp * self.pp


@dataclass(frozen=True, slots=True)
class ServingHardware:
    """The GPU of a replica and the links its tensor-parallel all-reduces use.

    Attributes:
        gpu: the accelerator.
        tp_busbw_gbs: bus bandwidth of an all-reduce inside the node (NVLink, or PCIe when
            the GPU has no scale-up link).
        allreduce_latency_s: time of one small all-reduce inside the node.
        hop_latency_s: one pipeline-stage hand-over between nodes (the fabric's latency).
    """

    gpu: GpuSpec
    tp_busbw_gbs: float
    allreduce_latency_s: float = 0.0
    hop_latency_s: float = 0.0


@dataclass(frozen=True, slots=True)
class ServingMemory:
    """Memory of one GPU of a replica, in GiB, and whether it fits the usable capacity."""

    weights_gib: float
    kv_cache_gib: float
    total_gib: float
    capacity_gib: float
    fits: bool


@dataclass(frozen=True, slots=True)
class StepParts:
    """One decode step of a replica, split into its terms (seconds)."""

    memory_s: float
    math_s: float
    allreduce_s: float
    fixed_s: float
    prefill_s: float

    @property
    def total_s(self) -> float:
        """The step: the slower of memory and math, plus communication, fixed and prefill."""
        return max(self.memory_s, self.math_s) + self.allreduce_s + self.fixed_s + self.prefill_s


def hardware_for(gpu: GpuSpec, calibration: Calibration) -> ServingHardware:
    """The serving view of ``gpu``: its all-reduce bus bandwidth and latency inside a node.

    Uses the same intra-node figures as training collectives, fitted on nccl-tests (NVLink
    ring or NVLS bandwidth, or the PCIe bus bandwidth for GPUs without a scale-up link, and
    the small-message latency); stage hand-overs across nodes take the lowest fabric latency
    (InfiniBand class, the usual fabric of multi-node serving).
    """
    busbw = intra_node_busbw_gbs(gpu, CollectiveOp.ALL_REDUCE, Algorithm.AUTO, calibration)
    fabrics = calibration.fabrics
    hop = min((f.latency_s for f in fabrics.values()), default=0.0)
    return ServingHardware(gpu, busbw, calibration.intra_node.latency_s, hop)


def weight_bytes(model: ModelShape, precision: Precision) -> float:
    """Bytes of all weights: the blocks at ``precision``, embeddings and head in BF16.

    Uses the shape's total parameter count, so a mixture-of-experts shape holds every expert.
    """
    embeddings = min(embedding_params(model), model.params)
    return WEIGHT_BYTES[precision] * (model.params - embeddings) + EMBEDDING_BYTES * embeddings


def kv_bytes_per_token(
    model: ModelShape, precision: Precision, head_dim: float | None = None
) -> float:
    """KV-cache bytes one token of context takes, over all layers.

    Formula (GQA/MHA): ``2 * l * h_kv * d_head * bytes`` (keys and values, ``d_head = h/a``
    unless the model states its own ``head_dim``).
    A shape with multi-head latent attention (``kv_lora_rank`` and ``qk_rope_head_dim``, as
    DeepSeek-V2/V3) caches one compressed latent and one rotary key per layer instead:
    ``l * (kv_lora_rank + qk_rope_head_dim) * bytes``.
    Source: Pope et al., "Efficiently Scaling Transformer Inference", 2022 §2; DeepSeek-V2
    report §2.1 (MLA), https://arxiv.org/abs/2405.04434.
    """
    size = KV_BYTES[precision]
    if is_latent(model):
        return float(model.layers * (model.kv_lora_rank + model.qk_rope_head_dim) * size)
    d_head = head_dim if head_dim else model.hidden / model.heads
    return 2.0 * model.layers * model.kv_heads * d_head * size


def is_latent(model: ModelShape) -> bool:
    """True for multi-head latent attention (one latent per token, shared by all heads)."""
    return bool(model.kv_lora_rank and model.qk_rope_head_dim)


def kv_split(model: ModelShape, layout: ServingLayout) -> int:
    """Ways the KV cache of a replica's sequences divides over its GPUs.

    GQA heads split over TP ranks until each rank holds one, then repeat; a latent cache is
    one vector per token that every TP rank keeps whole; stages hold their own layers.
    """
    heads = 1 if is_latent(model) else min(layout.tp, max(model.kv_heads, 1))
    return heads * layout.pp


def _per_gpu_weights(model: ModelShape, precision: Precision, layout: ServingLayout) -> float:
    """Bytes of weights one GPU holds: every weight over TP and PP (routed experts too)."""
    return weight_bytes(model, precision) / layout.gpus


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

    Formula: ``W / (tp*pp) + KV / kv_split`` with ``KV = kv_per_token * context *
    concurrency`` (``kv_split``).
    The reserve for activations, CUDA graphs and the allocator is the share of memory left
    out (``usable_fraction``, as vLLM's default ``gpu_memory_utilization=0.9`` leaves 10%).
    """
    weights = _per_gpu_weights(model, precision, layout)
    kv = kv_bytes_per_token(model, precision) * context * concurrency / kv_split(model, layout)
    total = bytes_to_gib(weights + kv)
    capacity = gpu.memory_gib * usable_fraction
    return ServingMemory(
        bytes_to_gib(weights), bytes_to_gib(kv), total, capacity, total <= capacity
    )


def peak_serving_tflops(gpu: GpuSpec, precision: Precision) -> float | None:
    """Dense TFLOP/s the GEMMs of ``precision`` run at.

    INT4 is weight-only: it dequantises to 16 bits and runs BF16 GEMMs. FP8 runs on FP8 units
    where the GPU has them, else as weight-only FP8 on BF16 units (vLLM's FP8 Marlin path).
    """
    if precision is Precision.FP8 and gpu.fp8_dense_tflops is not None:
        return gpu.fp8_dense_tflops
    return gpu.bf16_dense_tflops


def weight_only(gpu: GpuSpec, precision: Precision) -> bool:
    """True when the weights are stored narrower than the math runs (dequantised on the fly)."""
    return precision is Precision.INT4 or (
        precision is Precision.FP8 and gpu.fp8_dense_tflops is None
    )


def touched_experts(model: ModelShape, tokens: float) -> float:
    """Expected distinct routed experts one MoE layer reads for ``tokens`` tokens.

    Formula: ``E * (1 - (1 - k/E)^T)``: each token picks ``k`` of ``E`` experts, assumed
    uniform and independent (balanced routing, as auxiliary-loss or bias balancing aims at).
    """
    if not model.is_moe or tokens <= 0:
        return 0.0
    share = min(model.top_k, model.experts) / model.experts
    return float(model.experts * (1.0 - (1.0 - share) ** tokens))


def step_weight_bytes(
    model: ModelShape, precision: Precision, layout: ServingLayout, tokens: float
) -> float:
    """Weight bytes one GPU reads in a forward pass over ``tokens`` tokens of the replica.

    Dense models read all their weights once per pass. A mixture-of-experts model reads its
    non-expert weights and, per MoE layer, only the experts the tokens are routed to, all
    divided over the TP group. With ``pp`` stages the pass runs as ``pp`` micro-batches and
    each stage reads its weights once per micro-batch, so a GPU reads ``1/tp`` of the weights
    per step, as without stages (for MoE, the experts each micro-batch reaches).
    """
    total = weight_bytes(model, precision)
    if not model.is_moe:
        return total / layout.tp
    size = WEIGHT_BYTES[precision]
    dense = total - size * model.routed_expert_params
    per_micro = tokens / layout.pp
    touched = touched_experts(model, per_micro) * model.moe_layers * model.params_per_expert
    return (dense + size * touched) / layout.tp


def _math_rate(
    hw: ServingHardware,
    precision: Precision,
    layout: ServingLayout,
    calibration: InferenceCalibration,
) -> float:
    """FLOP/s of a replica's GEMMs at peak; FP8 units reach ``fp8_math`` of theirs."""
    peak = peak_serving_tflops(hw.gpu, precision)
    if peak is None:
        msg = f"{hw.gpu.name} has no published {precision.value} TFLOP/s"
        raise ValueError(msg)
    fp8 = precision is Precision.FP8 and hw.gpu.fp8_dense_tflops is not None
    return layout.gpus * peak * 1e12 * (calibration.fp8_math if fp8 else 1.0)


def _bandwidth(hw: ServingHardware) -> float:
    if hw.gpu.hbm_tbps is None:
        msg = f"{hw.gpu.name} has no published memory bandwidth"
        raise ValueError(msg)
    return hw.gpu.hbm_tbps * 1e12


def fixed_step_s(model: ModelShape, calibration: InferenceCalibration) -> float:
    """Fixed time of one decode step: ``l * c_layer + L_moe * c_moe`` (launches, norms,
    routing), which no batch size amortises."""
    return (
        model.layers * calibration.layer_overhead_s
        + model.moe_layers * calibration.moe_layer_overhead_s
    )


def _allreduce_parts(
    model: ModelShape, layout: ServingLayout, hw: ServingHardware, tokens: float
) -> tuple[float, float]:
    """All-reduces per pass and the bandwidth seconds of one, for ``tokens`` tokens."""
    if layout.tp <= 1:
        return 0.0, 0.0
    message = tokens * model.hidden * ACTIVATION_BYTES
    factor = busbw_factor(CollectiveOp.ALL_REDUCE, layout.tp)
    return ALLREDUCES_PER_LAYER * model.layers, factor * message / (hw.tp_busbw_gbs * 1e9)


def allreduce_s(
    model: ModelShape,
    layout: ServingLayout,
    hw: ServingHardware,
    tokens: float,
) -> float:
    """Tensor-parallel all-reduces of one forward pass over ``tokens`` tokens.

    Formula: ``2 l * (a + f(tp) * T h * 2 bytes / B_bus)``: two all-reduces per
    layer, each a small-message latency ``a`` (the intra-node latency fitted on nccl-tests:
    decode messages are kilobytes, far below where the bandwidth term matters) plus the
    activations of the pass's ``T`` tokens over the node's all-reduce bus bandwidth.
    ``f = 2(tp-1)/tp`` (nccl-tests' bus factor).
    With ``pp`` stages the hand-overs between nodes add ``(pp-1)`` fabric latencies.
    Source: Pope et al. 2022 §3.1 (TP communication per layer); nccl-tests doc/PERFORMANCE.md.
    """
    count, seconds = _allreduce_parts(model, layout, hw, tokens)
    hops = (layout.pp - 1) * hw.hop_latency_s
    return count * (hw.allreduce_latency_s + seconds) + hops


def _prefill_work_s(
    model: ModelShape,
    precision: Precision,
    hw: ServingHardware,
    layout: ServingLayout,
    sequences: float,
    prompt: float,
    calibration: InferenceCalibration,
) -> tuple[float, float]:
    """Math seconds of prefilling ``sequences`` prompts, and the bandwidth seconds of their
    all-reduces (latencies and fixed costs apart)."""
    flops = sequences * (
        2.0 * matmul_params(model) * prompt + 2.0 * model.layers * model.hidden * prompt**2
    )
    t_math = flops / (
        _math_rate(hw, precision, layout, calibration) * calibration.prefill_efficiency
    )
    count, seconds = _allreduce_parts(model, layout, hw, sequences * prompt)
    return t_math, count * seconds


def prefill_s(
    model: ModelShape,
    precision: Precision,
    hw: ServingHardware,
    layout: ServingLayout,
    sequences: float,
    prompt: float,
    calibration: InferenceCalibration,
) -> float:
    """Time to prefill ``sequences`` prompts of ``prompt`` tokens together (compute-bound).

    Formula: ``max(t_math, t_weights) + t_allreduce + l * c_prefill`` with
    ``t_math = n (2 N_mm p + 2 l h p^2) / (G * peak * e_prefill)``: the GEMMs of every prompt
    token and causal attention (``QK^T`` and ``AV``, half the square); the weights are read
    once. ``e_prefill`` and the per-layer ``c_prefill`` are fitted on time-to-first-token
    measurements.
    Source: Kaplan et al. 2020 (2N FLOPs per token forward); Pope et al. 2022 §3.
    """
    if sequences <= 0 or prompt <= 0:
        return 0.0
    tokens = sequences * prompt
    t_math, _ = _prefill_work_s(model, precision, hw, layout, sequences, prompt, calibration)
    t_weights = step_weight_bytes(model, precision, layout, tokens) / (
        _bandwidth(hw) * calibration.bandwidth_efficiency
    )
    fixed = model.layers * calibration.prefill_layer_overhead_s
    return max(t_math, t_weights) + allreduce_s(model, layout, hw, tokens) + fixed


def decode_step(
    model: ModelShape,
    precision: Precision,
    hw: ServingHardware,
    layout: ServingLayout,
    concurrency: int,
    context: float,
    calibration: InferenceCalibration,
    prefill: tuple[float, float] = (0.0, 0.0),
    head_dim: float | None = None,
    legacy_attention: bool = False,
) -> StepParts:
    """Time for every running sequence of one replica to produce one token, by term.

    Formula: ``max(t_mem, t_math) + t_allreduce + t_fixed + t_prefill`` with
    ``t_mem = W_step / (B * e_bw * w) + KV / (kv_split * B * e_kv)``: the weights the step
    reads (``step_weight_bytes``; ``w`` is the fitted dequantisation share for weight-only
    formats, else 1) and each GPU's share of the cache at mean context ``c``, which attention
    kernels read at their own fitted efficiency ``e_kv``;
    ``t_math = (2 N_mm + 4 l h c) * n / (G * peak * e_math)`` for ``n`` sequences; the
    all-reduces of ``allreduce_s``; the fixed costs of ``fixed_step_s``; and ``t_prefill``,
    the math and all-reduce traffic of ``prefill = (sequences, prompt)`` prompts per step, the
    share of new requests' prefill each decode step carries (their latencies ride on the
    step's own).
    ``legacy_attention`` marks measurements taken with attention kernels that were not yet
    grouped-query aware: each query head of a group re-reads a share of the cache
    (``legacy_gqa_reads``); plans never set it.
    Source: Pope et al. 2022 §3 (decode is memory-bound at small batch); Williams et al.,
    "Roofline", CACM 2009.

    Raises:
        ValueError: when the GPU has no memory bandwidth or TFLOP/s figure.
    """
    bandwidth = _bandwidth(hw)
    rate = _math_rate(hw, precision, layout, calibration)
    e_bw = calibration.bandwidth_efficiency
    dequant = calibration.weight_only_bandwidth if weight_only(hw.gpu, precision) else 1.0
    weights = step_weight_bytes(model, precision, layout, concurrency)
    kv = kv_bytes_per_token(model, precision, head_dim) * context * concurrency
    if legacy_attention and not is_latent(model):
        group = model.heads / max(model.kv_heads, 1)
        kv *= 1.0 + calibration.legacy_gqa_reads * (group - 1.0)
    t_mem = weights / (bandwidth * e_bw * dequant) + kv / kv_split(model, layout) / (
        bandwidth * calibration.kv_bandwidth_efficiency
    )
    per_token = 2.0 * matmul_params(model) + 4.0 * model.layers * model.hidden * context
    t_math = per_token * concurrency / (rate * calibration.compute_efficiency)
    sequences, prompt = prefill
    t_prefill = 0.0
    if sequences > 0 and prompt > 0:
        t_prefill = sum(
            _prefill_work_s(model, precision, hw, layout, sequences, prompt, calibration)
        )
    return StepParts(
        memory_s=t_mem,
        math_s=t_math,
        allreduce_s=allreduce_s(model, layout, hw, concurrency),
        fixed_s=fixed_step_s(model, calibration),
        prefill_s=t_prefill,
    )


def decode_step_s(
    model: ModelShape,
    precision: Precision,
    hw: ServingHardware,
    layout: ServingLayout,
    concurrency: int,
    context: float,
    calibration: InferenceCalibration,
    prefill: tuple[float, float] = (0.0, 0.0),
    head_dim: float | None = None,
    legacy_attention: bool = False,
) -> float:
    """Seconds of one decode step (``decode_step``'s total)."""
    return decode_step(
        model,
        precision,
        hw,
        layout,
        concurrency,
        context,
        calibration,
        prefill,
        head_dim,
        legacy_attention,
    ).total_s
