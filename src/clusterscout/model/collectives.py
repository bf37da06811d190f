"""Collective communication time: an alpha-beta model with two levels (NVLink, fabric).

Conventions follow nccl-tests (``doc/PERFORMANCE.md`` @03a204a): ``S`` is the whole buffer in
bytes, ``algbw = S / t`` and ``busbw = algbw * f(n)`` with ``f = 2(n-1)/n`` for all-reduce and
``(n-1)/n`` for all-gather and reduce-scatter. Bandwidths are GB/s (10^9 bytes per second).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.domain.units import gbps_to_gbytes_per_s
from clusterscout.model.calibration import Calibration, FabricCalibration
from clusterscout.model.inputs import Algorithm, ClusterSpec, CollectiveOp, CollectiveWorkload

_GB = 1e9
_RDMA_FABRICS = frozenset({FabricKind.INFINIBAND, FabricKind.ROCE, FabricKind.EFA})


@dataclass(frozen=True, slots=True)
class CollectiveResult:
    """Predicted time and bandwidths of one collective (nccl-tests definitions)."""

    time_s: float
    algbw_gbs: float
    busbw_gbs: float


def busbw_factor(op: CollectiveOp, ranks: int) -> float:
    """nccl-tests bus-bandwidth factor ``f(n)``.

    Formula: all-reduce ``2(n-1)/n``; all-gather, reduce-scatter and all-to-all ``(n-1)/n``.
    Source: NVIDIA/nccl-tests doc/PERFORMANCE.md. Assumes ``ranks >= 1`` (0 for one rank).
    """
    steps = (ranks - 1) / ranks
    return 2 * steps if op is CollectiveOp.ALL_REDUCE else steps


def nvls_capable(gpu: GpuSpec, calibration: Calibration) -> bool:
    """True when the GPU's nodes have NVSwitch with NVLink SHARP (listed in calibration)."""
    return gpu.name in calibration.intra_node.nvls_gpus


def intra_node_busbw_gbs(
    gpu: GpuSpec, op: CollectiveOp, algorithm: Algorithm, calibration: Calibration
) -> float:
    """Large-message bus bandwidth of a collective inside one node.

    Formula: ``eta * scale_up_gbs / 2``, where ``scale_up_gbs`` is the published bidirectional
    NVLink/xGMI rate per GPU and ``eta`` is the ring efficiency, or the NVLS efficiency for an
    all-reduce on NVLS-capable nodes when the algorithm is ``auto``. Without a scale-up link the
    PCIe bus bandwidth from calibration applies.
    Source: measurements nccl-ref-1node-*, nccl-a100-1node-16GiB, nccl-h200-1node-ring-16GiB.
    """
    intra = calibration.intra_node
    if gpu.scale_up_gbs is None:
        return intra.pcie_busbw_gbs
    one_way_gbs = gpu.scale_up_gbs / 2
    use_nvls = (
        op is CollectiveOp.ALL_REDUCE
        and algorithm is Algorithm.AUTO
        and nvls_capable(gpu, calibration)
    )
    return one_way_gbs * (intra.nvls_efficiency if use_nvls else intra.ring_efficiency)


def fabric_calibration(cluster: ClusterSpec, calibration: Calibration) -> FabricCalibration:
    """Constants of the cluster's fabric kind.

    Raises:
        ValueError: when the cluster has no fabric or no per-node bandwidth.
    """
    if cluster.fabric is None or cluster.per_node_gbps is None:
        msg = "a multi-node collective needs the fabric and its per-node Gbit/s"
        raise ValueError(msg)
    return calibration.fabrics[cluster.fabric]


def canonical_network(cluster: ClusterSpec) -> ClusterSpec:
    """The same cluster with the network facts no estimate reads cleared.

    One node never uses its fabric; GPUDirect RDMA only counts when it is known to be missing
    on an RDMA fabric (unknown is assumed present; TCP-class fabrics have none to lose). Two
    clusters with equal canonical networks get equal estimates, so callers can share them.
    """
    if cluster.nodes == 1:
        return replace(cluster, fabric=None, per_node_gbps=None, gpudirect_rdma=None)
    missing = cluster.gpudirect_rdma is False and cluster.fabric in _RDMA_FABRICS
    return replace(cluster, gpudirect_rdma=False if missing else None)


