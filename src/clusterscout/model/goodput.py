"""Goodput: what interruptions cost a synchronous training run (expected restarts, time, money).

A synchronous job stops whenever any of its GPUs (or what they depend on) fails: the whole job
restarts from its last checkpoint. With failures arriving at a steady rate per GPU-hour, a run
on ``G`` GPUs sees ``rate * G`` interruptions per wall-clock hour; each costs the restart time
plus, on average, half a checkpoint interval of lost work. ADR 0027.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Final

from clusterscout.domain.errors import InputError

PER_MILLION: Final = 1e6
MAX_FAILURE_RATE: Final = 1e6
"""Most failures per million GPU-hours a request may give (one per GPU-hour)."""
MAX_MINUTES: Final = 7 * 24 * 60.0
"""Longest checkpoint interval or restart a request may give: a week, in minutes."""


@dataclass(frozen=True, slots=True)
class Reliability:
    """How often a run is interrupted and what each interruption costs.

    ``failures_per_million_gpu_hours``: unplanned job interruptions per million GPU-hours;
    ``checkpoint_minutes``: time between checkpoints (half of it is lost on average);
    ``restart_minutes``: time from an interruption until training runs again. ``source`` names
    where the defaults come from (shown with every plan).
    """

    failures_per_million_gpu_hours: float
    checkpoint_minutes: float
    restart_minutes: float
    source: str = ""
    source_url: str = ""
    checkpoint_source_url: str = ""
    restart_assumed: bool = False
    """True when the restart time is an assumption, not a published figure."""
    given: tuple[str, ...] = ()
    """The figures the request gave in place of the defaults."""

    @property
    def minutes_lost_per_interruption(self) -> float:
        """Restart plus, on average, half a checkpoint interval of work done again."""
        return self.restart_minutes + self.checkpoint_minutes / 2

    def overridden(
        self,
        failures_per_million_gpu_hours: float | None = None,
        checkpoint_minutes: float | None = None,
        restart_minutes: float | None = None,
    ) -> Reliability:
        """These figures with the request's own where it gave them.

        Raises:
            InputError: naming the field that is out of bounds.
        """
        checks = (
            ("failures_per_million_gpu_hours", failures_per_million_gpu_hours, MAX_FAILURE_RATE),
            ("checkpoint_minutes", checkpoint_minutes, MAX_MINUTES),
            ("restart_minutes", restart_minutes, MAX_MINUTES),
        )
        changes: dict[str, Any] = {}
        for name, value, top in checks:
            if value is None:
                continue
            if not math.isfinite(value) or not 0 <= value <= top:
                raise InputError(name, f"must be between 0 and {top:,.0f}")
            changes[name] = float(value)
        if not changes:
            return self
        given = tuple(sorted({*self.given, *changes}))
        return replace(self, given=given, **changes)


@dataclass(frozen=True, slots=True)
class Goodput:
    """A run's expected interruptions and what they add.

    ``goodput`` is the share of wall-clock time that trains (1.0: no interruption); ``None``
    in ``time_hours`` and the added figures means the run never finishes: interruptions come
    faster than it can recover and make progress.
    """

    goodput: float
    expected_interruptions: float | None
    time_hours: float | None
    added_hours: float | None
    cost_usd: float | None
    added_usd: float | None


def goodput_of(
    hours: float,
    gpus: int,
    usd_per_gpu_hour: float,
    reliability: Reliability,
    minimum_hours: float | None = None,
) -> Goodput:
    """Interruptions of a run of ``hours`` failure-free hours on ``gpus`` GPUs, and their cost.

    Wall-clock time ``W`` trains ``hours`` when ``W * (1 - lambda * L) = hours``, with
    ``lambda`` the job's interruptions per hour and ``L`` the hours lost to each; so goodput is
    ``1 - lambda * L`` and the interruptions expected are ``lambda * W``. Every lost hour is
    billed on the whole allocation, at least ``minimum_hours`` in all.

    >>> r = Reliability(100.0, 60.0, 30.0)  # 1e-4 per GPU-hour, an hour lost per interruption
    >>> g = goodput_of(900.0, 1000, 2.0, r)
    >>> round(g.goodput, 3), round(g.time_hours, 1), round(g.expected_interruptions, 1)
    (0.9, 1000.0, 100.0)
    >>> round(g.added_usd)
    200000
    """
    per_hour = reliability.failures_per_million_gpu_hours / PER_MILLION * gpus
    lost_each = reliability.minutes_lost_per_interruption / 60
    share = 1 - per_hour * lost_each
    if share <= 0:
        return Goodput(0.0, None, None, None, None, None)
    wall = hours / share

    def billed(h: float) -> float:
        return usd_per_gpu_hour * gpus * max(h, minimum_hours or 0)

    cost = billed(wall)
    return Goodput(share, per_hour * wall, wall, wall - hours, cost, cost - billed(hours))
