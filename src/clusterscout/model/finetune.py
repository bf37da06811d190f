"""Fine-tuning arithmetic: LoRA adapter sizes, frozen-weight bytes (BF16 or NF4) and FLOPs."""

from __future__ import annotations

from clusterscout.model.inputs import JobKind, ModelShape

BF16_BYTES_PER_PARAM = 2.0
NF4_BYTES_PER_PARAM = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0
"""QLoRA storage of one frozen weight: 4-bit NormalFloat plus double-quantised block constants.

Formula: ``4 bits + 8/64 + 32/(64*256) bits`` (FP8 constants per 64-weight block, FP32
constants per 256 blocks) = 4.127 bits = 0.516 bytes.
Source: Dettmers et al., "QLoRA: Efficient Finetuning of Quantized LLMs", NeurIPS 2023, §3
(4-bit NormalFloat, double quantization), https://arxiv.org/abs/2305.14314.
"""
ADAPTER_STATE_BYTES_PER_PARAM = 16.0
"""Adapter weights (BF16), gradients (BF16) and mixed-precision Adam (12 bytes), as for
pre-training but on the adapters only."""
QLORA_DEQUANT_OVERHEAD = 1.25
"""Compute time of a QLoRA step over the same step with BF16 frozen weights.

Assumption, not fitted: every forward and backward GEMM first dequantises its NF4 block to
BF16; no published table in data/measurements.json compares QLoRA and LoRA step times on the
same setup, so the 25% is a stated guess (it moves QLoRA times, never its memory verdict).
"""
FROZEN_WEIGHT_FLOPS = 4.0
"""FLOPs per frozen weight per token: 2 forward + 2 for the input gradient backward.

The backward pass of a linear layer is two matmuls of forward size, one for the input
gradient and one for the weight gradient (Kaplan et al. 2020 §2.1; Narayanan et al. 2021
appendix); frozen weights need no weight gradient, so LoRA/QLoRA skip 2 of the 6 FLOPs.
"""
TRAINED_WEIGHT_FLOPS = 6.0
"""FLOPs per trained weight per token: 2 forward + 4 backward."""


def mlp_matrices(model: ModelShape) -> int:
    """Weight matrices of one MLP block: 3 for gated (SwiGLU) blocks, 2 for GPT blocks.

    Read from the shape's own parameter count: what is left of a layer after attention
    (``h*(2h + 2*h_kv)``) divided by ``h*ffn``, rounded and kept between 2 and 3.

    >>> from clusterscout.model.presets import PRESETS
    >>> mlp_matrices(PRESETS["405B"].shape), mlp_matrices(PRESETS["7B"].shape)
    (3, 3)
    """
    h, ffn = model.hidden, model.ffn_hidden
    kv_dim = h * model.kv_heads / model.heads
    embeddings = h * model.vocab * (1 if model.tied_embeddings else 2)
    per_layer = (model.params - embeddings) / model.layers
    mlp = per_layer - h * (2 * h + 2 * kv_dim)
    return min(3, max(2, round(mlp / (h * ffn))))


def adapter_params(model: ModelShape, rank: int) -> float:
    """LoRA parameters when every linear layer of every block gets an adapter of rank ``r``.

    Adapted matrices: the attention projections q, k, v, o and every MLP matrix (gate, up,
    down, or up and down), as the QLoRA paper recommends. An adapter of a ``d_in x d_out``
    matrix is ``A (r x d_in)`` and ``B (d_out x r)``: ``r * (d_in + d_out)`` parameters.
    Per layer: ``r * (2h + 2(h + h_kv) + 2h + m(h + ffn))``; embeddings and the output head
    get none.
    Source: Hu et al., "LoRA", ICLR 2022, §4 (https://arxiv.org/abs/2106.09685);
    Dettmers et al. 2023 §4 (adapters on all linear layers).
    """
    h, ffn = model.hidden, model.ffn_hidden
    kv_dim = h * model.kv_heads / model.heads
    attention = 2 * h + 2 * (h + kv_dim) + 2 * h
    mlp = mlp_matrices(model) * (h + ffn)
    return float(rank * model.layers * (attention + mlp))


def embedding_params(model: ModelShape) -> float:
    """Input embedding and output head (one matrix when tied); kept in BF16 by QLoRA."""
    return float(model.hidden * model.vocab * (1 if model.tied_embeddings else 2))


def frozen_weight_bytes(model: ModelShape, job: JobKind) -> float:
    """Bytes of the frozen base model of a LoRA (BF16) or QLoRA (NF4) job.

    QLoRA quantises the linear layers of the blocks; the embeddings and output head stay
    in BF16 (bitsandbytes leaves them unquantised).
    """
    if job is JobKind.QLORA:
        embeddings = min(embedding_params(model), model.params)
        return NF4_BYTES_PER_PARAM * (model.params - embeddings) + BF16_BYTES_PER_PARAM * embeddings
    return BF16_BYTES_PER_PARAM * model.params
