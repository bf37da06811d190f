"""Job cost and time from a price, a GPU count and predicted throughput."""

from __future__ import annotations

import math

from clusterscout.domain.units import SECONDS_PER_HOUR


def job_cost_usd(usd_per_gpu_hour: float, gpus: int, hours: float) -> float:
    """Cost of a job: ``price * GPUs * hours`` (billing for the whole allocation)."""
    return usd_per_gpu_hour * gpus * hours


def time_to_train_hours(tokens: float, tokens_per_s_per_gpu: float, gpus: int) -> float:
    """Hours to process ``tokens``: ``tokens / (tokens_per_s_per_gpu * gpus) / 3600``."""
    return tokens / (tokens_per_s_per_gpu * gpus) / SECONDS_PER_HOUR


def cost_per_million_tokens_usd(usd_per_gpu_hour: float, tokens_per_s_per_gpu: float) -> float:
    """USD per million tokens: ``price / (tokens_per_s_per_gpu * 3600) * 1e6``."""
    return usd_per_gpu_hour / (tokens_per_s_per_gpu * SECONDS_PER_HOUR) * 1e6


def effective_usd_per_gpu_hour(usd_per_gpu_hour: float, scaling_efficiency: float) -> float:
    """Price of one GPU-hour of useful work: ``price / scaling_efficiency``.

    A cluster that scales at 80% bills 1.25 GPU-hours per GPU-hour of one-node-equivalent work.
    """
    return usd_per_gpu_hour / scaling_efficiency


def billed_hours(
    hours: float, minimum_hours: float | None = None, term_hours: float | None = None
) -> float:
    """Hours a buyer pays for a run of ``hours``: at least the minimum, whole terms when termed.

    A run shorter than the billing minimum pays the minimum; a commitment of ``term_hours`` is
    paid in whole terms (a 6-month run on 1-year terms pays one year; on 2-week terms, 13 terms).

    >>> billed_hours(197), billed_hours(197, minimum_hours=336), billed_hours(4380, None, 336)
    (197, 336, 4704)
    """
    if term_hours:
        hours = math.ceil(hours / term_hours - 1e-9) * term_hours
    return max(hours, minimum_hours or 0)
