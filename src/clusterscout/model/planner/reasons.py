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

        FP16 runs at the BF16 rate, so it needs the BF16 figure.

        >>> ExclusionReason.no_figure(Precision.FP8).value
        'GPU has no fp8 figure'
        >>> ExclusionReason.no_figure(Precision.FP16).value
        'GPU has no bf16 figure'
        """
        if precision is Precision.FP16:
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


ASSUMPTIONS: tuple[Assumption, ...] = tuple(Assumption)
