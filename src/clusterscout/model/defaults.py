"""Documented defaults that complete a transformer shape given only its parameter count."""

from __future__ import annotations

import math

from clusterscout.model.inputs import ModelShape

DEFAULT_ASPECT_RATIO = 128
"""Width over depth, ``h / l``: GPT-3 175B 128, Llama 2 7B 128, Llama 3 70B 102."""
DEFAULT_HEAD_DIM = 128
"""Attention head size of GPT-3, Llama and most current models."""
DEFAULT_VOCAB = 32000
"""Llama 1/2 vocabulary; small enough that the derived depth is not dominated by embeddings."""
FFN_MULTIPLIER = 4
"""MLP width over hidden for a GPT block."""
_WIDTH_QUANTUM = 128


def _round_to(value: float, quantum: int) -> int:
    return max(quantum, round(value / quantum) * quantum)


def derive_hidden(params: float, layers: int | None) -> int:
    """Default width.

    Formula: with the depth known, ``h = sqrt(params / (12 l))``; otherwise
    ``h = (params * r / 12) ** (1/3)`` with aspect ratio ``r = h/l = 128``; both rounded to a
    multiple of 128 (GPT blocks hold ``12 h^2`` parameters each).
    """
    if layers is not None:
        return _round_to(math.sqrt(params / (12 * layers)), _WIDTH_QUANTUM)
    return _round_to((params * DEFAULT_ASPECT_RATIO / 12) ** (1 / 3), _WIDTH_QUANTUM)


def derive_layers(params: float, hidden: int, vocab: int, tied: bool) -> int:
    """Default depth: ``l = (params - embeddings) / (12 h^2)``, at least 1.

    Embeddings are ``h*V`` when tied and ``2*h*V`` otherwise.
    """
    embeddings = hidden * vocab * (1 if tied else 2)
    return max(1, round((params - embeddings) / (12 * hidden * hidden)))


def complete_shape(
    params: float,
    layers: int | None = None,
    hidden: int | None = None,
    heads: int | None = None,
    kv_heads: int | None = None,
    vocab: int | None = None,
    ffn_hidden: int | None = None,
    tied_embeddings: bool | None = None,
) -> ModelShape:
    """A full shape from whatever is known; every missing field gets its documented default.

    Defaults: ``hidden`` and ``layers`` from ``derive_hidden``/``derive_layers``;
    ``heads = hidden / 128``; ``kv_heads = heads``; ``vocab = 32000``;
    ``ffn_hidden = 4 * hidden``; untied embeddings.
    """
    tied = bool(tied_embeddings)
    vocab_v = vocab if vocab is not None else DEFAULT_VOCAB
    hidden_v = hidden if hidden is not None else derive_hidden(params, layers)
    layers_v = layers if layers is not None else derive_layers(params, hidden_v, vocab_v, tied)
    heads_v = heads if heads is not None else max(1, hidden_v // DEFAULT_HEAD_DIM)
    return ModelShape(
        params=params,
        layers=layers_v,
        hidden=hidden_v,
        heads=heads_v,
        kv_heads=kv_heads if kv_heads is not None else heads_v,
        vocab=vocab_v,
        ffn_hidden=ffn_hidden if ffn_hidden is not None else FFN_MULTIPLIER * hidden_v,
        tied_embeddings=tied,
    )
