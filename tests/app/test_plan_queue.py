"""The plan queue: a bound on plans in flight, a share per client and a deadline per plan."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import Engine

from clusterscout.app.database import engine_for_url
from clusterscout.app.errors import ClassifiedError, Failure, FailureKind
from clusterscout.app.plan_queue import Outcome, PlanQueue, result_of, run_sync
from clusterscout.app.plan_workers import LocalPlanner, plan_on
from clusterscout.settings import Settings

BODY: dict[str, Any] = {"model": "7B", "tokens": 1e10, "max_nodes": 4}


class HeldRunner:
    """Real plans on the fixture database, each held back until the test lets it go."""

    def __init__(self, engine: Engine, slots: int = 1) -> None:
        self.slots = slots
        self.go = threading.Event()
        self.started = threading.Semaphore(0)
        self._engine = engine
        self._pool = ThreadPoolExecutor(max_workers=slots)

    def _run(self, body: Any) -> Outcome:
        self.started.release()
        self.go.wait(timeout=60)
        return plan_on(self._engine, body)

    def submit(self, body: Any) -> Future[Outcome]:
        return self._pool.submit(self._run, body)

    def close(self) -> None:
        self.go.set()
        self._pool.shutdown(wait=True)


@pytest.fixture
def engine(fixture_settings: Settings) -> Iterator[Engine]:
    eng = engine_for_url(fixture_settings.resolved_database_url())
    yield eng
    eng.dispose()


@pytest.fixture
def runner(engine: Engine) -> Iterator[HeldRunner]:
    held = HeldRunner(engine)
    yield held
    held.close()


def _refusal(excinfo: pytest.ExceptionInfo[ClassifiedError]) -> Failure:
    return excinfo.value.failure


def test_past_its_capacity_the_queue_turns_plans_away_at_once(runner: HeldRunner) -> None:
    queue = PlanQueue(runner, capacity=2, per_client=0, deadline_s=60)
    first, second = queue.start(BODY, "a"), queue.start(BODY, "a")
    assert queue.in_flight == 2
    with pytest.raises(ClassifiedError) as refused:
        queue.start(BODY, "b")
    failure = _refusal(refused)
    assert failure.kind is FailureKind.BUSY
    assert failure.http_status == 503
    assert failure.retry_after_s is not None
    assert failure.retry_after_s >= 1
    runner.go.set()
    for admission in (first, second):
        _version, found = queue.wait(admission)
        assert not isinstance(found, Failure)
        assert found.needs_multi_node in {True, False}
    # Slots come back when plans end, and the next plan is admitted.
    assert queue.in_flight == 0
    assert result_of(queue.wait(queue.start(BODY, "b"))).options


def test_one_client_gets_only_its_share(runner: HeldRunner) -> None:
    queue = PlanQueue(runner, capacity=10, per_client=1, deadline_s=60)
    queue.start(BODY, "10.0.0.1")
    with pytest.raises(ClassifiedError) as refused:
        queue.start(BODY, "10.0.0.1")
    assert _refusal(refused).kind is FailureKind.RATE_LIMITED
    assert _refusal(refused).http_status == 429
    assert "1 plans per client" in _refusal(refused).message
    queue.start(BODY, "10.0.0.2")  # another client is still served
    assert queue.in_flight == 2


def test_a_plan_past_its_deadline_is_answered_busy_and_keeps_its_slot(
    runner: HeldRunner,
) -> None:
    queue = PlanQueue(runner, capacity=1, per_client=0, deadline_s=0.05)
    admission = queue.start(BODY, "a")
    with pytest.raises(ClassifiedError) as late:
        queue.wait(admission)
    assert _refusal(late).kind is FailureKind.BUSY
    assert "did not finish within 0.05 s" in _refusal(late).message
    # The plan still runs in its worker: the bound is on work, so its slot is still taken.
    assert runner.started.acquire(timeout=10)
    assert queue.in_flight == 1
    with pytest.raises(ClassifiedError):
        queue.start(BODY, "b")
    runner.go.set()
    admission.future.result(timeout=60)
    assert queue.in_flight == 0


def test_a_queued_plan_past_its_deadline_never_runs(runner: HeldRunner) -> None:
    queue = PlanQueue(runner, capacity=2, per_client=0, deadline_s=60)
    running = queue.start(BODY, "a")
    assert runner.started.acquire(timeout=10)
    waiting = queue.start(BODY, "b")  # the one slot of the runner is taken
    waiting = dataclasses.replace(waiting, deadline=time.monotonic() + 0.05)
    with pytest.raises(ClassifiedError):
        queue.wait(waiting)
    assert waiting.future.cancelled()
    assert queue.in_flight == 1
    runner.go.set()
    running.future.result(timeout=60)
    assert queue.in_flight == 0


def test_waiting_on_the_event_loop_has_the_same_deadline(runner: HeldRunner) -> None:
    queue = PlanQueue(runner, capacity=1, per_client=0, deadline_s=0.05)

    async def late() -> None:
        await queue.wait_async(queue.start(BODY, "a"))

    with pytest.raises(ClassifiedError) as refused:
        asyncio.run(late())
    assert _refusal(refused).kind is FailureKind.BUSY
    runner.go.set()

    async def in_time() -> Outcome:
        queue.deadline_s = 60
        for _ in range(200):  # the first plan still holds the one slot for a moment
            try:
                return await queue.wait_async(queue.start(BODY, "a"))
            except ClassifiedError:
                await asyncio.sleep(0.05)
        raise AssertionError("the slot never came back")

    version, found = asyncio.run(in_time())
    assert not isinstance(found, Failure)
    assert version


def test_a_failure_in_the_runner_is_raised_as_the_user_sees_it(engine: Engine) -> None:
    planner = LocalPlanner(engine, 1)
    try:
        queue = PlanQueue(planner, capacity=1, per_client=1, deadline_s=60)
        with pytest.raises(ClassifiedError) as bad:
            run_sync(queue, {"model": "70X", "tokens": 1e11}, "a")
        assert bad.value.failure.field == "model"
        assert bad.value.failure.http_status == 400
        assert queue.in_flight == 0
    finally:
        planner.close()


class StoppedRunner:
    """A runner that refuses work, as a stopped executor does."""

    slots = 1

    def submit(self, _body: Any) -> Future[Outcome]:
        raise RuntimeError("cannot schedule new futures after shutdown")


def test_a_runner_that_cannot_start_gives_the_slot_back() -> None:
    queue = PlanQueue(StoppedRunner(), capacity=1, per_client=1, deadline_s=60)
    with pytest.raises(RuntimeError):
        queue.start(BODY, "a")
    assert queue.in_flight == 0


def test_local_threads_start_again_after_close(engine: Engine) -> None:
    planner = LocalPlanner(engine, 1)
    planner.close()  # before any use: nothing to stop
    first = planner.submit(BODY).result(timeout=60)
    planner.close()
    again = planner.submit(BODY).result(timeout=60)
    planner.close()
    assert first == again


def test_retry_after_grows_with_the_work_in_flight(runner: HeldRunner) -> None:
    queue = PlanQueue(runner, capacity=50, per_client=0, deadline_s=60)
    empty = queue.retry_after_s()
    for _ in range(20):
        queue.start(BODY, "a")
    assert queue.retry_after_s() > empty


def test_a_plan_that_would_wait_past_its_deadline_is_refused_at_once(
    runner: HeldRunner,
) -> None:
    # Plans are assumed to take FIRST_GUESS_S (2 s) until one has finished: with one slot
    # taken, a second plan would wait about 4 s, past this queue's 3 s deadline.
    queue = PlanQueue(runner, capacity=10, per_client=0, deadline_s=3)
    queue.start(BODY, "a")
    with pytest.raises(ClassifiedError) as refused:
        queue.start(BODY, "b")
    assert _refusal(refused).kind is FailureKind.BUSY
    assert "longer than this plan may wait" in _refusal(refused).message
    assert queue.in_flight == 1
