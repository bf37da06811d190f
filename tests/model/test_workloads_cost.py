"""Batch, HPC and cost formulas."""

from __future__ import annotations

import pytest

from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import group_time_s
from clusterscout.model.cost import (
    cost_per_million_tokens_usd,
    effective_usd_per_gpu_hour,
    job_cost_usd,
    time_to_train_hours,
)
from clusterscout.model.inputs import BatchWorkload, ClusterSpec, CollectiveOp, HpcWorkload
from clusterscout.model.workloads import batch, batch_time_s, hpc
from tests.model.conftest import H100


def test_batch_by_hand() -> None:
    w = BatchWorkload(gpu_hours=8, startup_s=60, data_gb_per_node=10, storage_gbs_per_node=1)
    assert batch_time_s(w, 8, 2) == pytest.approx(1870)
    res = batch(w, ClusterSpec(H100, 8, 2, FabricKind.ETHERNET, 100))
    assert res.time_s == pytest.approx(1870)
    assert res.scaling_efficiency == pytest.approx(3670 / (2 * 1870))


def test_batch_one_node_is_efficient() -> None:
    assert batch(BatchWorkload(gpu_hours=1), ClusterSpec(H100, 8, 1)).scaling_efficiency == 1


def test_hpc_by_hand(rcal: Calibration) -> None:
    c = ClusterSpec(H100, 8, 4, FabricKind.INFINIBAND, 3200, True)
    w = HpcWorkload(1.0, 0.2, CollectiveOp.ALL_REDUCE, 1e8, steps=10)
    t1 = group_time_s(c, CollectiveOp.ALL_REDUCE, 1e8, 8, 1, rcal)
    t4 = group_time_s(c, CollectiveOp.ALL_REDUCE, 1e8, 8, 4, rcal)
    res = hpc(w, c, rcal)
    step = 0.8 + 0.2 / t1 * t4
    assert res.step_time_s == pytest.approx(step)
    assert res.time_s == pytest.approx(10 * step)
    assert res.scaling_efficiency == pytest.approx(min(1.0, 1 / step))


def test_cost_formulas() -> None:
    assert job_cost_usd(2.0, 16, 10) == 320
    assert time_to_train_hours(3.6e9, 1000, 10) == pytest.approx(100)
    assert cost_per_million_tokens_usd(3.6, 1000) == pytest.approx(1.0)
    assert effective_usd_per_gpu_hour(2.0, 0.8) == pytest.approx(2.5)
