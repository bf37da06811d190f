"""Memory per GPU: model state by sharding, activations by recomputation, and the fit test."""

from __future__ import annotations

from dataclasses import dataclass

from clusterscout.domain.models import GpuSpec
from clusterscout.domain.units import bytes_to_gib
from clusterscout.model.calibration import Calibration
from clusterscout.model.finetune import adapter_params, frozen_weight_bytes
from clusterscout.model.inputs import ModelShape, Recompute, Sharding, TrainingWorkload

WEIGHT_BYTES_PER_PARAM = 2.0
"""BF16 weights (FP8 training keeps BF16 weights and adds only small FP8 copies)."""
GRAD_BYTES_PER_PARAM = 2.0
"""BF16 gradients."""
OPTIMIZER_BYTES_PER_PARAM = 12.0
"""Mixed-precision Adam: FP32 master weights, momentum and variance (ZeRO's K = 12)."""


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """Memory of one GPU in GiB, and whether it fits the usable capacity."""

    weights_gib: float
    grads_gib: float
    optimizer_gib: float
    activations_gib: float
    total_gib: float
    capacity_gib: float
    fits: bool


@dataclass(frozen=True, slots=True)
class StateBytes:
    """Bytes of model state held by one GPU."""

    weights: float
    grads: float
    optimizer: float


def model_state_bytes(params_per_gpu: float, sharding: Sharding, shard_ranks: int) -> StateBytes:
    """Weights, gradients and optimizer state of one GPU under ZeRO sharding.

    Formula (Psi = parameters per model-parallel rank, N = sharding ranks):
    none ``(2 + 2 + 12) Psi``; zero1 ``(2 + 2) Psi + 12 Psi/N``; zero2 ``2 Psi + 14 Psi/N``;
    fsdp (ZeRO-3) ``16 Psi / N``.
    Source: Rajbhandari et al., "ZeRO", SC'20, Figure 1.
    """
    w = WEIGHT_BYTES_PER_PARAM * params_per_gpu
    g = GRAD_BYTES_PER_PARAM * params_per_gpu
    o = OPTIMIZER_BYTES_PER_PARAM * params_per_gpu
    n = max(shard_ranks, 1)
    if sharding is Sharding.ZERO1:
        return StateBytes(w, g, o / n)
    if sharding is Sharding.ZERO2:
        return StateBytes(w, g / n, o / n)
    if sharding is Sharding.FSDP:
        return StateBytes(w / n, g / n, o / n)
    return StateBytes(w, g, o)


def activation_bytes_per_layer(
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    tp: int,
    cp: int,
    recompute: Recompute,
) -> float:
    """Activation bytes one transformer layer keeps for one micro-batch (BF16).

    Formula, with ``s' = s/cp`` and sequence parallelism whenever ``tp > 1``:
    none and selective ``34*s'*b*h / t``; full ``2*s'*b*h / t`` (only the layer input is kept).
    Assumption: flash attention, so the ``5*a*s'^2*b/t`` attention-score term of Korthikanti's
    no-recompute formula is never stored; with flash attention "no recomputation" keeps the
    same tensors as Korthikanti's selective recomputation (which only adds FLOPs here).
    ``heads`` is kept for callers that model non-flash attention.
    Source: Korthikanti et al., "Reducing Activation Recomputation", MLSys 2023, Table 2;
    Dao et al., "FlashAttention", 2022.
    """
    del heads  # flash attention: no per-head score matrices are stored
    s = seq_len / cp
    sbh = s * micro_batch * hidden
    if recompute is Recompute.FULL:
        return 2.0 * sbh / tp
    return 34.0 * sbh / tp


def inflight_microbatches(pp: int, vp: int, microbatches: int) -> float:
    """Micro-batches whose activations the first pipeline stage holds at once.

    Formula: ``min(pp, m)`` for 1F1B, times ``1 + (pp-1)/(pp*vp)`` with interleaving.
    Source: Korthikanti et al. 2023 §4.2.3; Narayanan et al. 2021 §2.2.
    """
    base = float(min(pp, max(microbatches, 1)))
    if vp > 1 and pp > 1:
        base *= 1.0 + (pp - 1) / (pp * vp)
    return base


def moe_layer_extra_factor(model: ModelShape) -> float:
    """Activations of an MoE layer over those of a dense layer, as a multiple of ``34 s b h``.

    Formula: the MLP part of Korthikanti's ``34 s b h`` is ``19 s b h`` for a ``4h`` MLP; an
    MoE layer keeps it for ``k + shared`` experts of width ``f_e`` (``19 * (k+S) * f_e/(4h)``)
    plus the ``k`` dispatched copies of each token's input (``2 k s b h``) instead, so the
    factor is ``(15 + 19 (k+S) f_e/(4h) + 2k) / 34``. 1 for a dense model.
    Assumption: no expert-activation recomputation and token-dropless routing, balanced.
    """
    if not model.is_moe:
        return 1.0
    active = model.top_k + model.shared_experts
    mlp = 19.0 * active * model.expert_width / (4.0 * model.hidden)
    return (15.0 + mlp + 2.0 * model.top_k) / 34.0


