"""POST /api/v1/plan under load: surplus plans are turned away at once, with Retry-After;
plans in the queue hold no database connection; cheap requests never wait behind them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from fastapi import FastAPI
from web_support import TestClient

from clusterscout.app.plan_queue import Outcome, PlanQueue
from clusterscout.app.plan_workers import plan_on
from clusterscout.settings import Settings
from clusterscout.web.app import create_app


class HeldRunner:
    """Real plans on the app's database, held back until the test lets them go."""

    slots = 1

    def __init__(self, app: FastAPI) -> None:
        self.go = threading.Event()
        self.started = threading.Semaphore(0)
        self._engine = app.state.cs.engine
        self._pool = ThreadPoolExecutor(max_workers=1)

    def _run(self, body: Any) -> Outcome:
        self.started.release()
        self.go.wait(timeout=60)
        return plan_on(self._engine, body)

    def submit(self, body: Any) -> Future[Outcome]:
        return self._pool.submit(self._run, body)


@pytest.fixture
def held(fixture_settings: Settings) -> Iterator[tuple[TestClient, HeldRunner, FastAPI]]:
    app = create_app(fixture_settings)
    runner = HeldRunner(app)
    app.state.cs.plans = PlanQueue(runner, capacity=2, per_client=2, deadline_s=30)
    with TestClient(app, follow_redirects=False) as client:
        yield client, runner, app
    runner.go.set()


def _body(n: int) -> dict[str, Any]:
    return {"model": "7B", "tokens": 1e10 + n, "max_nodes": 4}


def test_surplus_plans_get_503_or_429_with_retry_after_while_cheap_pages_answer(
    held: tuple[TestClient, HeldRunner, FastAPI],
) -> None:
    client, runner, app = held
    pool = ThreadPoolExecutor(max_workers=4)
    try:
        first = pool.submit(client.post, "/api/v1/plan", json=_body(1))
        assert runner.started.acquire(timeout=30)
        # One client's share is two plans: the third from the same address is 429.
        second = pool.submit(client.post, "/api/v1/plan", json=_body(2))
        for _ in range(300):  # until the second is admitted (it waits in the queue)
            if app.state.cs.plans.in_flight == 2:
                break
            threading.Event().wait(0.01)
        assert app.state.cs.plans.in_flight == 2
        third = client.post("/api/v1/plan", json=_body(3))
        assert third.status_code == 503  # the queue (capacity 2) is full
        assert third.json()["error"]["code"] == "busy"
        assert int(third.headers["retry-after"]) >= 1
        # Plans waiting in the queue hold no database connection.
        assert app.state.cs.engine.pool.checkedout() == 0
        # Cheap requests are not behind the plans.
        assert client.get("/healthz").status_code == 200
        assert client.get("/en/multi-node/").status_code == 200
        assert client.get("/api/v1/offers?limit=1").status_code == 200
        runner.go.set()
        assert first.result(timeout=60).status_code == 200
        assert second.result(timeout=60).status_code == 200
    finally:
        runner.go.set()
        pool.shutdown(wait=True)


def test_a_client_past_its_share_gets_429(
    held: tuple[TestClient, HeldRunner, FastAPI],
) -> None:
    client, runner, app = held
    app.state.cs.plans.per_client = 1
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        first = pool.submit(client.post, "/api/v1/plan", json=_body(4))
        assert runner.started.acquire(timeout=30)
        again = client.post("/api/v1/plan", json=_body(5))
        assert again.status_code == 429
        assert again.json()["error"]["code"] == "too_many_requests"
        assert int(again.headers["retry-after"]) >= 1
        runner.go.set()
        assert first.result(timeout=60).status_code == 200
    finally:
        runner.go.set()
        pool.shutdown(wait=True)


def test_identical_plans_share_one_computation(
    held: tuple[TestClient, HeldRunner, FastAPI],
) -> None:
    client, runner, app = held
    app.state.cs.plans.per_client = 1
    pool = ThreadPoolExecutor(max_workers=3)
    try:
        first = pool.submit(client.post, "/api/v1/plan", json=_body(6))
        assert runner.started.acquire(timeout=30)
        # The same body again is not a second plan: it waits for the first, not refused.
        same = pool.submit(client.post, "/api/v1/plan", json=_body(6))
        threading.Event().wait(0.2)
        assert app.state.cs.plans.in_flight == 1
        runner.go.set()
        answers = [first.result(timeout=60), same.result(timeout=60)]
        assert [a.status_code for a in answers] == [200, 200]
        assert answers[0].json() == answers[1].json()
    finally:
        runner.go.set()
        pool.shutdown(wait=True)


def test_the_plan_page_says_busy_when_the_queue_is_full(
    held: tuple[TestClient, HeldRunner, FastAPI],
) -> None:
    client, _runner, app = held
    app.state.cs.plans.capacity = 0
    page = client.get("/en/plan/?max_nodes=4&model=7B&tokens=12345678901")
    assert page.status_code == 503
    assert "busy" in page.text.lower()


def test_a_cached_plan_is_answered_even_when_the_queue_is_full(
    held: tuple[TestClient, HeldRunner, FastAPI],
) -> None:
    client, runner, app = held
    runner.go.set()
    first = client.post("/api/v1/plan", json=_body(7))
    assert first.status_code == 200
    app.state.cs.plans.capacity = 0  # nothing more is admitted
    again = client.post("/api/v1/plan", json=_body(7))
    assert again.status_code == 200
    assert again.json() == first.json()
    other = client.post("/api/v1/plan", json=_body(8))
    assert other.status_code == 503
    assert other.headers["retry-after"]
