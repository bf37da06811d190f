"""Hostile input found by QA: every case answers 4xx with the contract's error shape, never 5xx."""

from __future__ import annotations

from typing import Any

import pytest
from web_support import TestClient

TRAINING: dict[str, Any] = {
    "cluster": {
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "nodes": 64,
        "fabric": "infiniband",
        "per_node_gbps": 3200,
    },
    "workload": {
        "kind": "training",
        "model": {"params": 70.6e9, "layers": 1e308},
        "seq_len": 8192,
        "global_batch": 1024,
    },
}
PLAN = {"model": "70B", "tokens": 1e11, "max_nodes": 16}


def _error(r: Any, status: int = 400) -> dict[str, Any]:
    assert r.status_code == status, r.text
    error: dict[str, Any] = r.json()["error"]
    assert set(error) == {"code", "message", "field"}
    return error


def test_estimate_huge_model_dimension_is_400_naming_it(client: TestClient) -> None:
    error = _error(client.post("/api/v1/estimate", json=TRAINING))
    assert error["field"] == "workload.model.layers"
    assert "at most" in error["message"]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"batch_tokens": 1e308}, "batch_tokens"),
        ({"seq_len": 10**9}, "seq_len"),
        ({"max_nodes": 10**20}, "max_nodes"),
        ({"gpu": "TPU"}, "gpu"),
    ],
)
def test_plan_out_of_range_is_400_naming_the_field(
    client: TestClient, extra: dict[str, Any], field: str
) -> None:
    error = _error(client.post("/api/v1/plan", json={**PLAN, **extra}))
    assert error["field"] == field


@pytest.mark.parametrize(
    "query",
    ["min_nodes=99999999999999999999999", "min_gbps=1e308", "max_price=1e300"],
)
def test_huge_filter_values_are_400(client: TestClient, query: str) -> None:
    for path in ("/api/v1/offers", "/api/v1/offers.csv"):
        error = _error(client.get(f"{path}?{query}"))
        assert error["code"] == "invalid_filter"
        assert error["field"] == query.split("=", maxsplit=1)[0]
    for path in ("/en/offers/", "/en/multi-node/"):
        assert client.get(f"{path}?{query}").status_code == 400


def test_plan_page_marks_the_gpu_field(client: TestClient) -> None:
    r = client.get("/en/plan/?gpu=TPU&model=7B&tokens=1e11")
    assert r.status_code == 400
    assert 'id="err-gpu"' in r.text


def test_plan_chart_with_huge_batch_is_not_a_5xx(client: TestClient) -> None:
    r = client.get("/en/plan/chart/scaling.svg?batch_tokens=1e308&model=7B&tokens=1e11")
    assert 400 <= r.status_code < 500


@pytest.mark.parametrize(
    "path", ["/healthz", "/en/", "/en/offers/", "/api/v1/providers", "/api/v1/offers.csv"]
)
def test_head_answers_like_get_without_a_body(client: TestClient, path: str) -> None:
    get = client.get(path)
    head = client.head(path)
    assert head.status_code == get.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    assert head.headers["content-type"] == get.headers["content-type"]


def test_head_of_a_bad_request_is_still_4xx(client: TestClient) -> None:
    assert client.head("/api/v1/offers?min_nodes=x").status_code == 400
    assert client.head("/api/v1/nope").status_code == 404


def test_very_long_region_is_400_not_500(client: TestClient) -> None:
    error = _error(client.get("/api/v1/offers?region=" + "a" * 60_000))
    assert error["field"] == "region"
    assert client.get("/en/offers/?region=" + "a" * 60_000).status_code == 400


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"model": "\xff\xfe"}', "not UTF-8"),
    ],
)
@pytest.mark.parametrize("path", ["/api/v1/estimate", "/api/v1/plan"])
def test_unreadable_json_body_is_invalid_json(
    client: TestClient, path: str, body: bytes, why: str
) -> None:
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    error = _error(r)
    assert error["code"] == "invalid_json"
    assert error["field"] == "body"
    assert why in error["message"]
