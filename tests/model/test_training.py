"""Step-time formulas on hand-computed cases."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import group_time_s
from clusterscout.model.inputs import (
    ClusterSpec,
    CollectiveOp,
    ModelShape,
    Parallelism,
    Precision,
    Recompute,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.training import (
    GroupPlacement,
    bubble_time_s,
    compute_time_s,
    cp_comm_time_s,
    dp_comm_exposed_s,
    place_group,
    pp_comm_time_s,
    reference_shape,
    tp_comm_time_s,
    train_step,
    with_parallelism,
)
from tests.model.conftest import A100, H100

TINY = ModelShape(1e9, 2, 1000, 8, 8, 1000, 4000, tied_embeddings=True)


def wl(
    par: Parallelism,
    batch: int = 8,
    recompute: Recompute = Recompute.NONE,
    model: ModelShape = TINY,
) -> TrainingWorkload:
    return TrainingWorkload(model, 1000, batch, 1, Precision.BF16, par, recompute)


def cluster(nodes: int = 1, gpu=A100, fabric=FabricKind.INFINIBAND) -> ClusterSpec:
    return ClusterSpec(gpu, 8, nodes, fabric, 3200, True)


@pytest.mark.parametrize(
    ("size", "stride", "expected"),
    [(8, 1, (8, 1)), (2, 4, (2, 1)), (4, 8, (1, 4)), (16, 1, (8, 2))],
)
def test_place_group(size: int, stride: int, expected: tuple[int, int]) -> None:
    assert place_group(size, stride, 8) == GroupPlacement(*expected)


def test_bubble() -> None:
    assert bubble_time_s(10, 4, 1, 8) == pytest.approx(3.75)
    assert bubble_time_s(10, 4, 2, 8) == pytest.approx(1.875)
    assert bubble_time_s(10, 1, 1, 8) == 0


def test_compute_time_by_hand(rcal: Calibration) -> None:
    w = wl(Parallelism(dp=8))
    flops = 6e9 + 12 * 2 * 1000 * 1000
    expected = flops * 8 * 1000 / (8 * 312 * 0.5 * 1e12)
    assert compute_time_s(w, cluster(), rcal) == pytest.approx(expected)


def test_single_node_dp_is_fully_efficient(rcal: Calibration) -> None:
    res = train_step(wl(Parallelism(dp=8)), cluster(), rcal)
    assert res.scaling_efficiency == 1
    parts = res.breakdown.as_dict()
    assert sum(parts.values()) == pytest.approx(res.step_time_s)
    assert parts["tp_comm"] == parts["pp_comm"] == parts["cp_comm"] == parts["bubble"] == 0
    assert res.tokens_per_s_per_gpu == pytest.approx(8000 / (8 * res.step_time_s))
    assert res.mfu == pytest.approx(res.model_tflops_per_gpu / 312)


def test_tp_comm_by_hand(rcal: Calibration) -> None:
    w = wl(Parallelism(tp=4, dp=2), recompute=Recompute.FULL)
    per_op = group_time_s(cluster(), CollectiveOp.ALL_REDUCE, 1000 * 1000 * 2, 4, 1, rcal)
    expected = 2 * w.microbatches * 6 * per_op
    assert tp_comm_time_s(w, cluster(), rcal) == pytest.approx(expected)


def test_cp_and_pp_comm_present_only_when_used(rcal: Calibration) -> None:
    base = wl(Parallelism(dp=8))
    assert cp_comm_time_s(base, cluster(), rcal) == 0
    assert pp_comm_time_s(base, cluster(), rcal) == 0
    cp = wl(Parallelism(cp=2, dp=4))
    assert cp_comm_time_s(cp, cluster(), rcal) > 0
    pp = wl(Parallelism(pp=2, dp=4))
    assert pp_comm_time_s(pp, cluster(), rcal) > 0
    pp_inter = wl(Parallelism(tp=8, pp=2, dp=1), batch=8)
    two = cluster(2)
    assert pp_comm_time_s(pp_inter, two, rcal) > pp_comm_time_s(pp_inter, cluster(1), rcal) * 0


def test_dp_comm_overlaps(rcal: Calibration) -> None:
    w = wl(Parallelism(dp=16), batch=16)
    c = cluster(2)
    assert dp_comm_exposed_s(w, c, 1e6, rcal) == 0  # long compute hides it
    exposed = dp_comm_exposed_s(w, c, 0.0, rcal)
    assert exposed > 0
    fsdp = with_parallelism(w, Parallelism(dp=16, sharding=Sharding.FSDP))
    assert dp_comm_exposed_s(fsdp, c, 0.0, rcal) > 0
    assert dp_comm_exposed_s(wl(Parallelism(tp=8)), cluster(), 0.0, rcal) == 0


def test_tcp_fabric_overlaps_less(rcal: Calibration) -> None:
    w = wl(Parallelism(dp=16), batch=16, model=replace(TINY, params=2e10))
    ib = dp_comm_exposed_s(w, cluster(2), 0.05, rcal)
    eth = dp_comm_exposed_s(w, ClusterSpec(A100, 8, 2, FabricKind.ETHERNET, 3200, None), 0.05, rcal)
    assert eth > ib


def test_reference_shape(rcal: Calibration) -> None:
    w = wl(Parallelism(tp=8, dp=4), batch=8)
    ref_w, ref_c = reference_shape(w, cluster(4))
    assert ref_c.nodes == 1
    assert ref_w.parallelism.dp == 1
    assert ref_w.microbatches == w.microbatches
    whole = wl(Parallelism(tp=8, pp=2, dp=1), batch=8)
    assert reference_shape(whole, cluster(2)) == (whole, cluster(2))


def test_multi_node_efficiency_below_one(rcal: Calibration) -> None:
    w = wl(Parallelism(dp=32), batch=32, model=replace(TINY, params=5e10))
    res = train_step(w, ClusterSpec(H100, 8, 4, FabricKind.ETHERNET, 100, None), rcal)
    assert 0 < res.scaling_efficiency < 1
