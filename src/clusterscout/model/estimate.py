"""Run the model on one validated scenario and shape the answer as DESIGN.md §4 says."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clusterscout.domain.models import GpuSpec
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import CollectiveResult, collective
from clusterscout.model.compute import peak_tflops
from clusterscout.model.inputs import (
    BatchWorkload,
    ClusterSpec,
    CollectiveWorkload,
    Precision,
    TrainingWorkload,
)
from clusterscout.model.scenario import ClusterInput, Scenario, ScenarioError
from clusterscout.model.training import TrainingResult, train_step
from clusterscout.model.workloads import BatchResult, HpcResult, batch, hpc

Result = CollectiveResult | TrainingResult | BatchResult | HpcResult


@dataclass(frozen=True, slots=True)
class Estimate:
    """The model's answer for one scenario."""

    kind: str
    result: Result

    def to_dict(self) -> dict[str, Any]:
        """Exactly the output keys of DESIGN.md §4 for the scenario's kind."""
        r = self.result
        if isinstance(r, CollectiveResult):
            return {"time_s": r.time_s, "algbw_gbs": r.algbw_gbs, "busbw_gbs": r.busbw_gbs}
        if isinstance(r, TrainingResult):
            return {
                "step_time_s": r.step_time_s,
                "tokens_per_s_per_gpu": r.tokens_per_s_per_gpu,
                "model_tflops_per_gpu": r.model_tflops_per_gpu,
                "mfu": r.mfu,
                "scaling_efficiency": r.scaling_efficiency,
                "memory_gib_per_gpu": r.memory_gib_per_gpu,
                "fits": r.fits,
                "breakdown_s": dict(r.breakdown.as_dict()),
            }
        if isinstance(r, BatchResult):
            return {"time_s": r.time_s, "scaling_efficiency": r.scaling_efficiency}
        return {
            "step_time_s": r.step_time_s,
            "comm_time_s": r.comm_time_s,
            "time_s": r.time_s,
            "scaling_efficiency": r.scaling_efficiency,
        }


def cluster_spec(cluster: ClusterInput, gpu: GpuSpec) -> ClusterSpec:
    """The model's cluster value for a validated ``cluster`` object and its resolved GPU."""
    return ClusterSpec(
        gpu=gpu,
        gpus_per_node=cluster.gpus_per_node,
        nodes=cluster.nodes,
        fabric=cluster.fabric,
        per_node_gbps=cluster.per_node_gbps,
        gpudirect_rdma=cluster.gpudirect_rdma,
    )


def _check_gpu_figures(workload: TrainingWorkload, gpu: GpuSpec) -> None:
    try:
        peak_tflops(gpu, Precision.BF16)
    except ValueError as exc:
        raise ScenarioError("cluster.gpu", str(exc)) from exc
    try:
        peak_tflops(gpu, workload.precision)
    except ValueError as exc:
        raise ScenarioError("workload.precision", str(exc)) from exc


def estimate(scenario: Scenario, gpu: GpuSpec, calibration: Calibration) -> Estimate:
    """Predict the scenario on the given GPU (resolved by the caller with ``resolve_gpu``).

    Raises:
        ScenarioError: when the GPU lacks a figure the workload needs (e.g. FP8 TFLOP/s).
    """
    cluster = cluster_spec(scenario.cluster, gpu)
    w = scenario.workload
    if isinstance(w, CollectiveWorkload):
        return Estimate("collective", collective(cluster, w, calibration))
    if isinstance(w, TrainingWorkload):
        _check_gpu_figures(w, gpu)
        return Estimate("training", train_step(w, cluster, calibration))
    if isinstance(w, BatchWorkload):
        return Estimate("batch", batch(w, cluster))
    return Estimate("hpc", hpc(w, cluster, calibration))
