"""Planning helpers behind the plan page's scaling chart and the listings' reference columns."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine

from clusterscout.app import estimates, insights, offers
from clusterscout.domain.errors import InputError
from clusterscout.web.memo import Memo


def test_sweep_node_counts_are_powers_of_two_plus_the_cap() -> None:
    assert insights.sweep_node_counts(1) == (1,)
    assert insights.sweep_node_counts(16) == (1, 2, 4, 8, 16)
    assert insights.sweep_node_counts(24) == (1, 2, 4, 8, 16, 24)
    assert insights.sweep_node_counts(10_000)[-1] == insights.SWEEP_MAX_NODES


def test_scaling_curves_one_per_fabric_with_gaps_where_the_job_does_not_fit(
    fixture_engine: Engine,
) -> None:
    with fixture_engine.connect() as conn:
        curves = insights.scaling_curves(conn, {"model": "405B", "tokens": 1e12, "max_nodes": 64})
    fabrics = [c.fabric for c in curves]
    assert fabrics == sorted(fabrics) == ["ethernet", "infiniband", "roce"]
    by_fabric = {c.fabric: c for c in curves}
    # The representative InfiniBand offer is the one with the most bandwidth per node.
    assert by_fabric["infiniband"].offer.offer_id == "alpha-h100-ib"
    for c in curves:
        assert [n for n, _ in c.points] == [1, 2, 4, 8, 16, 32, 64]
        assert c.points[0][1] is None  # 405B never fits one node
        assert all(0 < e <= 1 for _, e in c.points if e is not None)
    eth = [e for _, e in by_fabric["ethernet"].points if e is not None]
    ib = [e for _, e in by_fabric["infiniband"].points if e is not None]
    assert min(eth) < min(ib)


def test_scaling_curves_respect_the_gpu_and_fabric_filters(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        curves = insights.scaling_curves(
            conn, {"model": "7B", "tokens": 1e11, "max_nodes": 8, "gpu": "H100", "fabric": "roce"}
        )
    assert curves == []
    with fixture_engine.connect() as conn, pytest.raises(InputError) as err:
        insights.scaling_curves(conn, {"model": "7B", "tokens": 1e11, "fabric": "pigeon"})
    assert err.value.field == "fabric"
    with fixture_engine.connect() as conn, pytest.raises(InputError):
        insights.scaling_curves(conn, [])


def _inputs(engine: Engine) -> tuple[Any, Any, list[dict[str, Any]]]:
    with engine.connect() as conn:
        records = offers.find_offers(conn, {})[2].records
        return offers.gpu_specs(conn), estimates.stored_calibration(conn), records


def test_reference_estimate_is_list_price_over_efficiency(fixture_engine: Engine) -> None:
    gpus, calibration, records = _inputs(fixture_engine)
    ref = insights.REFERENCE_WORKLOADS["70b-3d-32"]
    roce = next(r for r in records if r["id"] == "beta-mi300x-roce")
    est = insights.reference_estimate(roce, ref, gpus, calibration)
    assert est.scaling_efficiency is not None
    assert 0 < est.scaling_efficiency <= 1
    assert est.effective_usd_per_gpu_hour == pytest.approx(1.99 / est.scaling_efficiency)
    assert est.reason is None


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"fabric": None}, "unknown fabric"),
        ({"per_node_gbps": None}, "unknown Gbit/s per node"),
        ({"gpus_per_node": None}, "unknown GPUs per node"),
        ({"gpu": "TPU-v9"}, "unknown GPU figures"),
        ({"from_usd_per_gpu_hour": None}, "no price"),
    ],
)
def test_reference_estimate_names_what_is_missing(
    fixture_engine: Engine, change: dict[str, Any], reason: str
) -> None:
    gpus, calibration, records = _inputs(fixture_engine)
    record = {**next(r for r in records if r["id"] == "alpha-h100-ib"), **change}
    est = insights.reference_estimate(
        record, insights.REFERENCE_WORKLOADS["8b-fsdp-4"], gpus, calibration
    )
    assert est.reason == reason
    assert est.effective_usd_per_gpu_hour is None
    if reason == "no price":
        assert est.scaling_efficiency is not None


def test_reference_estimate_reports_a_model_that_does_not_fit(fixture_engine: Engine) -> None:
    gpus, calibration, records = _inputs(fixture_engine)
    record = {**next(r for r in records if r["id"] == "alpha-a100-ib"), "gpus_per_node": 1}
    est = insights.reference_estimate(
        record, insights.REFERENCE_WORKLOADS["405b-3d-64"], gpus, calibration
    )
    assert est.reason == "does not fit"


def test_memo_keeps_the_newest_entries_and_does_not_store_failures() -> None:
    memo = Memo(2)
    calls: list[str] = []

    def make(v: str) -> Any:
        def compute() -> str:
            calls.append(v)
            return v

        return compute

    assert memo.get("a", make("a")) == "a"
    assert memo.get("a", make("x")) == "a"
    memo.get("b", make("b"))
    memo.get("c", make("c"))
    assert len(memo) == 2
    assert memo.get("a", make("a2")) == "a2"
    assert calls == ["a", "b", "c", "a2"]

    def boom() -> str:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        memo.get("d", boom)
    assert memo.get("d", make("d")) == "d"
