"""Plans computed in a worker process answer exactly as plans computed in the server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from web_support import TestClient

from clusterscout.app.database import open_snapshot
from clusterscout.app.plan_workers import PlanWorkers, plan_on
from clusterscout.settings import Settings
from clusterscout.web.app import create_app

BODIES: list[dict[str, Any]] = [
    {"model": "70B", "tokens": 1e11, "max_nodes": 8},
    {"model": "7B", "tokens": 1e10, "max_nodes": 4, "gpu": "H100"},
]


@pytest.fixture(scope="module")
def with_workers(fixture_settings: Settings) -> Iterator[TestClient]:
    app = create_app(fixture_settings.model_copy(update={"plan_workers": 1}))
    assert isinstance(app.state.cs.plan_runner, PlanWorkers)
    # As a context manager the client runs the app's shutdown, which stops the worker.
    with TestClient(app) as client:
        yield client


@pytest.mark.parametrize("body", BODIES)
def test_a_worker_plans_as_the_server_does(
    with_workers: TestClient, client: TestClient, body: dict[str, Any]
) -> None:
    here = client.post("/api/v1/plan", json=body)
    there = with_workers.post("/api/v1/plan", json=body)
    assert there.status_code == here.status_code == 200
    assert there.json() == here.json()


def test_bad_input_in_a_worker_is_the_same_clear_error(
    with_workers: TestClient, client: TestClient
) -> None:
    body = {"model": "70X", "tokens": 1e11}
    here = client.post("/api/v1/plan", json=body)
    there = with_workers.post("/api/v1/plan", json=body)
    assert there.status_code == here.status_code == 400
    assert there.json() == here.json()
    assert there.json()["error"]["field"] == "model"


def test_the_plan_page_shows_a_plan_made_by_a_worker(
    with_workers: TestClient, client: TestClient
) -> None:
    url = "/en/plan/?max_nodes=8&model=70B&tokens=1e11"
    there = with_workers.get(url)
    assert there.status_code == 200
    assert '<table class="plan-options">' in there.text
    # The same ranked options, costs included, as a server planning on its own.
    table = re.compile(r'<table class="plan-options">.*?</table>', re.S)
    ours, theirs = table.search(there.text), table.search(client.get(url).text)
    assert ours and theirs
    assert ours.group(0) == theirs.group(0)


def test_a_worker_answers_with_the_version_it_read(fixture_settings: Settings) -> None:
    workers = PlanWorkers(fixture_settings.resolved_database_url(), 1)
    try:
        engine = create_app(fixture_settings).state.cs.engine
        snap = open_snapshot(engine)
        try:
            version, from_worker = workers.submit(BODIES[0]).result(timeout=120)
            assert version == snap.data_version
            assert (version, from_worker) == plan_on(engine, BODIES[0])
        finally:
            snap.close()
            engine.dispose()
    finally:
        workers.close()
