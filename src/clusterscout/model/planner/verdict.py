"""Do I need multi-node? The memory arithmetic and the one-node verdict per GPU model."""

from __future__ import annotations

from clusterscout.domain.models import GpuSpec
from clusterscout.domain.units import GIB, SECONDS_PER_HOUR
from clusterscout.model.finetune import adapter_params, frozen_weight_bytes
from clusterscout.model.inputs import DEFAULT_LORA_RANK, ClusterSpec, JobKind, ModelShape
from clusterscout.model.memory import (
    GRAD_BYTES_PER_PARAM,
    OPTIMIZER_BYTES_PER_PARAM,
    WEIGHT_BYTES_PER_PARAM,
)
from clusterscout.model.planner.layouts import REFERENCE_NODE_GPUS, LayoutSearch, layout_of
from clusterscout.model.planner.results import GpuVerdict, MemoryArithmetic


def job_hours(steps: int, step_time_s: float) -> float:
    """Hours to run ``steps`` steps of ``step_time_s`` each."""
    return steps * step_time_s / SECONDS_PER_HOUR


def memory_arithmetic(
    model: ModelShape, kind: JobKind = JobKind.PRETRAIN, lora_rank: int = DEFAULT_LORA_RANK
) -> MemoryArithmetic:
    """Weights, gradients and Adam state of the whole model, in GiB.

    Every weight trained: ``(2 + 2 + 12) * params``. LoRA/QLoRA: the frozen weights (BF16,
    or NF4 with its constants) plus ``16`` bytes per adapter parameter (weights, gradients,
    Adam), split into the same three parts.
    """
    p = model.params
    if kind.adapters:
        a = adapter_params(model, lora_rank)
        w = (frozen_weight_bytes(model, kind) + WEIGHT_BYTES_PER_PARAM * a) / GIB
        g = GRAD_BYTES_PER_PARAM * a / GIB
        o = OPTIMIZER_BYTES_PER_PARAM * a / GIB
        return MemoryArithmetic(p, w, g, o, w + g + o)
    w, g, o = (
        b * p / GIB
        for b in (WEIGHT_BYTES_PER_PARAM, GRAD_BYTES_PER_PARAM, OPTIMIZER_BYTES_PER_PARAM)
    )
    return MemoryArithmetic(p, w, g, o, w + g + o)


def gpu_verdict(search: LayoutSearch, gpu: GpuSpec) -> GpuVerdict:
    """Whether one 8-GPU node of ``gpu`` holds the search's job, the time there, the fewest GPUs."""
    node = ClusterSpec(gpu=gpu, gpus_per_node=REFERENCE_NODE_GPUS, nodes=1)
    best = search.best(node)
    return GpuVerdict(
        gpu=gpu.name,
        memory_gib=gpu.memory_gib,
        min_gpus_to_fit=search.min_gpus_to_fit(gpu),
        one_node_fits=best is not None,
        one_node_time_hours=job_hours(best.steps, best.step_time_s) if best else None,
        one_node_layout=layout_of(best.workload) if best else None,
        calibrated=search.calibration.family_for(gpu.name).calibrated,
    )
