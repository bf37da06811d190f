"""Embarrassingly parallel batch work and tightly coupled HPC steps."""

from __future__ import annotations

from dataclasses import dataclass

from clusterscout.domain.units import SECONDS_PER_HOUR
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import group_time_s
from clusterscout.model.inputs import BatchWorkload, ClusterSpec, HpcWorkload


@dataclass(frozen=True, slots=True)
class BatchResult:
    """Wall time of a batch job and its efficiency against one node."""

    time_s: float
    scaling_efficiency: float


@dataclass(frozen=True, slots=True)
class HpcResult:
    """Step and job time of an HPC code and its weak-scaling efficiency against one node."""

    step_time_s: float
    comm_time_s: float
    time_s: float
    scaling_efficiency: float


def batch_time_s(workload: BatchWorkload, gpus_per_node: int, nodes: int) -> float:
    """Wall time of embarrassingly parallel work.

    Formula: ``t = startup + data_gb/storage_gbs + gpu_hours*3600 / (g * k)``: nodes start and
    load their data in parallel, then the work divides evenly (no communication).
    Source: perf-model-notes §3.2 (efficiency ~ 1 - (startup + load)/job time).
    """
    overhead = workload.startup_s + workload.data_gb_per_node / workload.storage_gbs_per_node
    return overhead + workload.gpu_hours * SECONDS_PER_HOUR / (gpus_per_node * nodes)


def batch(workload: BatchWorkload, cluster: ClusterSpec) -> BatchResult:
    """Batch job time and efficiency ``(k * t_k)^-1 * t_1``, i.e. ``t_1 / (k * t_k)``."""
    t_k = batch_time_s(workload, cluster.gpus_per_node, cluster.nodes)
    t_1 = batch_time_s(workload, cluster.gpus_per_node, 1)
    return BatchResult(time_s=t_k, scaling_efficiency=min(1.0, t_1 / (cluster.nodes * t_k)))


def hpc(workload: HpcWorkload, cluster: ClusterSpec, calibration: Calibration) -> HpcResult:
    """Weak-scaled HPC step from a one-node profile.

    Formula: on one node the step is ``t_1`` with share ``c`` in collectives of size ``S``,
    so it runs ``N = c*t_1 / t_coll(S, 1 node)`` collectives; on ``k`` nodes
    ``t_k = (1-c)*t_1 + N * t_coll(S, k nodes)``, efficiency ``t_1 / t_k``.
    Source: perf-model-notes §3.2 ("same alpha-beta model with the application's message mix").
    """
    g = cluster.gpus_per_node
    t_one = group_time_s(cluster, workload.op, workload.message_bytes, g, 1, calibration)
    t_k = group_time_s(cluster, workload.op, workload.message_bytes, g, cluster.nodes, calibration)
    count = workload.comm_share * workload.step_time_one_node_s / t_one
    comm = count * t_k
    step = (1.0 - workload.comm_share) * workload.step_time_one_node_s + comm
    return HpcResult(
        step_time_s=step,
        comm_time_s=comm,
        time_s=step * workload.steps,
        scaling_efficiency=min(1.0, workload.step_time_one_node_s / step),
    )
