"""Ranking: budget before deadline, an offer's cheapest and fastest option, the Pareto front."""

from __future__ import annotations

from dataclasses import replace

from clusterscout.model.inputs import Recompute, Sharding
from clusterscout.model.planner.ranking import pick, rank
from clusterscout.model.planner.reasons import ExclusionReason
from clusterscout.model.planner.results import Layout, PlanOffer, PlanOption

LAYOUT = Layout(1, 1, 8, 1, Sharding.FSDP, Recompute.NONE, 1, 8)


def option(oid: str, cost: float, hours: float) -> PlanOption:
    offer = PlanOffer(oid, "p", "H100", 8, None, None, None, 1, 2.0)
    return PlanOption(offer, 1, LAYOUT, hours, cost, 1.0, 2.0, 0.4)


def test_pick_cheapest_and_fastest_within_budget_and_deadline() -> None:
    cheap, fast, middle = option("a", 100, 10), option("a", 300, 2), option("a", 200, 5)
    assert pick([cheap, fast, middle], None, None) == (cheap, fast)
    assert pick([cheap, fast, middle], 250, None) == (cheap, middle)
    assert pick([cheap, fast, middle], None, 6) == (middle, fast)
    assert pick([cheap], None, None) == (cheap,)


def test_pick_says_why_nothing_is_left_budget_first() -> None:
    slow_dear = [option("a", 500, 50)]
    assert pick(slow_dear, 100, 10) is ExclusionReason.OVER_BUDGET
    assert pick(slow_dear, 1000, 10) is ExclusionReason.MISSES_DEADLINE


def test_rank_orders_by_cost_and_marks_ranks_and_the_front() -> None:
    a, b, c = option("a", 100, 10), option("b", 300, 2), option("c", 400, 20)
    ranked = rank([c, b, a])
    assert [o.offer.offer_id for o in ranked] == ["a", "b", "c"]
    assert [o.rank_by_cost for o in ranked] == [1, 2, 3]
    assert [o.rank_by_time for o in ranked] == [2, 1, 3]
    assert [o.pareto for o in ranked] == [True, True, False]  # c is dearer and slower than a


def test_uncalibrated_options_rank_after_every_calibrated_one_and_off_the_front() -> None:
    measured_dear = option("h100", 500, 10)
    prior_cheap = replace(option("mi300x", 100, 5), calibrated=False, gpu_family="MI300X")
    ranked = rank([prior_cheap, measured_dear])
    # cheaper and faster, but its speed is a prior: it comes second in both rankings
    assert [o.offer.offer_id for o in ranked] == ["h100", "mi300x"]
    assert [(o.rank_by_cost, o.rank_by_time) for o in ranked] == [(1, 1), (2, 2)]
    assert [o.pareto for o in ranked] == [True, False]
    # with no calibrated option left, the front is drawn over the uncalibrated ones
    dominated = replace(
        prior_cheap, offer=replace(prior_cheap.offer, offer_id="x"), cost_usd=900, time_hours=50
    )
    only = rank([prior_cheap, dominated])
    assert [o.pareto for o in only] == [True, False]
