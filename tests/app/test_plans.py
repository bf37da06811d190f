"""The plan and estimate services over the fixture catalog: answers, exclusions, errors."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from clusterscout.app.database import build
from clusterscout.app.estimates import require_finite, run_estimate
from clusterscout.app.inputs import parse_plan
from clusterscout.app.plans import plan_offer, run_plan
from clusterscout.catalog.calibration import CalibrationError
from clusterscout.domain.errors import InputError
from clusterscout.model.planner.request import PlanRequest
from clusterscout.store.db import make_engine
from clusterscout.web.schemas import estimate_json, plan_json

runner = CliRunner()


COLLECTIVE = {
    "cluster": {
        "gpu": "H100",
        "gpus_per_node": 8,
        "nodes": 4,
        "fabric": "infiniband",
        "per_node_gbps": 3200,
        "gpudirect_rdma": True,
    },
    "workload": {"kind": "collective", "op": "all_reduce", "message_bytes": 4294967296},
}


def plan_request(body: Any) -> PlanRequest:
    return parse_plan(body)[0]


def test_estimate_collective_resolves_aliases(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        result = estimate_json(run_estimate(conn, COLLECTIVE))
    assert result["gpu"] == "H100-SXM-80GB"
    assert result["kind"] == "collective"
    # nccl-tests definition for all-reduce: busbw = algbw * 2(n-1)/n with n = 32 ranks.
    assert result["busbw_gbs"] == pytest.approx(result["algbw_gbs"] * 2 * 31 / 32)
    assert result["algbw_gbs"] == pytest.approx(4294967296 / 1e9 / result["time_s"])


def test_estimate_rejects_bad_scenarios_naming_the_field(fixture_engine: Engine) -> None:
    bad = json.loads(json.dumps(COLLECTIVE))
    bad["cluster"]["nodes"] = 0
    with fixture_engine.connect() as conn, pytest.raises(InputError) as info:
        run_estimate(conn, bad)
    assert info.value.field == "cluster.nodes"
    bad["cluster"]["nodes"] = 2
    bad["cluster"]["gpu"] = "Z9"
    with fixture_engine.connect() as conn, pytest.raises(InputError) as info:
        run_estimate(conn, bad)
    assert info.value.field == "cluster.gpu"
    with fixture_engine.connect() as conn, pytest.raises(InputError):
        run_estimate(conn, [1, 2])


def test_plan_ranks_priced_offers_and_explains_exclusions(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        result = plan_json(run_plan(conn, {"model": "70B", "tokens": 5e10}))
        h100_only = plan_json(run_plan(conn, {"model": "70B", "tokens": 5e10, "gpu": "H100"}))
        longer = plan_json(run_plan(conn, {"model": "70B", "tokens": 2e11}))
    # ~16 bytes per parameter of model state: 70B needs more than one 8x80 GB node, while
    # eight 192 GB MI300X hold it, so the verdict depends on the GPUs considered.
    assert h100_only["needs_multi_node"] is True
    assert h100_only["min_gpus_to_fit"] > 8
    verdicts = {v["gpu"]: v["one_node_fits"] for v in result["per_gpu"]}
    assert verdicts["H100-SXM-80GB"] is False
    assert verdicts["MI300X-192GB"] is True
    assert result["needs_multi_node"] is False
    assert result["deadline_is_default"] is True
    assert result["deadline_hours"] == 90 * 24
    # Four times the tokens: one MI300X node still holds the job, but not within 90 days.
    mi300x = next(v for v in longer["per_gpu"] if v["gpu"] == "MI300X-192GB")
    assert mi300x["one_node_fits"] is True
    assert mi300x["one_node_time_hours"] > 90 * 24
    assert longer["needs_multi_node"] is True
    assert longer["nodes_for_deadline"] is not None and longer["nodes_for_deadline"] > 1
    offer_ids = {o["offer"]["offer_id"] for o in result["options"]}
    assert offer_ids <= {"alpha-h100-ib", "alpha-a100-ib", "beta-mi300x-roce"}
    assert offer_ids
    excluded = {e["offer"]["offer_id"]: e["reason"] for e in result["excluded"]}
    # An unpriced offer stays in the answer, priced on request, with its GPU-hours.
    assert "beta-h100-eth" not in excluded
    on_request = {o["offer"]["id"]: o for o in result["on_request"]}
    assert on_request["beta-h100-eth"]["price"] == "on request"
    assert on_request["beta-h100-eth"]["gpu_hours"] > 0
    mi300x = next(o for o in result["options"] if o["offer"]["offer_id"] == "beta-mi300x-roce")
    assert mi300x["offer"]["minimum_hours"] == 4380
    costs = [o["cost_usd"] for o in result["options"]]
    assert costs == sorted(costs)
    for option in result["options"]:
        gpus = option["nodes"] * option["offer"]["gpus_per_node"]
        price = option["offer"]["usd_per_gpu_hour"]
        # A run shorter than the offer's minimum term pays the minimum (beta: 6 months).
        billed = max(option["time_hours"], option["offer"]["minimum_hours"] or 0)
        assert option["cost_usd"] == pytest.approx(price * gpus * billed)
        assert 0 < option["scaling_efficiency"] <= 1


def test_plan_prefers_on_demand_price_over_cheaper_reserved() -> None:
    record = {
        "id": "x-1",
        "provider": "x",
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "fabric": "infiniband",
        "per_node_gbps": 3200.0,
        "gpudirect_rdma": True,
        "max_nodes": 8,
        "max_nodes_by_quote": 32,
        "prices": [
            {"tier": "reserved", "usd_per_gpu_hour": 2.0},
            {"tier": "spot", "usd_per_gpu_hour": 1.0},
            {"tier": "on_demand", "usd_per_gpu_hour": 3.0},
        ],
    }
    offer = plan_offer(record)
    assert (offer.usd_per_gpu_hour, offer.price_tier, offer.max_nodes) == (3.0, "on_demand", 32)
    spot = plan_offer(record, "spot")  # a plan request that names a tier pays that tier
    assert (spot.usd_per_gpu_hour, spot.price_tier) == (1.0, "spot")
    assert plan_offer(record, "capacity_block").usd_per_gpu_hour is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "70B", "tokens": 1e12, "colour": 1}, "colour"),
        ({"model": "70B", "tokens": "lots"}, "tokens"),
        ({"model": "70B", "tokens": 1e12, "precision": "fp4"}, "precision"),
        ({"model": "70B", "tokens": 1e12, "max_nodes": 2.5}, "max_nodes"),
        ({"model": 70, "tokens": 1e12}, "model"),
    ],
)
def test_plan_request_errors_name_the_field(body: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        plan_request(body)
    assert info.value.field == field


def test_plan_filter_errors_name_the_field(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn, pytest.raises(InputError) as info:
        run_plan(conn, {"model": "7B", "tokens": 1e9, "fabric": "carrier-pigeon"})
    assert info.value.field == "fabric"


def test_database_without_calibration_says_how_to_fix(
    tmp_path: Path, fixture_data_dir: Path
) -> None:
    import shutil

    data = tmp_path / "data"
    shutil.copytree(fixture_data_dir, data)
    (data / "calibration.toml").unlink()
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    build(engine, data)
    with engine.connect() as conn, pytest.raises(CalibrationError, match="rebuild"):
        run_plan(conn, {"model": "7B", "tokens": 1e9})
    engine.dispose()


def test_offer_with_unknown_gpus_per_node_is_excluded_not_guessed(
    fixture_engine: Engine,
) -> None:
    from clusterscout.app.estimates import stored_calibration
    from clusterscout.app.offers import gpu_specs
    from clusterscout.model.planner.plan import plan

    record = {
        "id": "x-h100",
        "provider": "x",
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": None,
        "fabric": "infiniband",
        "per_node_gbps": 3200.0,
        "gpudirect_rdma": True,
        "max_nodes": 8,
        "prices": [{"tier": "on_demand", "usd_per_gpu_hour": 3.0}],
    }
    offer = plan_offer(record)
    assert offer.gpus_per_node is None
    with fixture_engine.connect() as conn:
        result = plan(
            plan_request({"model": "7B", "tokens": 1e9}),
            [offer],
            gpu_specs(conn),
            stored_calibration(conn),
        )
    assert result.options == ()
    assert [(e.offer.offer_id, e.reason) for e in result.excluded] == [
        ("x-h100", "unknown GPUs per node")
    ]


def test_verdict_only_covers_gpus_that_are_rented_as_clusters(
    tmp_path: Path, fixture_data_dir: Path
) -> None:
    import shutil

    data = tmp_path / "data"
    shutil.copytree(fixture_data_dir, data)
    gpus = data / "gpus.toml"
    gpus.write_text(
        gpus.read_text()
        + '\n[[gpus]]\nname = "B300-SXM-288GB"\nvendor = "nvidia"\nmemory_gib = 268.2\n'
        'bf16_dense_tflops = 2250\nsources = ["h100-sheet"]\n'
    )
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    build(engine, data)
    with engine.connect() as conn:
        result = plan_json(run_plan(conn, {"model": "70B", "tokens": 1e11}))
    engine.dispose()
    # A 288 GB GPU nobody rents as a cluster must not turn the verdict into "one node is enough".
    assert {v["gpu"] for v in result["per_gpu"]} == {
        "H100-SXM-80GB",
        "A100-SXM-80GB",
        "MI300X-192GB",
    }


def test_require_finite_refuses_nan_and_infinity_naming_the_output() -> None:
    require_finite({"a": 1.0, "b": [0.5, {"c": 2}], "d": None, "e": "x"}, "scenario")
    with pytest.raises(InputError) as info:
        require_finite({"breakdown_s": {"compute": float("inf")}}, "scenario")
    assert info.value.field == "scenario"
    assert "breakdown_s.compute is not finite" in info.value.message
    with pytest.raises(InputError, match=r"options\[1\] is not finite"):
        require_finite({"options": [1.0, float("nan")]}, "plan")
    with pytest.raises(InputError, match="result is not finite"):
        require_finite(float("nan"), "plan")


@dataclass(frozen=True)
class _Holder:
    value: Any
    items: tuple[Any, ...] = ()


def _floats(data: Any) -> list[float]:
    """Every float in ``data``, found by a walk independent of the one under test."""
    if isinstance(data, float):
        return [data]
    if isinstance(data, _Holder):
        return _floats(data.value) + _floats(data.items)
    if isinstance(data, dict):
        return [x for v in data.values() for x in _floats(v)]
    if isinstance(data, list | tuple):
        return [x for v in data for x in _floats(v)]
    return []


_values = st.recursive(
    st.floats() | st.integers() | st.none() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text("abc", min_size=1, max_size=2), inner, max_size=3)
        | st.builds(_Holder, inner, st.tuples(inner))
    ),
    max_leaves=12,
)


# Building nested holders is slow on a loaded machine; the property, not the speed, is tested.
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(_values)
def test_require_finite_refuses_exactly_the_answers_holding_a_non_finite_float(data: Any) -> None:
    bad = [x for x in _floats(data) if not math.isfinite(x)]
    if not bad:
        require_finite(data, "plan")
        return
    with pytest.raises(InputError, match="is not finite") as info:
        require_finite(data, "plan")
    assert info.value.field == "plan"


def test_require_finite_names_the_path_through_dataclasses() -> None:
    data = {"options": [_Holder(1.0), _Holder(2.0, (0.5, float("-inf")))]}
    with pytest.raises(InputError, match=r"options\[1\]\.items\[1\] is not finite"):
        require_finite(data, "plan")