def inter_node_busbw_gbs(
    cluster: ClusterSpec, ranks_per_node: int, calibration: Calibration
) -> float:
    """Large-message bus bandwidth of the inter-node level for one group of ranks.

    Formula: ``eta_fabric * (per_node_gbps / 8) * (ranks_per_node / gpus_per_node)``, times
    ``no_gpudirect_factor`` on an RDMA fabric without GPUDirect RDMA, capped by the fabric's
    per-node cap (TCP sockets) scaled the same way.
    Assumptions: rail-optimised nodes (one NIC per GPU), so a group that uses ``r`` of the
    node's ``g`` GPUs gets ``r/g`` of the NIC aggregate while the other groups run in parallel.
    Source: perf-model-notes §3.1; measurements nccl-ref-dgx*-multinode, nccl-p6b200-4node-4GiB.
    """
    fab = fabric_calibration(cluster, calibration)
    share = ranks_per_node / cluster.gpus_per_node
    node_gbs = gbps_to_gbytes_per_s(cluster.per_node_gbps or 0.0)
    busbw = fab.bus_efficiency * node_gbs * share
    if cluster.gpudirect_rdma is False and cluster.fabric in _RDMA_FABRICS:
        busbw *= calibration.no_gpudirect_factor
    if fab.busbw_cap_gbs is not None:
        busbw = min(busbw, fab.busbw_cap_gbs * share)
    return busbw


def plateau_busbw_gbs(
    cluster: ClusterSpec,
    op: CollectiveOp,
    algorithm: Algorithm,
    ranks_per_node: int,
    nodes: int,
    calibration: Calibration,
) -> float:
    """Large-message bus bandwidth of a group spanning ``nodes`` nodes.

    Formula:
      * one node: the intra-node bus bandwidth;
      * two NVLS-capable nodes, all-reduce, algorithm auto (NCCL picks tree/NVLSTree):
        ``min(B_in, B_net * 2(n-1)/n)`` — each node sends its reduced buffer once, so algbw
        equals the NIC rate and busbw exceeds it (nccl-tests #196/#290);
      * otherwise (ring, or 3+ nodes): ``min(B_in, B_net)``.
    Source: perf-model-notes §3.1; measurements nccl-gcp-a4-2node-8GiB, nccl-a100-2node-4x200g.
    """
    intra = intra_node_busbw_gbs(cluster.gpu, op, algorithm, calibration)
    if nodes == 1:
        return intra
    inter = inter_node_busbw_gbs(cluster, ranks_per_node, calibration)
    ranks = ranks_per_node * nodes
    two_node_tree = (
        nodes == 2
        and op is CollectiveOp.ALL_REDUCE
        and algorithm is Algorithm.AUTO
        and nvls_capable(cluster.gpu, calibration)
    )
    if two_node_tree:
        return min(intra, inter * busbw_factor(op, ranks))
    return min(intra, inter)


def alpha_beta_time_s(
    op: CollectiveOp,
    message_bytes: float,
    ranks: int,
    busbw_gbs: float,
    latency_s: float,
    ramp_latency_s: float,
    ll_bandwidth_fraction: float,
) -> float:
    """Time of one collective from the two-protocol alpha-beta model.

    Formula: ``t = min(a_ll + f*S/(r_ll*B), a_bw + f*S/B)`` with ``f`` the busbw factor,
    ``B`` the plateau bus bandwidth, ``a_ll`` the small-message latency of the low-latency
    protocol (bandwidth ``r_ll*B``) and ``a_bw`` the effective start-up of the bandwidth
    protocol. This mirrors NCCL choosing LL for small and Simple for large messages
    (https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc: ``time = lat + bytes / bw``
    per protocol).
    Assumes ``ranks >= 2``.
    """
    volume_gb = busbw_factor(op, ranks) * message_bytes / _GB
    t_ll = latency_s + volume_gb / (ll_bandwidth_fraction * busbw_gbs)
    t_bw = ramp_latency_s + volume_gb / busbw_gbs
    return min(t_ll, t_bw)


def group_time_s(
    cluster: ClusterSpec,
    op: CollectiveOp,
    message_bytes: float,
    ranks_per_node: int,
    nodes: int,
    calibration: Calibration,
    algorithm: Algorithm = Algorithm.AUTO,
) -> float:
    """Time of one collective over a group of ``ranks_per_node * nodes`` GPUs.

    Uses the intra-node latencies for a one-node group and the fabric's otherwise; see
    ``plateau_busbw_gbs`` and ``alpha_beta_time_s``. A group of one rank takes no time.
    """
    ranks = ranks_per_node * nodes
    if ranks <= 1 or message_bytes <= 0:
        return 0.0
    if op is CollectiveOp.ALL_TO_ALL:
        return all_to_all_time_s(cluster, message_bytes, ranks_per_node, nodes, calibration)
    busbw = plateau_busbw_gbs(cluster, op, algorithm, ranks_per_node, nodes, calibration)
    if nodes == 1:
        latency_s = calibration.intra_node.latency_s
        ramp_s = calibration.intra_node.ramp_latency_s
    else:
        fab = fabric_calibration(cluster, calibration)
        latency_s, ramp_s = fab.latency_s, fab.ramp_latency_s
    return alpha_beta_time_s(
        op, message_bytes, ranks, busbw, latency_s, ramp_s, calibration.ll_bandwidth_fraction
    )


