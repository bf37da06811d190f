"""All-in cost: the footprint on shared storage, the weights moved out, unknown prices named."""

from __future__ import annotations

import pytest

from clusterscout.domain.units import GIB
from clusterscout.model.allin import (
    EGRESS_PRICE,
    HOURS_PER_MONTH,
    STORAGE_PRICE,
    Footprint,
    all_in_cost,
    footprint,
    token_bytes,
)
from clusterscout.model.calibration import Calibration
from clusterscout.model.goodput import Reliability
from clusterscout.model.planner.plan import plan
from clusterscout.model.planner.request import PlanRequest
from clusterscout.model.planner.results import PlanOffer
from tests.model.conftest import GPUS
from tests.model.planner.test_plan import IB


def test_token_ids_take_two_bytes_until_the_vocabulary_outgrows_16_bits() -> None:
    assert token_bytes(65536) == 2
    assert token_bytes(65537) == 4


def test_the_footprint_is_one_checkpoint_the_dataset_and_the_weights_out() -> None:
    fp = footprint(weights_gib=100.0, optimizer_gib=600.0, tokens=1e12, vocab=128256)
    assert fp.checkpoint_gib == 700.0
    assert fp.dataset_gib == pytest.approx(4e12 / GIB)
    assert fp.storage_gib == pytest.approx(700.0 + 4e12 / GIB)
    assert fp.egress_gib == 100.0


def test_storage_is_prorated_over_the_run_and_egress_paid_once() -> None:
    fp = Footprint(checkpoint_gib=1000.0, dataset_gib=1000.0, egress_gib=200.0)
    two_months = all_in_cost(5e5, 2 * HOURS_PER_MONTH, fp, 0.10, 0.12)
    assert two_months.storage_usd == pytest.approx(2000 * 0.10 * 2)
    assert two_months.egress_usd == pytest.approx(200 * 0.12)
    assert two_months.total_usd == pytest.approx(5e5 + 400 + 24)
    assert two_months.unknown == ()
    free = all_in_cost(5e5, HOURS_PER_MONTH, fp, 0.10, 0.0)
    assert free.egress_usd == 0.0 and free.total_usd == pytest.approx(5e5 + 200)


def test_an_unknown_price_leaves_the_total_unknown_and_is_named() -> None:
    fp = Footprint(10.0, 10.0, 5.0)
    neither = all_in_cost(100.0, 10.0, fp, None, None)
    assert neither.total_usd is None and neither.storage_usd is None
    assert neither.egress_usd is None
    assert neither.unknown == (STORAGE_PRICE, EGRESS_PRICE)
    assert all_in_cost(100.0, 10.0, fp, 0.1, None).unknown == (EGRESS_PRICE,)
    assert all_in_cost(100.0, 10.0, fp, 0.1, None).total_usd is None


def _offer(oid: str, storage: float | None, egress: float | None) -> PlanOffer:
    return PlanOffer(
        offer_id=oid,
        provider="prov",
        gpu="H100-SXM-80GB",
        gpus_per_node=8,
        fabric=IB,
        per_node_gbps=3200,
        gpudirect_rdma=True,
        max_nodes=64,
        usd_per_gpu_hour=2.5,
        price_tier="on_demand",
        minimum_hours=None,
        storage_usd_per_gib_month=storage,
        egress_usd_per_gib=egress,
    )


def test_plan_options_carry_the_all_in_cost_of_their_provider(cal: Calibration) -> None:
    offers = [_offer("known", 0.07, 0.0), _offer("no-storage", None, 0.0)]
    rel = Reliability(19.7, 60.0, 15.0)
    result = plan(PlanRequest(preset="70B", tokens=1e12), offers, GPUS, cal, rel)
    assert result.footprint is not None
    by_id = {o.offer.offer_id: o for o in result.options}
    known = by_id["known"].all_in
    assert known is not None and known.total_usd is not None
    g = by_id["known"].goodput
    assert g is not None and g.cost_usd is not None and g.time_hours is not None
    # Compute is the cost with interruptions; storage is held for the interrupted run's hours.
    assert known.compute_usd == g.cost_usd
    stored = result.footprint.storage_gib * 0.07 * g.time_hours / HOURS_PER_MONTH
    assert known.storage_usd == pytest.approx(stored)
    missing = by_id["no-storage"].all_in
    assert missing is not None and missing.total_usd is None
    assert missing.unknown == (STORAGE_PRICE,)

    # Without goodput the failure-free cost is the compute.
    bare = plan(PlanRequest(preset="70B", tokens=1e12), offers[:1], GPUS, cal)
    option = bare.options[0]
    assert option.all_in is not None and option.all_in.compute_usd == option.cost_usd

    # A run that never finishes has no all-in cost.
    hopeless = plan(
        PlanRequest(preset="70B", tokens=1e12, failures_per_million_gpu_hours=1e5),
        offers[:1],
        GPUS,
        cal,
        rel,
    )
    assert all(o.all_in is None for o in hopeless.options if o.nodes > 1)
