"""Huge, negative, NaN/inf, long and deeply nested values at every route that reads numbers:
always a 4xx naming what was wrong, never a 5xx."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from web_support import TestClient

from clusterscout.app.fields import OFFER_FILTERS, PLAN_FIELDS, Kind, Use

HOSTILE_TEXT = (
    "9" * 400,
    "-" + "9" * 400,
    "-1",
    "nan",
    "NaN",
    "inf",
    "-Infinity",
    "1e309",
    "1" * 41,
    "0x10",
    "1_000",
    "١٢",  # Arabic-Indic digits: int() reads them, a person would not
)
HOSTILE_JSON = (
    "9" * 400,
    "-" + "9" * 400,
    "-1",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e309",
    '"' + "9" * 400 + '"',
    '"nan"',
    '"' + "1" * 5000 + '"',
)
NUMERIC = {Kind.NUMBER, Kind.INTEGER}
FILTER_NUMBERS = [f.name for f in OFFER_FILTERS if f.kind in NUMERIC]
PLAN_NUMBERS = [f.name for f in PLAN_FIELDS if f.kind in NUMERIC and f.used_as(Use.PLAN_INPUT)]
QUERY_ROUTES = (
    "/api/v1/offers",
    "/api/v1/offers.csv",
    "/en/offers/",
    "/en/multi-node/",
)
PLAN = {"model": "7B", "tokens": 1e10, "max_nodes": 4}
HYPOTHESIS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def _refused(r: Any, field: str | None = None) -> None:
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    if r.headers.get("content-type", "").startswith("application/json"):
        error = r.json()["error"]
        assert error["message"]
        if field is not None:
            assert error["field"] == field, error


@HYPOTHESIS
@given(
    route=st.sampled_from(QUERY_ROUTES),
    name=st.sampled_from([*FILTER_NUMBERS, "limit", "offset"]),
    value=st.sampled_from(HOSTILE_TEXT),
)
def test_hostile_filter_numbers_are_4xx(
    client: TestClient, route: str, name: str, value: str
) -> None:
    r = client.get(route, params={name: value})
    assert 400 <= r.status_code < 500, (route, name, value, r.status_code)
    _refused(r, name if route.startswith("/api/") else None)


@HYPOTHESIS
@given(name=st.sampled_from(PLAN_NUMBERS), value=st.sampled_from(HOSTILE_JSON))
def test_hostile_plan_numbers_are_400_naming_the_field(
    client: TestClient, name: str, value: str
) -> None:
    body = json.dumps(PLAN)[:-1] + f', "{name}": {value}}}'
    r = client.post("/api/v1/plan", content=body, headers={"content-type": "application/json"})
    _refused(r, name)


@HYPOTHESIS
@given(name=st.sampled_from(PLAN_NUMBERS), value=st.sampled_from(HOSTILE_TEXT))
def test_hostile_plan_form_numbers_are_4xx(client: TestClient, name: str, value: str) -> None:
    # A preset model sets params itself (the form then drops params): not both.
    query = (
        {"tokens": "1e10", name: value}
        if name == "params"
        else {"model": "7B", "tokens": "1e10", name: value}
    )
    _refused(client.get("/en/plan/", params=query, follow_redirects=True))


@HYPOTHESIS
@given(
    path=st.sampled_from(
        [
            ("cluster", "gpus_per_node"),
            ("cluster", "nodes"),
            ("cluster", "per_node_gbps"),
            ("workload", "message_bytes"),
        ]
    ),
    value=st.sampled_from(HOSTILE_JSON),
)
def test_hostile_estimate_numbers_are_400(
    client: TestClient, path: tuple[str, str], value: str
) -> None:
    marker = "__HOSTILE__"
    body: dict[str, Any] = {
        "cluster": {
            "gpu": "H100-SXM-80GB",
            "gpus_per_node": 8,
            "nodes": 2,
            "fabric": "infiniband",
            "per_node_gbps": 3200,
        },
        "workload": {"kind": "collective", "op": "all_reduce", "message_bytes": 1048576},
    }
    body[path[0]][path[1]] = marker
    text = json.dumps(body).replace(f'"{marker}"', value)
    r = client.post("/api/v1/estimate", content=text, headers={"content-type": "application/json"})
    _refused(r)


@HYPOTHESIS
@given(
    key=st.sampled_from(["nodes", "plan_option", "layout"]),
    value=st.sampled_from(HOSTILE_JSON),
)
def test_hostile_launch_numbers_are_4xx(client: TestClient, key: str, value: str) -> None:
    offer = client.get("/api/v1/offers", params={"limit": 1}).json()["data"][0]["id"]
    if key == "layout":
        text = f'{{"offer_id": "{offer}", "nodes": 2, "layout": {{"tp": {value}}}}}'
    elif key == "plan_option":
        text = f'{{"offer_id": "{offer}", "plan": {json.dumps(PLAN)}, "plan_option": {value}}}'
    else:
        text = f'{{"offer_id": "{offer}", "{key}": {value}}}'
    r = client.post("/api/v1/launch", content=text, headers={"content-type": "application/json"})
    _refused(r)


@pytest.mark.parametrize("name", ["nodes", "tp", "global_batch"])
@pytest.mark.parametrize("value", ["9" * 400, "-1", "nan", "1e309"])
def test_hostile_launch_file_numbers_are_4xx(client: TestClient, name: str, value: str) -> None:
    offer = client.get("/api/v1/offers", params={"limit": 1}).json()["data"][0]["id"]
    query = {"nodes": "2", "tp": "1", "pp": "1", "dp": "8", name: value}
    _refused(client.get(f"/api/v1/launch/{offer}/slurm", params=query))


@pytest.mark.parametrize("value", ["9" * 400, "-1", "nan", "1e309", "1" * 41])
@pytest.mark.parametrize("name", ["gpus", "months"])
def test_hostile_quote_numbers_are_4xx(client: TestClient, name: str, value: str) -> None:
    _refused(client.get("/api/v1/quote", params={"gpu": "H100", name: value}))


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("route", "template", "fields"),
    [
        # Even under a key no route knows: the depth is checked before the body is copied.
        ("/api/v1/plan", '{{"model": "7B", "tokens": 1e10, "x": {}}}', {"body"}),
        ("/api/v1/estimate", '{{"cluster": {}, "workload": {{}}}}', {"body", "cluster"}),
        # A launch's plan goes to the plan workers: its depth is checked before it is sent.
        ("/api/v1/launch", '{{"offer_id": "OFFER", "plan": {}, "plan_option": 1}}', {"body"}),
    ],
)
@pytest.mark.parametrize("depth", [20, 600, 5000])
def test_deep_bodies_are_400_before_anything_reads_them(
    client: TestClient, route: str, template: str, fields: set[str], depth: int
) -> None:
    offer = client.get("/api/v1/offers", params={"limit": 1}).json()["data"][0]["id"]
    text = template.format(_nested(depth)).replace("OFFER", offer)
    r = client.post(route, content=text, headers={"content-type": "application/json"})
    _refused(r)
    assert r.json()["error"]["field"] in fields, r.json()


def test_a_body_with_too_many_values_is_400(client: TestClient) -> None:
    text = json.dumps({**PLAN, "x": list(range(20_000))})
    r = client.post("/api/v1/plan", content=text, headers={"content-type": "application/json"})
    _refused(r, "body")
    assert "more than 10,000 values" in r.json()["error"]["message"]
