"""Goodput: interruptions of a synchronous run, the time and money they add, and the inputs."""

from __future__ import annotations

import math

import pytest

from clusterscout.domain.errors import InputError
from clusterscout.model.calibration import Calibration
from clusterscout.model.goodput import MAX_FAILURE_RATE, MAX_MINUTES, Reliability, goodput_of
from clusterscout.model.planner.plan import plan
from clusterscout.model.planner.request import PlanRequest
from tests.model.conftest import GPUS
from tests.model.planner.test_plan import offer

LLAMA3 = Reliability(19.7, 60.0, 15.0, "Llama 3", "https://arxiv.org/abs/2407.21783")


def test_a_run_without_failures_loses_nothing() -> None:
    g = goodput_of(500.0, 1024, 2.0, Reliability(0.0, 60.0, 15.0))
    assert g.goodput == 1.0
    assert g.expected_interruptions == 0.0
    assert g.time_hours == 500.0 and g.added_hours == 0.0 and g.added_usd == 0.0
    assert g.cost_usd == 2.0 * 1024 * 500


def test_the_wall_clock_trains_the_failure_free_hours_after_its_losses() -> None:
    hours, gpus = 1000.0, 2048
    g = goodput_of(hours, gpus, 3.0, LLAMA3)
    assert g.time_hours is not None and g.expected_interruptions is not None
    # Each interruption costs 15 min of restart and, on average, 30 min of work done again:
    # what is left of the wall clock after those losses is exactly the failure-free run.
    lost = g.expected_interruptions * 0.75
    assert g.time_hours - lost == pytest.approx(hours)
    # Interruptions arrive at the rate per GPU-hour times the GPUs, over the whole wall clock.
    assert g.expected_interruptions == pytest.approx(19.7e-6 * gpus * g.time_hours)
    assert g.goodput == pytest.approx(hours / g.time_hours)
    assert g.added_usd == pytest.approx(3.0 * gpus * (g.time_hours - hours))


def test_more_gpus_lose_a_larger_share() -> None:
    shares = [goodput_of(100.0, n, 1.0, LLAMA3).goodput for n in (8, 1024, 16384)]
    assert shares[0] > shares[1] > shares[2]
    # Llama 3's scale with our defaults: about three in four hours train.
    assert 0.7 < shares[2] < 0.8


def test_a_billing_minimum_absorbs_lost_hours_it_already_pays_for() -> None:
    g = goodput_of(10.0, 64, 2.0, LLAMA3, minimum_hours=336.0)
    assert g.time_hours is not None and g.time_hours < 336.0
    assert g.cost_usd == 2.0 * 64 * 336.0
    assert g.added_usd == 0.0


def test_a_run_that_cannot_outpace_its_failures_never_ends() -> None:
    # 1e-3 per GPU-hour on 1,000 GPUs is one interruption an hour, each costing 75 minutes.
    g = goodput_of(10.0, 1000, 2.0, Reliability(1000.0, 90.0, 30.0))
    assert g.goodput == 0.0
    assert g.time_hours is None and g.expected_interruptions is None
    assert g.cost_usd is None and g.added_usd is None and g.added_hours is None


def test_overrides_replace_the_defaults_and_are_named() -> None:
    assert LLAMA3.overridden() is LLAMA3
    mine = LLAMA3.overridden(checkpoint_minutes=10, restart_minutes=0)
    assert (mine.checkpoint_minutes, mine.restart_minutes) == (10.0, 0.0)
    assert mine.failures_per_million_gpu_hours == 19.7
    assert mine.minutes_lost_per_interruption == 5.0
    assert mine.given == ("checkpoint_minutes", "restart_minutes")
    again = mine.overridden(failures_per_million_gpu_hours=5)
    assert again.given == (
        "checkpoint_minutes",
        "failures_per_million_gpu_hours",
        "restart_minutes",
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("failures_per_million_gpu_hours", -1.0),
        ("failures_per_million_gpu_hours", MAX_FAILURE_RATE * 2),
        ("checkpoint_minutes", math.nan),
        ("restart_minutes", MAX_MINUTES + 1),
        ("restart_minutes", math.inf),
    ],
)
def test_out_of_bounds_figures_name_their_field(name: str, value: float) -> None:
    with pytest.raises(InputError) as caught:
        LLAMA3.overridden(**{name: value})
    assert caught.value.field == name


def test_plan_options_carry_goodput_and_the_figures_behind_it(cal: Calibration) -> None:
    offers = [offer("h100-ib"), offer("h100-cheap", price=1.0)]
    request = PlanRequest(preset="70B", tokens=1e12, restart_minutes=5.0)
    result = plan(request, offers, GPUS, cal, LLAMA3)
    assert result.reliability is not None
    assert result.reliability.restart_minutes == 5.0
    assert result.reliability.given == ("restart_minutes",)
    assert result.options
    for o in result.options:
        assert o.goodput is not None and o.goodput.time_hours is not None
        assert o.goodput.time_hours > o.time_hours
        price = o.offer.usd_per_gpu_hour or 0.0
        expected = goodput_of(o.time_hours, o.gpus, price, result.reliability)
        assert o.goodput == expected
    # Without reliability figures a plan is failure-free, as before.
    bare = plan(PlanRequest(preset="70B", tokens=1e12), offers, GPUS, cal)
    assert bare.reliability is None and all(o.goodput is None for o in bare.options)
    with pytest.raises(InputError) as caught:
        plan(
            PlanRequest(preset="70B", tokens=1e12, checkpoint_minutes=-1), offers, GPUS, cal, LLAMA3
        )
    assert caught.value.field == "checkpoint_minutes"
