"""Training step time, throughput, MFU and scaling efficiency of a transformer on a cluster."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import group_time_s, p2p_time_s
from clusterscout.model.compute import (
    GemmShape,
    achieved_tflops_per_gpu,
    attention_flops_per_token,
    expert_flops_per_token,
    hardware_flops_per_token,
    model_flops_per_token,
    peak_tflops,
)
from clusterscout.model.finetune import (
    QLORA_DEQUANT_OVERHEAD,
    adapter_params,
    frozen_weight_bytes,
)
from clusterscout.model.inputs import (
    Attention,
    ClusterSpec,
    CollectiveOp,
    JobKind,
    Parallelism,
    Recompute,
    Routing,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.memory import MemoryBreakdown, memory_per_gpu

BF16_BYTES = 2.0
_TFLOP = 1e12


@dataclass(frozen=True, slots=True)
class GroupPlacement:
    """Where the ranks of one communication group sit: ``ranks_per_node`` on ``nodes``."""

    ranks_per_node: int
    nodes: int


@dataclass(frozen=True, slots=True)
class StepBreakdown:
    """Seconds of one step by cause; ``total_s`` is their sum."""

    compute_s: float
    bubble_s: float
    tp_comm_s: float
    cp_comm_s: float
    pp_comm_s: float
    dp_comm_exposed_s: float
    overlap_slowdown_s: float = 0.0
    straggler_s: float = 0.0
    stage_imbalance_s: float = 0.0
    all_to_all_s: float = 0.0

    @property
    def total_s(self) -> float:
        """Step time: the sum of all parts."""
        return (
            self.compute_s
            + self.stage_imbalance_s
            + self.bubble_s
            + self.tp_comm_s
            + self.cp_comm_s
            + self.pp_comm_s
            + self.dp_comm_exposed_s
            + self.all_to_all_s
            + self.overlap_slowdown_s
            + self.straggler_s
        )

    def as_dict(self) -> Mapping[str, float]:
        """Parts keyed as in docs/design.md (``compute``, ``bubble``, ``tp_comm``, ...)."""
        return {
            "compute": self.compute_s,
            "stage_imbalance": self.stage_imbalance_s,
            "bubble": self.bubble_s,
            "tp_comm": self.tp_comm_s,
            "cp_comm": self.cp_comm_s,
            "pp_comm": self.pp_comm_s,
            "dp_comm_exposed": self.dp_comm_exposed_s,
            "all_to_all": self.all_to_all_s,
            "overlap_slowdown": self.overlap_slowdown_s,
            "straggler": self.straggler_s,
        }


@dataclass(frozen=True, slots=True)
class CommTime:
    """One kind of communication in one step: seconds exposed and seconds hidden by compute."""

    exposed_s: float
    hidden_s: float


@dataclass(frozen=True, slots=True)
class TrainingResult:
    """Predicted performance of one training step."""

    step_time_s: float
    tokens_per_s_per_gpu: float
    model_tflops_per_gpu: float
    mfu: float
    scaling_efficiency: float
    memory_gib_per_gpu: float
    fits: bool
    breakdown: StepBreakdown
    memory: MemoryBreakdown


def place_group(size: int, stride: int, gpus_per_node: int) -> GroupPlacement:
    """Placement of a group of ``size`` ranks whose members are ``stride`` ranks apart.

    Ranks are numbered node by node; Megatron orders them tp, cp, dp, pp (tp fastest).
    Formula: ``ranks_per_node = min(size, max(1, g // stride))``; ``nodes = ceil(size / rpn)``.
    """
    per_node = min(size, max(1, gpus_per_node // stride))
    return GroupPlacement(ranks_per_node=per_node, nodes=math.ceil(size / per_node))


def expert_gemm_shape(workload: TrainingWorkload) -> GemmShape:
    """The grouped GEMMs of one GPU's local experts in one micro-batch.

    Formula: width ``f_e`` (experts are not split over TP); tokens per local expert
    ``b * s/(cp*tp) * ep * k / E``: the EP group's tokens, each sent to ``k`` of the ``E``
    experts, spread evenly (balanced routing). Few tokens per expert (small ``ep``, many
    experts) make thin GEMMs, as ``gemm_penalty`` counts them for dense layers.
    """
    par, model = workload.parallelism, workload.model
    tokens = workload.micro_batch * workload.seq_len / (par.cp * par.tp)
    per_expert = tokens * par.ep * model.top_k / max(model.experts, 1)
    return GemmShape(width=model.expert_width, tokens=max(per_expert, 1.0), hidden=model.hidden)


def compute_time_s(
    workload: TrainingWorkload, cluster: ClusterSpec, calibration: Calibration
) -> float:
    """GPU compute time of one step, without bubbles or communication.

    Formula: ``t = k * B * s / n * ((F_hw - F_exp) / R + F_exp / (e * R_exp))`` with ``F_hw``
    the hardware FLOPs per token (recomputation included; LoRA/QLoRA skip the frozen weights'
    gradient matmuls), ``F_exp`` the part of them in routed experts (0 for a dense model),
    ``R = achieved_tflops`` at the per-GPU GEMM width ``h/tp`` and the micro-batch's
    ``b*s/cp`` tokens, ``R_exp`` the same at the experts' GEMM shape (``expert_gemm_shape``),
    ``e`` the fitted ``moe.expert_efficiency`` (routing, token permutation and grouped-GEMM
    overheads) and ``k`` the QLoRA dequantisation overhead (1 otherwise).
    Source: perf-model-notes §3.2; Narayanan et al. 2021.
    """
    model, seq = workload.model, workload.seq_len
    flops = hardware_flops_per_token(
        model, seq, workload.recompute, workload.job, workload.lora_rank
    )
    attention = attention_flops_per_token(model, seq, workload.recompute)
    par = workload.parallelism
    shape = GemmShape(
        width=model.hidden / par.tp,
        tokens=workload.micro_batch * seq / par.cp,
        hidden=model.hidden,
        linear_share=1.0 - attention / flops,
    )
    gpu, precision, stack = cluster.gpu, workload.precision, workload.stack
    achieved = achieved_tflops_per_gpu(gpu, precision, stack, shape, calibration)
    per_token = flops / achieved
    if model.is_moe:
        experts = expert_flops_per_token(model)
        if workload.recompute is Recompute.FULL:
            experts *= 4.0 / 3.0
        rate = achieved_tflops_per_gpu(
            gpu, precision, stack, expert_gemm_shape(workload), calibration
        )
        # the busiest expert sets the pace of the grouped GEMMs (routing_load)
        slow = routing_load(workload, calibration) / calibration.moe.expert_efficiency
        per_token += experts * slow / rate - experts / achieved
    overhead = QLORA_DEQUANT_OVERHEAD if workload.job is JobKind.QLORA else 1.0
    flops_s = overhead * per_token * workload.tokens_per_step / (cluster.gpus * _TFLOP)
    memory_s = unfused_attention_s(workload, cluster, calibration)
    return flops_s + memory_s + permute_s(workload, cluster, calibration)


def routing_load(workload: TrainingWorkload, calibration: Calibration) -> float:
    """Load of the busiest expert over the mean one, which every MoE layer waits for.

    Formula: dropless routing ``iota`` (``moe.dropless_imbalance``, fitted: learned routers
    leave some experts busier than others); capacity routing ``min(c, iota)`` (tokens beyond
    ``c`` times the fair share are dropped); forced balance 1. 1 for a dense model.
    Source: Lepikhin et al. 2020 (capacity factor); Gale et al. 2023 (MegaBlocks, dropless
    MoE); Megatron-Core MoE docs (token dropping, force-balanced benchmarking).
    """
    if not workload.model.is_moe or workload.routing is Routing.BALANCED:
        return 1.0
    iota = calibration.moe.dropless_imbalance
    if workload.routing is Routing.CAPACITY:
        return min(workload.capacity_factor, iota)
    return iota


def permute_s(workload: TrainingWorkload, cluster: ClusterSpec, calibration: Calibration) -> float:
    """Token permutation and fixed per-layer time of the MoE layers in one step (0 if dense).

    Formula: ``(L_moe/pp) * (m * t_0 + (B s/(dp cp tp)) * k * h * beta / BW)``: a fixed
    ``t_0`` per MoE layer per micro-batch (``moe.layer_overhead_s``: router, index bookkeeping,
    launches of small kernels), and the permutation traffic: each GPU copies each of its
    tokens ``k`` times into expert order before the grouped GEMMs and back after them, forward
    and backward; ``beta`` bytes move per hidden element of a copy (``moe.permute_bytes``,
    fitted). Memory-bound, so it weighs most on small experts, where few FLOPs follow each
    copy. ``BW`` is the GPU's HBM bandwidth (no cost without a figure).
    Source: Megatron-Core MoE token dispatcher (permute/unpermute); Gale et al. 2023.
    """
    model, par = workload.model, workload.parallelism
    if not model.is_moe:
        return 0.0
    # fixed cost per MoE layer per micro-batch (router, bookkeeping, small-kernel launches)
    fixed = model.moe_layers / par.pp * workload.microbatches * calibration.moe.layer_overhead_s
    beta = calibration.moe.permute_bytes
    if not beta or not cluster.gpu.hbm_tbps:
        return fixed
    tokens = workload.global_batch * workload.seq_len / (par.dp * par.cp * par.tp)
    copies = model.moe_layers / par.pp * tokens * model.top_k
    return fixed + copies * model.hidden * beta / (cluster.gpu.hbm_tbps * 1e12)


def unfused_attention_s(
    workload: TrainingWorkload, cluster: ClusterSpec, calibration: Calibration
) -> float:
    """Memory time of materialised attention scores in one step (0 with flash attention).

    Formula: ``(l/pp) * (B/dp) * (a/tp) * (s/cp) * s * beta / BW``: each GPU holds the scores
    of its ``a/tp`` heads for its ``s/cp`` queries against all ``s`` keys, per layer of its
    stage and per sequence of its replica; ``beta`` bytes move per score element forward and
    backward (write of the product, scale/mask/softmax, dropout and their gradients;
    ``unfused_attention_bytes``, fitted), times 4/3 when recomputation repeats the forward
    pass. ``BW`` is the GPU's HBM bandwidth (no cost without a bandwidth figure).
    Source: Dao et al. 2022 (FlashAttention §1: standard attention is bound by these reads
    and writes); Korthikanti et al. 2022 §4 (the ``5 a s^2 b`` activation bytes per layer).
    """
    beta = calibration.training.unfused_attention_bytes
    gpu = cluster.gpu
    if workload.attention is not Attention.UNFUSED or not beta or not gpu.hbm_tbps:
        return 0.0
    par, model = workload.parallelism, workload.model
    seq = workload.seq_len
    scores = (
        model.layers
        / par.pp
        * workload.global_batch
        / par.dp
        * model.heads
        / par.tp
        * seq
        / par.cp
        * seq
    )
    again = 4.0 / 3.0 if workload.recompute is not Recompute.NONE else 1.0
    return scores * beta * again / (gpu.hbm_tbps * 1e12)


def last_stage_layers(layers: int, pp: int, output_layers: float) -> float:
    """Work of the busiest pipeline rank, in layers, when the layers are split to balance it.

    The last rank also runs the output layer (``output_layers`` layers' worth of work); a
    stack that balances stages gives it fewer transformer layers (Megatron-Core's
    ``--decoder-last-pipeline-num-layers`` and ``account_for_loss_in_pipeline_split``,
    torchtitan's weighted split, Llama 3's one layer fewer on the first and last stage), so
    the busiest rank holds ``T = min over n of max(ceil((l - n)/(pp - 1)), n + k)``: whole
    layers make the balance inexact by up to about one layer.

    >>> last_stage_layers(32, 4, 0.0), last_stage_layers(32, 4, 2.0), last_stage_layers(30, 4, 0.0)
    (8.0, 9.0, 8.0)
    """
    if pp == 1:
        return layers + output_layers
    centre = (layers - output_layers * (pp - 1)) / pp
    low = max(0, math.floor(centre) - 1)
    high = min(layers, math.ceil(centre) + 1)
    return float(
        min(
            max(math.ceil((layers - n) / (pp - 1)), n + output_layers) for n in range(low, high + 1)
        )
    )


def stage_imbalance_s(workload: TrainingWorkload, compute_s: float) -> float:
    """Extra time of the busiest pipeline stage over the mean one.

    Formula: ``t_compute * (T / ((l + k) / pp) - 1)`` with ``T`` the busiest rank's work in
    layers (``last_stage_layers``, layers split to balance the output layer) and ``k = F_out /
    F_layer`` the output layer's training FLOPs (``6 h V``) in layers (``F_layer`` one
    layer's share of the model FLOPs); every stage waits for the busiest. ``t_compute`` is
    the mean rank's time. Zero without pipeline parallelism.
    Source: Narayanan et al. 2021 §3; Llama 3 paper §3.3.2 (pipeline balancing); the
    Megatron-Core options above.
    """
    pp = workload.parallelism.pp
    if pp == 1:
        return 0.0
    model = workload.model
    output = 6.0 * model.hidden * model.vocab
    per_layer = max(model_flops_per_token(model, workload.seq_len) - output, 1.0) / model.layers
    k = output / per_layer
    mean = (model.layers + k) / pp
    busiest = last_stage_layers(model.layers, pp, k)
    return compute_s * max(busiest / mean - 1.0, 0.0)


def bubble_time_s(compute_s: float, pp: int, vp: int, microbatches: int) -> float:
    """Pipeline bubble of one step.

    Formula: ``t_bubble = t_compute * (p - 1) / (v * m)``.
    Source: Narayanan et al. 2021 §2.2 (1F1B and interleaved schedules).
    """
    return compute_s * (pp - 1) / (vp * microbatches)


def tp_comm(workload: TrainingWorkload, cluster: ClusterSpec, calibration: Calibration) -> CommTime:
    """Tensor-parallel communication of one step.

    Formula: ``(l/pp) * m * k * t_allreduce(b * s/cp * h * 2 B)`` over the TP group, with
    ``k = 4`` all-reduces per layer per micro-batch (2 forward, 2 backward; the same volume as
    sequence parallelism's all-gather + reduce-scatter), ``k = 6`` with full recomputation;
    the stack's ``tp_overlap`` of it is hidden behind compute (Megatron-Core and NeMo split
    the GEMMs and overlap the pieces with the collectives, Transformer Engine userbuffers),
    the rest exposed.
    Source: Narayanan et al. 2021 §3.2; Korthikanti et al. 2023; Wang et al. 2023
    ("Overlap communication with dependent computation via decomposition", ASPLOS).
    """
    par = workload.parallelism
    if par.tp == 1:
        return CommTime(0.0, 0.0)
    place = place_group(par.tp, 1, cluster.gpus_per_node)
    message = workload.micro_batch * workload.seq_len / par.cp * workload.model.hidden
    per_op = group_time_s(
        cluster,
        CollectiveOp.ALL_REDUCE,
        message * BF16_BYTES,
        place.ranks_per_node,
        place.nodes,
        calibration,
    )
    ops = 6 if workload.recompute is Recompute.FULL else 4
    total = workload.model.layers / par.pp * workload.microbatches * ops * per_op
    hidden = total * calibration.stack(workload.stack).tp_overlap
    return CommTime(total - hidden, hidden)


def cp_comm(workload: TrainingWorkload, cluster: ClusterSpec, calibration: Calibration) -> CommTime:
    """Context-parallel (ring attention) communication of one step.

    Formula: per layer per micro-batch one all-gather of K and V forward and an all-gather
    plus a reduce-scatter backward, each of ``2 * b * s * h_kv * 2 B / tp`` bytes over the CP
    group; ``cp_overlap`` of it is hidden (ring attention overlaps the exchange with attention).
    Source: Megatron-Core context parallelism docs; Liu et al., "Ring Attention", 2023.
    """
    par = workload.parallelism
    if par.cp == 1:
        return CommTime(0.0, 0.0)
    model = workload.model
    place = place_group(par.cp, par.tp, cluster.gpus_per_node)
    kv_dim = model.attention_width * model.kv_heads / model.heads
    message = 2.0 * workload.micro_batch * workload.seq_len * kv_dim * BF16_BYTES / par.tp
    gather = group_time_s(
        cluster, CollectiveOp.ALL_GATHER, message, place.ranks_per_node, place.nodes, calibration
    )
    scatter = group_time_s(
        cluster,
        CollectiveOp.REDUCE_SCATTER,
        message,
        place.ranks_per_node,
        place.nodes,
        calibration,
    )
    total = model.layers / par.pp * workload.microbatches * (2 * gather + scatter)
    hidden = total * calibration.training.cp_overlap
    return CommTime(total - hidden, hidden)


def pp_comm_time_s(
    workload: TrainingWorkload, cluster: ClusterSpec, calibration: Calibration
) -> float:
    """Pipeline point-to-point time of one step.

    Formula: ``2 * v * m * t_p2p(b * s/cp * h * 2 B / tp)`` — one activation forward and one
    gradient backward per micro-batch per model chunk; stages sit on different nodes when
    the pp stride ``tp*cp*dp`` reaches the node size.
    Source: perf-model-notes §3.2 (usually negligible).
    """
    par = workload.parallelism
    if par.pp == 1:
        return 0.0
    message = (
        workload.micro_batch
        * workload.seq_len
        / par.cp
        * workload.model.hidden
        * BF16_BYTES
        / par.tp
    )
    inter_node = par.tp * par.cp * par.dp >= cluster.gpus_per_node and cluster.nodes > 1
    per_send = p2p_time_s(cluster, message, inter_node, calibration)
    return 2.0 * par.vp * workload.microbatches * per_send


def all_to_all_comm(
    workload: TrainingWorkload, cluster: ClusterSpec, calibration: Calibration
) -> CommTime:
    """Expert-parallel all-to-all time of one step (token dispatch and combine).

    Formula: ``(L_moe/pp) * m * c * t_a2a(b * s/(cp*tp) * k * h * 2 B)`` over the EP group
    (``ep`` consecutive ranks, so ``min(ep, g)`` per node), with ``c = 4`` all-to-alls per MoE
    layer per micro-batch (dispatch and combine, forward and backward), ``c = 6`` with full
    recomputation; every GPU sends each of its ``b*s/(cp*tp)`` tokens to ``k`` experts.
    The fitted ``moe.all_to_all_exposed`` share of it is exposed, the rest hidden (overlapped
    with another micro-batch's compute).
    Assumptions: balanced routing; BF16 payloads.
    Source: Megatron-Core MoE docs (all-to-all token dispatcher, 1F1B all-to-all overlap);
    Lepikhin et al. 2020.
    """
    par, model = workload.parallelism, workload.model
    if not model.is_moe or par.ep == 1:
        return CommTime(0.0, 0.0)
    place = place_group(par.ep, 1, cluster.gpus_per_node)
    tokens = workload.micro_batch * workload.seq_len / (par.cp * par.tp)
    message = tokens * model.top_k * model.hidden * BF16_BYTES
    per_op = group_time_s(
        cluster,
        CollectiveOp.ALL_TO_ALL,
        message,
        place.ranks_per_node,
        place.nodes,
        calibration,
    )
    ops = 6 if workload.recompute is Recompute.FULL else 4
    # the busiest expert's rank receives the most tokens, and every rank waits for it
    total = model.moe_layers / par.pp * workload.microbatches * ops * per_op
    total *= routing_load(workload, calibration)
    exposed = total * calibration.moe.all_to_all_exposed
    return CommTime(exposed, total - exposed)


def dp_overlap(
    workload: TrainingWorkload, cluster: ClusterSpec, nodes_in_group: int, calibration: Calibration
) -> float:
    """Share of the overlap window that data-parallel traffic can use.

    Formula: the stack's ``dp_overlap``, times the fabric's ``overlap`` factor when the group
    leaves the node (below 1 on TCP-class fabrics, where the CPU moves the bytes).
    """
    omega = calibration.stack(workload.stack).dp_overlap
    if nodes_in_group == 1 or cluster.fabric is None:
        return omega
    return omega * calibration.fabrics[cluster.fabric].overlap


def _adapter_dp_bytes(workload: TrainingWorkload) -> tuple[float, float]:
    """LoRA/QLoRA: gradient bytes one rank synchronises per step, and weight bytes FSDP gathers.

    Only the adapters' BF16 gradients are reduced; FSDP still gathers the frozen weights (BF16
    or NF4) layer by layer, with the adapters.
    """
    par = workload.parallelism
    ranks = par.tp * par.pp
    grads = BF16_BYTES * adapter_params(workload.model, workload.lora_rank) / ranks
    return grads, frozen_weight_bytes(workload.model, workload.job) / ranks + grads


def dp_comm(
    workload: TrainingWorkload,
    cluster: ClusterSpec,
    compute_s: float,
    calibration: Calibration,
) -> CommTime:
    """Data-parallel / FSDP communication of one step, split into exposed and hidden.

    Formula (Psi = params/(tp*pp), group = dp*cp ranks, stride tp):
      * none/zero1/zero2: gradients ``2 Psi`` bytes all-reduced (or reduce-scattered and
        all-gathered, the same volume) once per step in buckets of ``dp_bucket_bytes``; they
        overlap the backward pass of the last micro-batch, a window of ``w * t_compute/m``;
        the last bucket can only start when the backward pass ends (the tail);
      * fsdp: every micro-step all-gathers the weights forward and backward and
        reduce-scatters gradients, layer by layer (``2 Psi/(l/pp)`` bytes each), within a
        window of ``w * t_compute``; the first gather and the last reduce-scatter of each
        micro-step have nothing to hide behind (the tail).
    ``hidden = min(total - tail, window)``; ``exposed = total - hidden``; ``w`` from
    ``dp_overlap``. An MoE model adds a second group: the routed experts' gradients
    (``2 P_exp/(ep*pp)`` bytes) over the ``tp*cp*dp/ep`` ranks that hold the same experts,
    ``ep`` ranks apart; both groups share the window, the longer tail stays exposed.
    Source: Rajbhandari et al. 2020 (ZeRO volumes); Zhao et al. 2023 (PyTorch FSDP);
    perf-model-notes §3.2.
    """
    par = workload.parallelism
    groups: tuple[_GradGroup, ...]
    if workload.job.adapters:
        grads, gather = _adapter_dp_bytes(workload)
        groups = (_GradGroup(grads, par.dp * par.cp, par.tp, gather),)
    else:
        experts = workload.model.routed_expert_params
        dense_bytes = BF16_BYTES * (workload.model.params - experts) / (par.tp * par.pp)
        # expert gradients: ranks holding the same experts sit ``ep`` apart (expert DP)
        expert_bytes = BF16_BYTES * experts / (par.ep * par.pp)
        groups = (
            _GradGroup(dense_bytes, par.dp * par.cp, par.tp, dense_bytes),
            _GradGroup(expert_bytes, par.expert_dp, par.ep, expert_bytes),
        )
    total = tail = 0.0
    window = 0.0
    for group in groups:
        if group.ranks == 1 or group.grad_bytes <= 0:
            continue
        g_total, g_tail, g_window = _dp_group_comm(workload, cluster, compute_s, group, calibration)
        total += g_total
        tail = max(tail, g_tail)
        window = max(window, g_window)
    if total == 0.0:
        return CommTime(0.0, 0.0)
    hidden = min(total - tail, window)
    return CommTime(total - hidden, hidden)


@dataclass(frozen=True, slots=True)
class _GradGroup:
    """Gradient bytes one GPU synchronises over a group of ``ranks`` spaced ``stride`` apart,
    and the weight bytes FSDP gathers (the same, unless LoRA/QLoRA freeze the weights)."""

    grad_bytes: float
    ranks: int
    stride: int
    gather_bytes: float


def _dp_group_comm(
    workload: TrainingWorkload,
    cluster: ClusterSpec,
    compute_s: float,
    group: _GradGroup,
    calibration: Calibration,
) -> tuple[float, float, float]:
    """Total, tail and overlap window of one gradient group (see ``dp_comm``)."""
    par = workload.parallelism
    place = place_group(group.ranks, group.stride, cluster.gpus_per_node)
    grad_bytes = group.grad_bytes
    omega = dp_overlap(workload, cluster, place.nodes, calibration)
    m = workload.microbatches

    def op_time(op: CollectiveOp, message: float) -> float:
        return group_time_s(cluster, op, message, place.ranks_per_node, place.nodes, calibration)

    if par.sharding is Sharding.FSDP:
        layers = max(workload.model.layers / par.pp, 1.0)
        gather = op_time(CollectiveOp.ALL_GATHER, group.gather_bytes / layers)
        scatter = op_time(CollectiveOp.REDUCE_SCATTER, grad_bytes / layers)
        return m * layers * (2 * gather + scatter), m * (gather + scatter), omega * compute_s
    buckets = max(1, math.ceil(grad_bytes / calibration.training.dp_bucket_bytes))
    per_bucket = op_time(CollectiveOp.ALL_REDUCE, grad_bytes / buckets)
    return buckets * per_bucket, per_bucket, omega * compute_s / m


def straggler_time_s(compute_s: float, nodes: int, calibration: Calibration) -> float:
    """Wait for the slowest node at each synchronous step.

    Formula: ``sigma * ln(N) * t_compute``: with exponential-tailed per-node slowdowns of
    relative size ``sigma``, the slowest of ``N`` nodes exceeds the typical one by about
    ``sigma * ln N`` (the maximum of N exponentials); every step waits for it at the
    gradient synchronisation. Zero on one node.
    Source: fitted on the weak-scaling series of data/measurements.json (scripts/calibrate.py).
    """
    if nodes <= 1:
        return 0.0
    return calibration.training.straggler_sigma * math.log(nodes) * compute_s


def step_breakdown(
    workload: TrainingWorkload,
    cluster: ClusterSpec,
    calibration: Calibration,
    compute_s: float | None = None,
) -> StepBreakdown:
    """All parts of one step: compute, bubble and exposed communication.

    Formula: ``t_step = t_compute + t_imbalance + t_bubble + t_tp + t_cp + t_pp + t_dp_exposed
    + t_all_to_all + t_slowdown + t_straggler`` (the bubble is taken on the busiest stage),
    where the communication terms are the exposed parts and
    ``t_slowdown = k * (hidden tp + cp + dp + all-to-all time)``, ``k`` the stack's
    ``overlap_slowdown``: overlapped collectives still take SMs and memory bandwidth from the GEMMs.
    ``compute_s``, when given, is ``compute_time_s`` of the same inputs, already computed.
    Source: perf-model-notes §3.2-3.3 (compute/communication interference: Echo, vTrain).
    """
    compute = compute_time_s(workload, cluster, calibration) if compute_s is None else compute_s
    par = workload.parallelism
    tp = tp_comm(workload, cluster, calibration)
    cp = cp_comm(workload, cluster, calibration)
    dp = dp_comm(workload, cluster, compute, calibration)
    kappa = calibration.stack(workload.stack).overlap_slowdown
    imbalance = stage_imbalance_s(workload, compute)
    a2a = all_to_all_comm(workload, cluster, calibration)
    return StepBreakdown(
        compute_s=compute,
        stage_imbalance_s=imbalance,
        bubble_s=bubble_time_s(compute + imbalance, par.pp, par.vp, workload.microbatches),
        tp_comm_s=tp.exposed_s,
        cp_comm_s=cp.exposed_s,
        pp_comm_s=pp_comm_time_s(workload, cluster, calibration),
        dp_comm_exposed_s=dp.exposed_s,
        all_to_all_s=a2a.exposed_s,
        overlap_slowdown_s=kappa * (tp.hidden_s + cp.hidden_s + dp.hidden_s + a2a.hidden_s),
        straggler_s=straggler_time_s(compute, cluster.nodes, calibration),
    )


def reference_shape(
    workload: TrainingWorkload, cluster: ClusterSpec
) -> tuple[TrainingWorkload, ClusterSpec]:
    """The smallest run with the same per-GPU work, used as the scaling baseline.

    It keeps tp, pp, cp, vp, micro-batch and micro-batches per pipeline, and shrinks data
    parallelism to fill ``k0`` nodes, the fewest that hold whole model replicas
    (``k0 = lcm(tp*pp*cp, g) / g``; one node whenever a replica fits in one node).
    """
    par = workload.parallelism
    replica = par.tp * par.pp * par.cp
    nodes = math.lcm(replica, cluster.gpus_per_node) // cluster.gpus_per_node
    dp = nodes * cluster.gpus_per_node // replica
    if nodes >= cluster.nodes or dp >= par.dp:
        return workload, cluster
    batch = workload.microbatches * workload.micro_batch * dp
    ref_workload = replace(workload, global_batch=batch, parallelism=replace(par, dp=dp))
    return ref_workload, replace(cluster, nodes=nodes)


def scaling_efficiency(
    workload: TrainingWorkload,
    cluster: ClusterSpec,
    step_time_s: float,
    calibration: Calibration,
) -> float:
    """Per-GPU throughput relative to the smallest run with the same per-GPU work.

    Formula: ``eff = min(1, t_step(reference) / t_step)`` — with equal work per GPU, the
    throughput ratio ``(T/t_k)/(k*T_1/t_1)`` reduces to the step-time ratio.
    Source: perf-model-notes §3.2 (outputs).
    """
    ref_workload, ref_cluster = reference_shape(workload, cluster)
    if ref_cluster.nodes == cluster.nodes:
        return 1.0
    ref = step_breakdown(ref_workload, ref_cluster, calibration).total_s
    return min(1.0, ref / step_time_s)


def train_step(
    workload: TrainingWorkload, cluster: ClusterSpec, calibration: Calibration
) -> TrainingResult:
    """Predict one training step: time, throughput, MFU, efficiency and memory.

    Formulas: ``tokens/s/GPU = B*s/(n*t)``; ``model TFLOP/s/GPU = F_model*B*s/(n*t)``;
    ``mfu = model TFLOP/s / dense peak in the step's precision``.
    """
    return training_result(
        workload, cluster, step_breakdown(workload, cluster, calibration), calibration
    )


def training_result(
    workload: TrainingWorkload,
    cluster: ClusterSpec,
    parts: StepBreakdown,
    calibration: Calibration,
) -> TrainingResult:
    """``train_step`` from the step's ``parts`` (``step_breakdown`` of the same inputs).

    The planner already has the breakdown of the layout it chose; this spares computing it twice.
    """
    step = parts.total_s
    speed = step_speed(workload, cluster, step)
    mem = memory_per_gpu(workload, cluster.gpu, calibration)
    return TrainingResult(
        step_time_s=step,
        tokens_per_s_per_gpu=speed.tokens_per_s_per_gpu,
        model_tflops_per_gpu=speed.model_tflops_per_gpu,
        mfu=speed.mfu,
        scaling_efficiency=scaling_efficiency(workload, cluster, step, calibration),
        memory_gib_per_gpu=mem.total_gib,
        fits=mem.fits,
        breakdown=parts,
        memory=mem,
    )


@dataclass(frozen=True, slots=True)
class StepSpeed:
    """The speed outputs of one step time (``training_result`` and check-model share them)."""

    tokens_per_s_per_gpu: float
    model_tflops_per_gpu: float
    mfu: float


def step_speed(workload: TrainingWorkload, cluster: ClusterSpec, step_s: float) -> StepSpeed:
    """Throughput, model TFLOP/s and MFU of a step of ``step_s`` seconds.

    Formulas: ``tokens/s/GPU = B*s/(n*t)``; ``model TFLOP/s/GPU = F_model*B*s/(n*t)``;
    ``mfu = model TFLOP/s / dense peak in the step's precision``.
    """
    tokens = workload.tokens_per_step
    flops = (
        model_flops_per_token(workload.model, workload.seq_len, workload.job, workload.lora_rank)
        * tokens
    )
    tflops = flops / (cluster.gpus * step_s) / _TFLOP
    return StepSpeed(
        tokens_per_s_per_gpu=tokens / (cluster.gpus * step_s),
        model_tflops_per_gpu=tflops,
        mfu=tflops / peak_tflops(cluster.gpu, workload.precision),
    )


def with_parallelism(workload: TrainingWorkload, parallelism: Parallelism) -> TrainingWorkload:
    """The same workload under another layout."""
    return replace(workload, parallelism=parallelism)