@dataclass(frozen=True, slots=True)
class AllToAllParts:
    """Bytes one rank sends to peers on its node and off its node in one all-to-all."""

    intra_bytes: float
    inter_bytes: float


def all_to_all_split(message_bytes: float, ranks_per_node: int, nodes: int) -> AllToAllParts:
    """Where the ``S`` bytes of one rank go when they are spread evenly over the group.

    Formula: with ``n = r * N`` ranks, ``r`` of them on each node: ``S * (r-1)/n`` to the
    other ranks of its node, ``S * (1 - r/n)`` off the node (the share ``1/n`` to itself
    stays in place).
    """
    ranks = ranks_per_node * nodes
    return AllToAllParts(
        intra_bytes=message_bytes * (ranks_per_node - 1) / ranks,
        inter_bytes=message_bytes * (1.0 - ranks_per_node / ranks),
    )


def all_to_all_time_s(
    cluster: ClusterSpec,
    message_bytes: float,
    ranks_per_node: int,
    nodes: int,
    calibration: Calibration,
) -> float:
    """Time of one all-to-all in which each rank sends ``S`` bytes spread over the group.

    Formula: ``t = a + max(S_in / B_in, S_out / B_out)`` (``all_to_all_split``):
    the NVLink and the NIC parts run at once. ``B_in`` is the one-way intra-node ring bus
    bandwidth; ``B_out`` the per-GPU share of the node's fabric bandwidth, ``eta_fabric *
    per_node_gbps/8 / g`` (every GPU of the node sends at once, each through its own NIC on
    a rail-optimised node), with the fabric's TCP cap and GPUDirect factor as for the other
    collectives; ``a`` the bandwidth protocol's
    start-up of the slowest level. So a weaker fabric (Ethernet sockets, no RDMA) slows only
    the part that leaves the node, and an EP group inside one node never touches the fabric.
    Source: nccl-tests doc/PERFORMANCE.md (alltoall busbw ``(n-1)/n``); Megatron-Core MoE
    docs (token dispatcher: all-to-all per MoE layer).
    """
    ranks = ranks_per_node * nodes
    if ranks <= 1 or message_bytes <= 0:
        return 0.0
    parts = all_to_all_split(message_bytes, ranks_per_node, nodes)
    intra_bw = intra_node_busbw_gbs(
        cluster.gpu, CollectiveOp.ALL_GATHER, Algorithm.RING, calibration
    )
    t_in = parts.intra_bytes / (intra_bw * _GB)
    if nodes == 1:
        return calibration.intra_node.ramp_latency_s + t_in
    fab = fabric_calibration(cluster, calibration)
    inter_bw = inter_node_busbw_gbs(cluster, 1, calibration)
    t_out = parts.inter_bytes / (inter_bw * _GB)
    return fab.ramp_latency_s + max(t_in, t_out)


def p2p_time_s(
    cluster: ClusterSpec, message_bytes: float, inter_node: bool, calibration: Calibration
) -> float:
    """Time of one point-to-point send between pipeline stages.

    Formula: ``a + S/B`` with ``B`` the intra-node one-way bandwidth, or the per-GPU share
    of the fabric (``eta * per_node_gbps/8 / g``) when the stages sit on different nodes.
    Source: perf-model-notes §3.2 (PP point-to-point).
    """
    if message_bytes <= 0:
        return 0.0
    if not inter_node:
        busbw = intra_node_busbw_gbs(
            cluster.gpu, CollectiveOp.ALL_GATHER, Algorithm.RING, calibration
        )
        return calibration.intra_node.latency_s + message_bytes / (busbw * _GB)
    busbw = inter_node_busbw_gbs(cluster, 1, calibration)
    latency_s = fabric_calibration(cluster, calibration).latency_s
    return latency_s + message_bytes / (busbw * _GB)


def collective(
    cluster: ClusterSpec,
    workload: CollectiveWorkload,
    calibration: Calibration,
    ranks_per_node: int | None = None,
) -> CollectiveResult:
    """One collective over every GPU of the cluster (or ``ranks_per_node`` of each node's
    GPUs, as nccl-tests run with ``-g 4`` on 8-GPU nodes), reported like nccl-tests.

    Formula: ``t`` from ``group_time_s`` with those GPUs of each node in the group;
    ``algbw = S/t``; ``busbw = algbw * f(n)``.
    """
    per_node = ranks_per_node or cluster.gpus_per_node
    ranks = per_node * cluster.nodes
    t = group_time_s(
        cluster,
        workload.op,
        workload.message_bytes,
        per_node,
        cluster.nodes,
        calibration,
        workload.algorithm,
    )
    algbw = workload.message_bytes / t / _GB
    return CollectiveResult(
        time_s=t, algbw_gbs=algbw, busbw_gbs=algbw * busbw_factor(workload.op, ranks)
    )
