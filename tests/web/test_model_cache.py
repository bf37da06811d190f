"""Plans and estimates: the same inputs on the same data version are computed once."""

from __future__ import annotations

from typing import Any

import pytest
from web_support import TestClient

from clusterscout.app import estimates, plans
from clusterscout.web.model_api import PLAN_EXAMPLE, SCENARIO_EXAMPLE


@pytest.mark.parametrize(
    ("path", "module", "name", "body"),
    [
        ("/api/v1/plan", plans, "run_plan", PLAN_EXAMPLE),
        ("/api/v1/estimate", estimates, "run_estimate", SCENARIO_EXAMPLE),
    ],
)
def test_the_same_body_is_computed_once(
    client: TestClient,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    module: Any,
    name: str,
    body: dict[str, Any],
) -> None:
    real = getattr(module, name)
    calls: list[object] = []

    def counting(conn: object, given: object) -> object:
        calls.append(given)
        return real(conn, given)

    monkeypatch.setattr(module, name, counting)

    def variant(n: int) -> dict[str, Any]:
        # Values no other test asks for, so the first answer is computed here.
        if "cluster" in body:
            return {**body, "cluster": {**body["cluster"], "nodes": n}}
        return {**body, "max_nodes": n}

    first = client.post(path, json=variant(11))
    assert first.status_code == 200, first.text
    assert len(calls) == 1
    # The same JSON with its keys in another order is the same question.
    again = client.post(path, json=dict(reversed(list(variant(11).items()))))
    assert again.json() == first.json()
    assert len(calls) == 1
    other = client.post(path, json=variant(5))
    assert other.status_code == 200
    assert len(calls) == 2


def test_a_refused_body_is_not_remembered(client: TestClient) -> None:
    for _ in range(2):
        r = client.post("/api/v1/plan", json={"model": "70B"})
        assert r.status_code == 400
        assert r.json()["error"]["field"] == "tokens"
