"""Hand-computed cases of the collective formulas (round calibration)."""

from __future__ import annotations

import pytest

from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import (
    alpha_beta_time_s,
    busbw_factor,
    collective,
    group_time_s,
    inter_node_busbw_gbs,
    intra_node_busbw_gbs,
    p2p_time_s,
    plateau_busbw_gbs,
)
from clusterscout.model.inputs import Algorithm, ClusterSpec, CollectiveOp, CollectiveWorkload
from tests.model.conftest import A100, H100, L40S

AR, AG, RS = CollectiveOp.ALL_REDUCE, CollectiveOp.ALL_GATHER, CollectiveOp.REDUCE_SCATTER


def ib(nodes: int, gbps: float = 3200, gpu=H100, rdma: bool | None = True) -> ClusterSpec:
    return ClusterSpec(gpu, 8, nodes, FabricKind.INFINIBAND, gbps, rdma)


def test_busbw_factor_follows_nccl_tests() -> None:
    assert busbw_factor(AR, 8) == pytest.approx(1.75)
    assert busbw_factor(AG, 8) == pytest.approx(0.875)
    assert busbw_factor(RS, 2) == pytest.approx(0.5)
    assert busbw_factor(AR, 1) == 0


def test_intra_node_uses_nvls_only_for_auto_all_reduce(rcal: Calibration) -> None:
    assert intra_node_busbw_gbs(H100, AR, Algorithm.AUTO, rcal) == pytest.approx(450)
    assert intra_node_busbw_gbs(H100, AR, Algorithm.RING, rcal) == pytest.approx(360)
    assert intra_node_busbw_gbs(H100, AG, Algorithm.AUTO, rcal) == pytest.approx(360)
    assert intra_node_busbw_gbs(A100, AR, Algorithm.AUTO, rcal) == pytest.approx(240)
    assert intra_node_busbw_gbs(L40S, AR, Algorithm.AUTO, rcal) == pytest.approx(25)


def test_inter_node_share_gpudirect_and_cap(rcal: Calibration) -> None:
    assert inter_node_busbw_gbs(ib(2), 8, rcal) == pytest.approx(360)
    assert inter_node_busbw_gbs(ib(2), 2, rcal) == pytest.approx(90)
    assert inter_node_busbw_gbs(ib(2, rdma=False), 8, rcal) == pytest.approx(180)
    eth = ClusterSpec(H100, 8, 2, FabricKind.ETHERNET, 800, False)
    assert inter_node_busbw_gbs(eth, 8, rcal) == pytest.approx(20)
    assert inter_node_busbw_gbs(eth, 4, rcal) == pytest.approx(10)


def test_inter_node_needs_fabric(rcal: Calibration) -> None:
    with pytest.raises(ValueError, match="fabric"):
        inter_node_busbw_gbs(ClusterSpec(H100, 8, 2), 8, rcal)


def test_plateau_levels_and_two_node_tree(rcal: Calibration) -> None:
    assert plateau_busbw_gbs(ib(1), AR, Algorithm.AUTO, 8, 1, rcal) == pytest.approx(450)
    # two NVLS nodes: min(450, 360 * 2*15/16 = 675)
    assert plateau_busbw_gbs(ib(2), AR, Algorithm.AUTO, 8, 2, rcal) == pytest.approx(450)
    assert plateau_busbw_gbs(ib(2, 1600), AR, Algorithm.AUTO, 8, 2, rcal) == pytest.approx(337.5)
    assert plateau_busbw_gbs(ib(2, 1600), AR, Algorithm.RING, 8, 2, rcal) == pytest.approx(180)
    assert plateau_busbw_gbs(ib(4), AR, Algorithm.AUTO, 8, 4, rcal) == pytest.approx(360)
    # A100 has no NVLS: no tree bonus on two nodes
    a100 = ib(2, 1600, gpu=A100)
    assert plateau_busbw_gbs(a100, AR, Algorithm.AUTO, 8, 2, rcal) == pytest.approx(180)


def test_alpha_beta_picks_the_faster_protocol() -> None:
    big = alpha_beta_time_s(AR, 1e9, 8, 100, 10e-6, 50e-6, 0.1)
    assert big == pytest.approx(50e-6 + 1.75e9 / 100e9)
    small = alpha_beta_time_s(AR, 8, 8, 100, 10e-6, 50e-6, 0.1)
    assert small == pytest.approx(10e-6 + 14 / 10e9)


def test_collective_reports_nccl_tests_bandwidths(rcal: Calibration) -> None:
    res = collective(ib(1), CollectiveWorkload(AR, 1e9), rcal)
    t = 50e-6 + 1.75e9 / 450e9
    assert res.time_s == pytest.approx(t)
    assert res.algbw_gbs == pytest.approx(1 / t)
    assert res.busbw_gbs == pytest.approx(1.75 / t)


def test_multi_node_collective_uses_fabric_latency(rcal: Calibration) -> None:
    res = collective(ib(4), CollectiveWorkload(AR, 8), rcal)
    assert res.time_s == pytest.approx(20e-6, rel=1e-3)


def test_group_of_one_or_empty_message_takes_no_time(rcal: Calibration) -> None:
    assert group_time_s(ib(1), AR, 1e6, 1, 1, rcal) == 0
    assert group_time_s(ib(1), AR, 0, 8, 1, rcal) == 0


def test_p2p_intra_and_inter_node(rcal: Calibration) -> None:
    assert p2p_time_s(ib(2), 1e8, False, rcal) == pytest.approx(10e-6 + 1e8 / 360e9)
    assert p2p_time_s(ib(2), 1e8, True, rcal) == pytest.approx(20e-6 + 1e8 / 45e9)
    assert p2p_time_s(ib(2), 0, True, rcal) == 0


def test_collective_on_part_of_each_node_gets_its_share_of_the_nics(rcal: Calibration) -> None:
    # nccl-tests -g 4 on two 8-GPU nodes: 8 ranks, each node's 4 GPUs reach 4 of its 8 NICs.
    big = CollectiveWorkload(AG, 1e11)
    half = collective(ib(2), big, rcal, ranks_per_node=4)
    full = collective(ib(2), big, rcal)
    assert half.busbw_gbs == pytest.approx(180, rel=1e-3)
    assert full.busbw_gbs == pytest.approx(360, rel=1e-3)
    assert half.algbw_gbs == pytest.approx(half.busbw_gbs / busbw_factor(AG, 8))
