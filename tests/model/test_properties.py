"""Hypothesis properties of the model."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import collective
from clusterscout.model.cost import job_cost_usd
from clusterscout.model.inputs import (
    ClusterSpec,
    CollectiveOp,
    CollectiveWorkload,
    ModelShape,
    Parallelism,
    Precision,
    Recompute,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.training import compute_time_s, train_step
from tests.model.conftest import A100, B200, H100, round_calibration

CAL = round_calibration()
gpus = st.sampled_from([H100, A100, B200])
fabrics = st.sampled_from(list(FabricKind))
params = st.floats(min_value=1e8, max_value=5e10)
nodes = st.sampled_from([1, 2, 3, 4, 8, 16])
tps = st.sampled_from([1, 2, 4, 8])
shardings = st.sampled_from(list(Sharding))
recomputes = st.sampled_from(list(Recompute))
gbps = st.floats(min_value=10, max_value=6400)


def _workload(
    p: float, dp: int, tp: int, sharding: Sharding, recompute: Recompute, m: int
) -> TrainingWorkload:
    model = ModelShape(p, 24, 2048, 16, 16, 32000, 8192)
    return TrainingWorkload(
        model,
        2048,
        dp * m,
        1,
        Precision.BF16,
        Parallelism(tp=tp, dp=dp, sharding=sharding),
        recompute,
    )


@settings(max_examples=150, deadline=None)
@given(
    gpus,
    fabrics,
    params,
    nodes,
    tps,
    shardings,
    recomputes,
    gbps,
    st.integers(min_value=1, max_value=16),
)
def test_efficiency_in_unit_interval(gpu, fabric, p, k, tp, sharding, recompute, rate, m):
    cluster = ClusterSpec(gpu, 8, k, fabric, rate, True)
    w = _workload(p, 8 * k // tp, tp, sharding, recompute, m)
    res = train_step(w, cluster, CAL)
    assert 0 < res.scaling_efficiency <= 1
    assert res.step_time_s > 0


@settings(max_examples=80, deadline=None)
@given(gpus, params, tps, shardings, recomputes, st.integers(min_value=1, max_value=16))
def test_one_node_data_parallel_is_fully_efficient(gpu, p, tp, sharding, recompute, m):
    w = _workload(p, 8 // tp, tp, sharding, recompute, m)
    assert train_step(w, ClusterSpec(gpu, 8, 1), CAL).scaling_efficiency == 1


@settings(max_examples=150, deadline=None)
@given(
    gpus,
    fabrics,
    params,
    nodes,
    tps,
    shardings,
    gbps,
    st.floats(min_value=1.01, max_value=10),
    st.integers(min_value=1, max_value=16),
)
def test_more_bandwidth_never_slows_a_step(gpu, fabric, p, k, tp, sharding, rate, factor, m):
    w = _workload(p, 8 * k // tp, tp, sharding, Recompute.SELECTIVE, m)
    slow = ClusterSpec(gpu, 8, k, fabric, rate, True)
    fast = replace(slow, per_node_gbps=rate * factor)
    assert train_step(w, fast, CAL).step_time_s <= train_step(w, slow, CAL).step_time_s * (
        1 + 1e-12
    )


@settings(max_examples=100, deadline=None)
@given(
    gpus,
    fabrics,
    params,
    nodes,
    st.floats(min_value=0.1, max_value=20),
    st.integers(min_value=1, max_value=16),
)
def test_cost_at_least_price_times_compute_only_time(gpu, fabric, p, k, price, m):
    cluster = ClusterSpec(gpu, 8, k, fabric, 400, True)
    w = _workload(p, 8 * k, 1, Sharding.FSDP, Recompute.FULL, m)
    hours = train_step(w, cluster, CAL).step_time_s / 3600
    compute_hours = compute_time_s(w, cluster, CAL) / 3600
    assert job_cost_usd(price, cluster.gpus, hours) >= job_cost_usd(
        price, cluster.gpus, compute_hours
    )


@settings(max_examples=150, deadline=None)
@given(
    gpus,
    fabrics,
    nodes,
    st.sampled_from(list(CollectiveOp)),
    st.floats(min_value=1, max_value=1e11),
    st.floats(min_value=1.001, max_value=100),
)
def test_collective_time_non_decreasing_in_payload(gpu, fabric, k, op, size, factor):
    cluster = ClusterSpec(gpu, 8, k, fabric, 800, True)
    small = collective(cluster, CollectiveWorkload(op, size), CAL).time_s
    large = collective(cluster, CollectiveWorkload(op, size * factor), CAL).time_s
    assert large >= small


@settings(max_examples=80, deadline=None)
@given(gpus, fabrics, nodes, params, st.floats(min_value=1.01, max_value=4))
def test_step_time_non_decreasing_in_model_size(gpu, fabric, k, p, factor):
    cluster = ClusterSpec(gpu, 8, k, fabric, 800, True)
    w = _workload(p, 8 * k, 1, Sharding.FSDP, Recompute.SELECTIVE, 2)
    bigger = replace(w, model=replace(w.model, params=p * factor))
    assert train_step(bigger, cluster, CAL).step_time_s >= train_step(w, cluster, CAL).step_time_s


def test_real_calibration_properties(cal: Calibration) -> None:
    w = _workload(7e9, 32, 1, Sharding.FSDP, Recompute.SELECTIVE, 4)
    res = train_step(w, ClusterSpec(H100, 8, 4, FabricKind.INFINIBAND, 3200, True), cal)
    assert 0.8 < res.scaling_efficiency <= 1
