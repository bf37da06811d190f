"""The planner's reasons and assumptions in the visitor's language: one message id per member.

``model.planner.reasons`` keeps them as enums with English values (the API's and the CLI's
words); these tables are total over the enums (a test checks it), so a new member cannot reach
a page in English.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from clusterscout.model.planner.reasons import Assumption, ExclusionReason
from clusterscout.web.i18n import N_, Formatter

REASON_TEXTS: Final[Mapping[ExclusionReason, str]] = {
    ExclusionReason.UNKNOWN_GPU: N_("unknown GPU"),
    ExclusionReason.NO_BF16_FIGURE: N_("no bf16 figure for this GPU"),
    ExclusionReason.NO_FP8_FIGURE: N_("no fp8 figure for this GPU"),
    ExclusionReason.NO_PRICE: N_("no price"),
    ExclusionReason.UNKNOWN_GPUS_PER_NODE: N_("unknown GPUs per node"),
    ExclusionReason.UNKNOWN_FABRIC: N_("unknown fabric"),
    ExclusionReason.UNKNOWN_GBPS: N_("unknown Gbit/s per node"),
    ExclusionReason.TOO_SMALL: N_("too small for the job"),
    ExclusionReason.OVER_BUDGET: N_("over budget"),
    ExclusionReason.MISSES_DEADLINE: N_("misses the deadline"),
    ExclusionReason.SPOT_MULTI_NODE: N_(
        "spot price only: not used across nodes unless spot is allowed (one pre-empted node "
        "stalls the whole job)"
    ),
    ExclusionReason.UNKNOWN_GPU_FIGURES: N_("unknown GPU figures"),
    ExclusionReason.DOES_NOT_FIT: N_("does not fit in memory"),
}
ASSUMPTION_TEXTS: Final[Mapping[Assumption, str]] = {
    Assumption.ADAM_STATE: N_(
        "Mixed-precision Adam: 16 bytes of model state per parameter (ZeRO paper)."
    ),
    Assumption.MICRO_BATCH: N_(
        "Micro-batch 1, flash attention, no or full activation recomputation."
    ),
    Assumption.LAYOUT: N_(
        "Tensor parallelism stays inside one node; pipeline depth is the smallest that fits."
    ),
    Assumption.RAILS: N_(
        "Rail-optimised nodes, one NIC per GPU; provider tuning problems are not modelled."
    ),
    Assumption.ERROR_BAND: N_(
        "Times are estimates; the error band is the 90th-percentile error on published "
        "measurements the model was not fitted on."
    ),
    Assumption.NO_FAILURES: N_(
        "Communication hidden behind compute still slows it and every step waits for the "
        "slowest node; failures and restarts are not modelled."
    ),
    Assumption.DEADLINE: N_(
        "Without a deadline, a job must finish within 90 days; slower options are left out."
    ),
    Assumption.SPOT: N_(
        "Spot prices are not used for multi-node jobs unless allowed: one pre-empted node "
        "stalls the whole synchronous job."
    ),
    Assumption.BATCH: N_(
        "Every layout trains the same tokens: when data parallelism needs a larger batch, "
        "the step count drops to match."
    ),
    Assumption.LORA: N_(
        "LoRA/QLoRA: adapters on every linear layer of every block; frozen weights take no "
        "gradients and no weight-gradient matmuls (4 instead of 6 FLOPs per weight and token)."
    ),
    Assumption.QLORA: N_(
        "QLoRA: NF4 weights with double-quantised constants (0.516 bytes per weight, QLoRA "
        "paper); its dequantisation slowdown (a quarter more compute time) is an assumption, "
        "not a fit."
    ),
    Assumption.NETWORK_BRACKET: N_(
        "Where an offer's Gbit/s per node, fabric or GPUDirect RDMA is unknown, it is "
        "evaluated at the lowest and highest values shipped for its fabric and GPU class "
        "(a sourced table) and ranked by the slower end; its time and cost are ranges."
    ),
    Assumption.PRICE_ON_REQUEST: N_(
        "Offers without a published price are listed with time and GPU-hours; the market "
        "reference beside them is other providers' prices, not theirs."
    ),
    Assumption.BUYER_PRICE: N_(
        "Prices entered with the request are the buyer's, not published by the provider."
    ),
    Assumption.SERVING_MEMORY: N_(
        "Serving memory: weights at the chosen precision (embeddings in BF16) plus the KV "
        "cache of every concurrent sequence at the full context; a tenth of GPU memory is "
        "kept for activations and workspace."
    ),
    Assumption.SERVING_SPEED: N_(
        "Serving speed comes from a model fitted on published serving benchmarks: a decode "
        "step reads the weights its tokens need (for a mixture-of-experts model only the "
        "routed experts) and the KV cache, or does their math, whichever is slower, plus a "
        "fixed time per layer and two tensor-parallel all-reduces per layer; INT4 weights are "
        "dequantised on the fly. Time to first token is one prompt filling the context, "
        "prefilled alone. Speculative decoding, scheduling and queueing are left out."
    ),
    Assumption.SERVING_LAYOUT: N_(
        "A replica uses tensor parallelism inside one node and pipeline stages across "
        "nodes; replicas are added for a target throughput."
    ),
}


def reason_text(fmt: Formatter, reason: ExclusionReason) -> str:
    """Why an offer was left out, in ``fmt``'s language."""
    return fmt.gettext(REASON_TEXTS[reason])


def assumption_text(fmt: Formatter, assumption: Assumption) -> str:
    """One of the planner's assumptions, in ``fmt``'s language."""
    return fmt.gettext(ASSUMPTION_TEXTS[assumption])
