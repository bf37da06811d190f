"""Published fabric measurements of an offer beside the model's prediction for the same run.

The prediction is the model's collective estimate (``model.collectives.collective``) on the
offer's GPU, fabric and advertised per-node bandwidth, with the measurement's collective,
message size, nodes and GPUs per node: the advertised figure turned into the number a buyer
would see, so the two can be read side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import MeasuredFabric, Offer
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import collective
from clusterscout.model.inputs import ClusterSpec, CollectiveOp, CollectiveWorkload

Record = dict[str, Any]


def predicted_busbw_gbs(
    offer: Offer, m: MeasuredFabric, gpus: GpuIndex, calibration: Calibration
) -> float | None:
    """The model's bus bandwidth (GB/s) for the measured run on the advertised offer.

    None when the catalog lacks what the model needs: the offer's fabric kind, its per-node
    bandwidth or the GPU's figures.
    """
    gpu = gpus.spec(offer.gpu)
    if offer.fabric is None or offer.per_node_gbps is None or gpu is None:
        return None
    cluster = ClusterSpec(
        gpu=gpu,
        gpus_per_node=m.gpus_per_node,
        nodes=m.nodes,
        fabric=offer.fabric,
        per_node_gbps=offer.per_node_gbps,
        gpudirect_rdma=offer.gpudirect_rdma,
    )
    work = CollectiveWorkload(op=CollectiveOp(m.collective), message_bytes=m.message_bytes)
    return round(collective(cluster, work, calibration).busbw_gbs, 2)


def predictions(
    offer: Offer, gpus: GpuIndex | None, calibration: Calibration | None
) -> tuple[float | None, ...]:
    """One prediction per measurement of ``offer``, in order; all None without a model."""
    if gpus is None or calibration is None:
        return tuple(None for _ in offer.measured_fabric)
    return tuple(predicted_busbw_gbs(offer, m, gpus, calibration) for m in offer.measured_fabric)


def usable(records: Sequence[Record], collective_name: str = "all_reduce") -> Record | None:
    """The measurement the planner may use in place of the model, or None.

    Only a run the source does not call degraded counts, of the given collective and without
    in-network reduction (SHARP lifts bus bandwidth above what the wire carries, so it says
    nothing about the fabric a plan's data-parallel traffic sees). Among several, the one on
    the most nodes, then the largest message: the closest to a training job's plateau.
    """
    fit = [
        r
        for r in records
        if r["collective"] == collective_name
        and not r["degraded"]
        and not r["in_network_reduction"]
    ]
    if not fit:
        return None
    return max(fit, key=lambda r: (r["nodes"], r["message_bytes"]))


def headline(records: Sequence[Record]) -> Record | None:
    """The measurement a one-line view shows: the usable all-reduce, else the first listed."""
    return usable(records) or (records[0] if records else None)


def human_bytes(size: int) -> str:
    """``8589934592`` -> ``8 GiB``; a whole number of (decimal) GB, as some benchmarks use,
    stays in GB: ``4000000000`` -> ``4 GB``; else the largest binary unit that divides it."""
    if size >= 2**30 and size % 2**30 == 0:
        return f"{size // 2**30} GiB"
    if size >= 10**9 and size % 10**9 == 0:
        return f"{size // 10**9} GB"
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def run_label(record: Record) -> str:
    """``all_reduce 2x8 8 GiB``: collective, nodes x GPUs per node, message size."""
    return (
        f"{record['collective']} {record['nodes']}x{record['gpus_per_node']} "
        f"{human_bytes(record['message_bytes'])}"
    )
