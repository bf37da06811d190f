"""Run the model on one validated scenario: the typed answer for its kind of workload."""

from __future__ import annotations

from dataclasses import dataclass

from clusterscout.domain.errors import InputError
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
from clusterscout.model.scenario import ClusterInput, Scenario
from clusterscout.model.training import TrainingResult, train_step
from clusterscout.model.workloads import BatchResult, HpcResult, batch, hpc

Result = CollectiveResult | TrainingResult | BatchResult | HpcResult


@dataclass(frozen=True, slots=True)
class EstimateResult:
    """The model's answer for one scenario: its kind, the GPU it ran on and the typed result.

    Its public JSON (docs/design.md §4 output keys per kind) is declared in ``web/schemas.py``.
    """

    kind: str
    gpu: str
    result: Result
    calibrated: bool = True
    """False when the answer rests on a prior for the GPU's family (training estimates)."""
    gpu_family: str = ""


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


def estimate_training_figures(workload: TrainingWorkload, gpu: GpuSpec) -> None:
    """Check that the GPU has the peak figures a training estimate needs.

    Raises:
        InputError: naming ``cluster.gpu`` (no BF16 figure) or ``workload.precision``.
    """
    _check_gpu_figures(workload, gpu)


def _check_gpu_figures(workload: TrainingWorkload, gpu: GpuSpec) -> None:
    try:
        peak_tflops(gpu, Precision.BF16)
    except ValueError as exc:
        raise InputError("cluster.gpu", str(exc)) from exc
    try:
        peak_tflops(gpu, workload.precision)
    except ValueError as exc:
        raise InputError("workload.precision", str(exc)) from exc


def estimate(scenario: Scenario, gpu: GpuSpec, calibration: Calibration) -> EstimateResult:
    """Predict the scenario on the given GPU (resolved by the caller, e.g. ``GpuIndex.require``).

    Raises:
        InputError: when the GPU lacks a figure the workload needs (e.g. FP8 TFLOP/s).
    """
    cluster = cluster_spec(scenario.cluster, gpu)
    w = scenario.workload
    if isinstance(w, CollectiveWorkload):
        return EstimateResult("collective", gpu.name, collective(cluster, w, calibration))
    if isinstance(w, TrainingWorkload):
        _check_gpu_figures(w, gpu)
        family = calibration.family_for(gpu.name)
        return EstimateResult(
            "training",
            gpu.name,
            train_step(w, cluster, calibration),
            calibrated=family.calibrated,
            gpu_family=family.name,
        )
    if isinstance(w, BatchWorkload):
        return EstimateResult("batch", gpu.name, batch(w, cluster))
    return EstimateResult("hpc", gpu.name, hpc(w, cluster, calibration))
