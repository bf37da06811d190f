"""Model presets of the planner: standard Llama-like shapes by size name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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
}


def find_preset(name: str) -> Preset | None:
    """Preset by name, case-insensitively (``"70b"`` finds ``70B``)."""
    return PRESETS.get(name.strip().upper())
