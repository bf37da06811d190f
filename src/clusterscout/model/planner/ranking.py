"""Ranking: the budget and deadline cuts, each offer's cheapest and fastest option, Pareto marks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from clusterscout.model.planner.reasons import ExclusionReason
from clusterscout.model.planner.results import PlanOption


def pick(
    candidates: Sequence[PlanOption], budget_usd: float | None, deadline_hours: float | None
) -> tuple[PlanOption, ...] | ExclusionReason:
    """An offer's cheapest option and, when different, its fastest, within budget and deadline.

    Returns:
        The chosen options, or why none is left (``OVER_BUDGET`` before ``MISSES_DEADLINE``).
    """
    within = [c for c in candidates if budget_usd is None or c.cost_usd <= budget_usd]
    if not within:
        return ExclusionReason.OVER_BUDGET
    timely = [c for c in within if deadline_hours is None or c.time_hours <= deadline_hours]
    if not timely:
        return ExclusionReason.MISSES_DEADLINE
    cheapest = min(timely, key=lambda c: (c.cost_usd, c.time_hours))
    fastest = min(timely, key=lambda c: (c.time_hours, c.cost_usd))
    return (cheapest,) if fastest is cheapest else (cheapest, fastest)


def rank(options: Sequence[PlanOption]) -> tuple[PlanOption, ...]:
    """Options sorted by cost, with their rank by cost and by time and the Pareto front marked.

    Options on a GPU whose family is not calibrated (its speed rests on a prior, not on its
    own measurements) come after every calibrated option, in both rankings: a borrowed or
    prior figure never outranks a measured one. Within each group the order is by cost (or
    time). The Pareto front is drawn over the calibrated options (over all of them when none
    is calibrated): an option is on it when no other option of that set is both no dearer
    and no slower, and strictly better in one of the two.
    """
    by_cost = sorted(
        options, key=lambda o: (not o.calibrated, o.cost_usd, o.time_hours, o.offer.offer_id)
    )
    time_rank = {
        id(o): i + 1
        for i, o in enumerate(
            sorted(
                options,
                key=lambda o: (not o.calibrated, o.time_hours, o.cost_usd, o.offer.offer_id),
            )
        )
    }
    front_set = [o for o in options if o.calibrated] or list(options)
    eligible = {id(o) for o in front_set}
    marked = []
    for i, o in enumerate(by_cost):
        dominated = any(
            p.cost_usd <= o.cost_usd
            and p.time_hours <= o.time_hours
            and (p.cost_usd < o.cost_usd or p.time_hours < o.time_hours)
            for p in front_set
        )
        on_front = id(o) in eligible and not dominated
        marked.append(
            replace(o, pareto=on_front, rank_by_cost=i + 1, rank_by_time=time_rank[id(o)])
        )
    return tuple(marked)
