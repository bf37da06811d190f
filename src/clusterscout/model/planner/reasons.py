"""Texts of the planner that people read, as enums: every surface translates them by member.

The values are the English texts of the JSON API and the CLI; the web layer keeps one message
id per member (a test checks none is missing), so a new reason cannot reach a page untranslated.
"""

from __future__ import annotations

from enum import StrEnum

from clusterscout.model.inputs import Precision


class ExclusionReason(StrEnum):
    """Why an offer gets no plan option, or no reference-workload figure."""

    UNKNOWN_GPU = "unknown GPU"
    NO_BF16_FIGURE = "GPU has no bf16 figure"
    NO_FP8_FIGURE = "GPU has no fp8 figure"
    NO_PRICE = "no price"
    UNKNOWN_GPUS_PER_NODE = "unknown GPUs per node"
    UNKNOWN_FABRIC = "unknown fabric"
    UNKNOWN_GBPS = "unknown Gbit/s per node"
    TOO_SMALL = "too small"
    OVER_BUDGET = "over budget"
    MISSES_DEADLINE = "misses deadline"
    SPOT_MULTI_NODE = "spot price only (not used for multi-node jobs without allow_spot)"
    UNKNOWN_GPU_FIGURES = "unknown GPU figures"
    DOES_NOT_FIT = "does not fit"

    @classmethod
    def no_figure(cls, precision: Precision) -> ExclusionReason:
        """The reason for a GPU without a peak TFLOP/s figure in ``precision``.

        FP16 runs at the BF16 rate, and INT4 weights are dequantised to BF16, so both need
        the BF16 figure.

        >>> ExclusionReason.no_figure(Precision.FP8).value
        'GPU has no fp8 figure'
        >>> ExclusionReason.no_figure(Precision.FP16).value
        'GPU has no bf16 figure'
        """
        if precision in {Precision.FP16, Precision.INT4}:
            return cls.NO_BF16_FIGURE
        return cls(f"GPU has no {precision.value} figure")


class Assumption(StrEnum):
    """What every plan assumes, listed with its answer."""

    ADAM_STATE = "Mixed-precision Adam: 16 bytes of model state per parameter (ZeRO paper)."
    MICRO_BATCH = "Micro-batch 1, flash attention, no or full activation recomputation."
    LAYOUT = "Tensor parallelism stays inside one node; pipeline depth is the smallest that fits."
    RAILS = "Rail-optimised nodes, one NIC per GPU; provider tuning problems are not modelled."
    ERROR_BAND = (
        "Times are estimates; the error band is the 90th-percentile error on published "
        "measurements the model was not fitted on."
    )
    NO_FAILURES = (
        "Communication hidden behind compute still slows it and every step waits for the "
        "slowest node; failures and restarts are not modelled."
    )
    DEADLINE = "Without a deadline, a job must finish within 90 days; slower options are left out."
    SPOT = (
        "Spot prices are not used for multi-node jobs unless allowed: one pre-empted node "
        "stalls the whole synchronous job."
    )
    BATCH = (
        "Every layout trains the same tokens: when data parallelism needs a larger batch, "
        "the step count drops to match."
    )
    LORA = (
        "LoRA/QLoRA: adapters on every linear layer of every block; frozen weights take no "
        "gradients and no weight-gradient matmuls (4 instead of 6 FLOPs per weight and token)."
    )
    QLORA = (
        "QLoRA: NF4 weights with double-quantised constants (0.516 bytes per weight, QLoRA "
        "paper); its dequantisation slowdown (a quarter more compute time) is an assumption, "
        "not a fit."
    )
    NETWORK_BRACKET = (
        "Where an offer's Gbit/s per node, fabric or GPUDirect RDMA is unknown, it is "
        "evaluated at the lowest and highest values shipped for its fabric and GPU class "
        "(a sourced table) and ranked by the slower end; its time and cost are ranges."
    )
    PRICE_ON_REQUEST = (
        "Offers without a published price are listed with time and GPU-hours; the market "
        "reference beside them is other providers' prices, not theirs."
    )
    BUYER_PRICE = "Prices entered with the request are the buyer's, not published by the provider."
    SERVING_MEMORY = (
        "Serving memory: weights at the chosen precision (embeddings in BF16) plus the KV "
        "cache of every concurrent sequence at the full context; a tenth of GPU memory is "
        "kept for activations and workspace."
    )
    SERVING_SPEED = (
        "Serving speed comes from a model fitted on published serving benchmarks: a decode "
        "step reads the weights its tokens need (for a mixture-of-experts model only the "
        "routed experts) and the KV cache, or does their math, whichever is slower, plus a "
        "fixed time per layer and two tensor-parallel all-reduces per layer; INT4 weights are "
        "dequantised on the fly. Time to first token is one prompt filling the context, "
        "prefilled alone. Speculative decoding, scheduling and queueing are left out."
    )
    SERVING_LAYOUT = (
        "A replica uses tensor parallelism inside one node and pipeline stages across "
        "nodes; replicas are added for a target throughput."
    )


_FINETUNE_ONLY: tuple[Assumption, ...] = (Assumption.LORA, Assumption.QLORA)
SERVING_ASSUMPTIONS: tuple[Assumption, ...] = (
    Assumption.SERVING_MEMORY,
    Assumption.SERVING_SPEED,
    Assumption.SERVING_LAYOUT,
    Assumption.RAILS,
)
"""What an inference sizing assumes."""
DATA_ASSUMPTIONS: tuple[Assumption, ...] = (
    Assumption.NETWORK_BRACKET,
    Assumption.PRICE_ON_REQUEST,
    Assumption.BUYER_PRICE,
)
"""Listed only when some option of the answer rests on them."""
ASSUMPTIONS: tuple[Assumption, ...] = tuple(
    a
    for a in Assumption
    if a not in SERVING_ASSUMPTIONS[:3] and a not in _FINETUNE_ONLY and a not in DATA_ASSUMPTIONS
)
"""What every training plan assumes (fine-tuning adds ``finetune_assumptions``)."""


def finetune_assumptions(lora: bool, qlora: bool) -> tuple[Assumption, ...]:
    """The training assumptions, plus the LoRA and QLoRA ones where they apply."""
    extra = (Assumption.LORA,) if lora or qlora else ()
    return ASSUMPTIONS + extra + ((Assumption.QLORA,) if qlora else ())