def activation_bytes_per_gpu(workload: TrainingWorkload) -> float:
    """Activation bytes of the busiest (first) pipeline stage.

    Formula: ``per_layer * (l/pp) * inflight``; with full recompute one layer's full
    working set (``34*s'*b*h/t``) is added for the layer being recomputed.
    """
    par = workload.parallelism
    model = workload.model
    per_layer = activation_bytes_per_layer(
        workload.seq_len,
        workload.micro_batch,
        model.hidden,
        model.heads,
        par.tp,
        par.cp,
        workload.recompute,
    )
    # MoE layers weigh more (or less) than dense ones; full recompute keeps only the input.
    factor = 1.0
    if model.is_moe and workload.recompute is not Recompute.FULL:
        factor = (model.dense_layers + model.moe_layers * moe_layer_extra_factor(model)) / (
            model.layers
        )
    layers_per_stage = model.layers / par.pp * factor
    total = (
        per_layer * layers_per_stage * inflight_microbatches(par.pp, par.vp, workload.microbatches)
    )
    if workload.recompute is Recompute.FULL:
        total += activation_bytes_per_layer(
            workload.seq_len,
            workload.micro_batch,
            model.hidden,
            model.heads,
            par.tp,
            par.cp,
            Recompute.SELECTIVE,
        )
    return total


def state_bytes_per_gpu(workload: TrainingWorkload) -> StateBytes:
    """Model state of one GPU for the workload's job.

    Formula: every weight trained (pre-training, full fine-tuning):
    ``model_state_bytes(dense/(tp*pp), sharding, dp*cp)`` plus routed experts'
    ``model_state_bytes(experts/(ep*pp), sharding, expert_dp)``. LoRA/QLoRA: frozen weights
    ``W/(tp*pp)`` (BF16, or NF4 + constants; divided by ``dp*cp`` too under FSDP) plus
    ``model_state_bytes(A/(tp*pp))`` of the adapters (``A = finetune.adapter_params``):
    gradients and Adam exist for the adapters only.
    Source: Hu et al. 2022 (LoRA); Dettmers et al. 2023 (QLoRA).
    """
    par = workload.parallelism
    ranks = par.tp * par.pp
    shards = par.dp * par.cp
    if not workload.job.adapters:
        # Routed experts split over EP x PP and shard over the expert-data-parallel group.
        experts = workload.model.routed_expert_params
        dense = model_state_bytes((workload.model.params - experts) / ranks, par.sharding, shards)
        moe = model_state_bytes(experts / (par.ep * par.pp), par.sharding, par.expert_dp)
        return StateBytes(
            dense.weights + moe.weights, dense.grads + moe.grads, dense.optimizer + moe.optimizer
        )
    frozen = frozen_weight_bytes(workload.model, workload.job) / ranks
    if par.sharding is Sharding.FSDP:
        frozen /= max(shards, 1)
    adapters = model_state_bytes(
        adapter_params(workload.model, workload.lora_rank) / ranks, par.sharding, shards
    )
    return StateBytes(frozen + adapters.weights, adapters.grads, adapters.optimizer)


def total_gib(workload: TrainingWorkload) -> float:
    """``memory_per_gpu(...).total_gib``: what one GPU holds, whatever the GPU."""
    state = state_bytes_per_gpu(workload)
    activations = activation_bytes_per_gpu(workload)
    return bytes_to_gib(state.weights + state.grads + state.optimizer + activations)


def capacity_gib(gpu: GpuSpec, calibration: Calibration) -> float:
    """What a GPU can hold for training: its memory less the runtime's share."""
    return gpu.memory_gib * calibration.training.usable_memory_fraction


def memory_per_gpu(
    workload: TrainingWorkload, gpu: GpuSpec, calibration: Calibration
) -> MemoryBreakdown:
    """Memory of one GPU for a training workload and whether it fits.

    Formula: ``total = state((params - P_exp)/(tp*pp), sharding, dp*cp)
    + state(P_exp/(ep*pp), sharding, tp*cp*dp/ep) + activations`` with ``P_exp`` the routed
    experts' weights (0 for a dense model); ``fits = total <= memory_gib * usable_fraction``.
    Assumptions: parameters spread evenly over TP and PP ranks (embeddings included);
    the optimizer shards over the DP x CP group as Megatron's distributed optimizer does, and
    expert state over the expert-data-parallel group. LoRA/QLoRA: see ``state_bytes_per_gpu``.
    """
    state = state_bytes_per_gpu(workload)
    activations = activation_bytes_per_gpu(workload)
    total = bytes_to_gib(state.weights + state.grads + state.optimizer + activations)
    capacity = capacity_gib(gpu, calibration)
    return MemoryBreakdown(
        weights_gib=bytes_to_gib(state.weights),
        grads_gib=bytes_to_gib(state.grads),
        optimizer_gib=bytes_to_gib(state.optimizer),
        activations_gib=bytes_to_gib(activations),
        total_gib=total,
        capacity_gib=capacity,
        fits=total <= capacity,
    )
