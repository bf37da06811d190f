"""Model presets of the planner: Llama-like dense shapes by size name, and MoE models by name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from clusterscout.model.inputs import ModelShape


@dataclass(frozen=True, slots=True)
class Preset:
    """A named model with its usual training sequence length and batch size in tokens."""

    name: str
    shape: ModelShape
    seq_len: int
    batch_tokens: int
    source: str


def _llama(
    params: float, layers: int, hidden: int, heads: int, kv: int, vocab: int, ffn: int
) -> ModelShape:
    return ModelShape(
        params=params,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        vocab=vocab,
        ffn_hidden=ffn,
    )


def _moe(
    base: ModelShape, experts: int, top_k: int, expert_ffn: int, shared: int = 0, dense: int = 0
) -> ModelShape:
    return replace(
        base,
        experts=experts,
        top_k=top_k,
        expert_ffn=expert_ffn,
        shared_experts=shared,
        dense_layers=dense,
    )


def shape_params(model: ModelShape) -> float:
    """Parameters implied by a shape (a cross-check of a preset's published total).

    Formula: embeddings ``V h`` (x2 untied) + ``l * attention`` + dense MLPs + experts +
    routers, with attention ``2 h^2 + 2 h * h * kv/heads`` (Q, O and the grouped K, V at head
    size ``h/heads``), a gated dense MLP ``3 h f``, ``(E + S) * 3 h f_e`` per MoE layer and a
    router ``E h``. Norms and biases are left out (under 0.01%).
    Assumption: MLA and heads wider than ``h/heads`` are approximated by this attention count
    (DeepSeek-V3's MLA holds 187M per layer against 206M here; Qwen3's 128-wide heads 71M
    against 36M); both shift the total by under 2%.
    """
    h = model.hidden
    embeddings = model.vocab * h * (1 if model.tied_embeddings else 2)
    attention = 2 * h * h + 2 * h * h * model.kv_heads / model.heads
    dense_mlp = 3 * h * model.ffn_hidden
    if not model.is_moe:
        return embeddings + model.layers * (attention + dense_mlp)
    per_moe = (model.experts + model.shared_experts) * model.params_per_expert + model.experts * h
    return (
        embeddings
        + model.layers * attention
        + model.dense_layers * dense_mlp
        + model.moe_layers * per_moe
    )


PRESETS: Mapping[str, Preset] = {
    "1B": Preset(
        "1B",
        _llama(1.24e9, 16, 2048, 32, 8, 128256, 8192),
        8192,
        2**22,
        "Llama 3.2 1B model card (meta-llama/Llama-3.2-1B config.json)",
    ),
    "7B": Preset(
        "7B",
        _llama(6.74e9, 32, 4096, 32, 32, 32000, 11008),
        4096,
        2**22,
        "Llama 2 7B (Touvron et al. 2023, Table 1; 4M-token batches)",
    ),
    "8B": Preset(
        "8B",
        _llama(8.03e9, 32, 4096, 32, 8, 128256, 14336),
        8192,
        2**22,
        "Llama 3.1 8B (meta-llama/Llama-3.1-8B config.json)",
    ),
    "13B": Preset(
        "13B",
        _llama(13.0e9, 40, 5120, 40, 40, 32000, 13824),
        4096,
        2**22,
        "Llama 2 13B (Touvron et al. 2023, Table 1)",
    ),
    "70B": Preset(
        "70B",
        _llama(70.6e9, 80, 8192, 64, 8, 128256, 28672),
        8192,
        2**22,
        "Llama 3.1 70B (meta-llama/Llama-3.1-70B config.json)",
    ),
    "405B": Preset(
        "405B",
        _llama(405.9e9, 126, 16384, 128, 8, 128256, 53248),
        8192,
        2**24,
        "Llama 3.1 405B (Llama 3 paper, Table 3; 16M-token batches)",
    ),
    # Mixture-of-experts models: ``params`` is the published total (memory holds every
    # expert); compute uses the active parameters the shape implies (ModelShape.active_params).
    "mixtral-8x7b": Preset(
        "mixtral-8x7b",
        _moe(_llama(46.7e9, 32, 4096, 32, 8, 32000, 14336), 8, 2, 14336),
        4096,
        2**22,
        "Mixtral of Experts (Jiang et al. 2024, arXiv 2401.04088: 47B total, 13B active, "
        "Table 1 shape); mistralai/Mixtral-8x7B-v0.1 config.json; 46.7B/12.9B from Mistral's "
        "announcement; batch: not published, the planner's 4M-token default",
    ),
    "mixtral-8x22b": Preset(
        "mixtral-8x22b",
        _moe(_llama(141e9, 56, 6144, 48, 8, 32768, 16384), 8, 2, 16384),
        4096,
        2**22,
        "Mistral AI, 'Cheaper, Better, Faster, Stronger' (mistral.ai/news/mixtral-8x22b: 141B "
        "total, 39B active); mistralai/Mixtral-8x22B-v0.1 config.json; batch: not published, "
        "the planner's 4M-token default",
    ),
    "deepseek-v3": Preset(
        "deepseek-v3",
        replace(
            _moe(_llama(671e9, 61, 7168, 128, 128, 129280, 18432), 256, 8, 2048, 1, 3),
            kv_lora_rank=512,  # MLA: config.json kv_lora_rank and qk_rope_head_dim
            qk_rope_head_dim=64,
        ),
        4096,
        15360 * 4096,
        "DeepSeek-V3 Technical Report (arXiv 2412.19437 §4.2: 61 layers, first 3 dense, 1 "
        "shared + 256 routed experts, top-8, expert width 2048, hidden 7168, MLA; 671B total, "
        "37B active; 4K sequences, batch 15,360); deepseek-ai/DeepSeek-V3 config.json (MLA "
        "kv_lora_rank 512, qk_rope_head_dim 64)",
    ),
    "qwen3-235b-a22b": Preset(
        "qwen3-235b-a22b",
        _moe(_llama(235e9, 94, 4096, 64, 4, 151936, 12288), 128, 8, 1536),
        4096,
        2**22,
        "Qwen3 Technical Report (arXiv 2505.09388, Table 2: 94 layers, 64/4 heads, 128 experts, "
        "8 active; 235B total, 22B active); Qwen/Qwen3-235B-A22B config.json (hidden 4096, "
        "moe_intermediate_size 1536); batch: not published, the planner's 4M-token default",
    ),
}


def find_preset(name: str) -> Preset | None:
    """Preset by name, case-insensitively (``"70b"`` finds ``70B``, ``"DeepSeek-V3"`` too)."""
    wanted = name.strip().lower()
    return next((p for key, p in PRESETS.items() if key.lower() == wanted), None)
