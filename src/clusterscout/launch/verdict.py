"""Measured nccl-tests bus bandwidth against the model's prediction for an offer, and a verdict.

The prediction is the model's collective estimate (``model.estimate``) for the offer's GPU,
fabric and per-node bandwidth at every message size in the log. The verdict reads the ratio
at 1 GiB (or the nearest size the log has): the size where a healthy fabric is close to its
plateau and latency no longer dominates.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clusterscout.domain.errors import InputError
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import FabricKind, GpuSpec, Offer
from clusterscout.launch.nccllog import NcclLog
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import collective
from clusterscout.model.estimate import cluster_spec
from clusterscout.model.inputs import CollectiveWorkload
from clusterscout.model.scenario import parse_scenario

REFERENCE_BYTES = 2**30
OK_RATIO = 0.8
"""At or above this share of the prediction the fabric is taken to deliver (the model's own
90th-percentile error on published points is about 25%, see ``clusterscout check-model``)."""
HIGH_RATIO = 1.25
"""Above this the measurement beats the model by more than its error: worth calibrating on."""

ADVICE: dict[FabricKind, str] = {
    FabricKind.INFINIBAND: (
        "check GPUDirect RDMA (nvidia-peermem), that NCCL uses NET/IB on every HCA "
        "(NCCL_IB_HCA) and the topology file"
    ),
    FabricKind.ROCE: (
        "check GPUDirect RDMA, the RoCE GID index and traffic class, and that NCCL uses "
        "NET/IB on every RDMA NIC"
    ),
    FabricKind.EFA: (
        "check that NCCL loads the aws-ofi-nccl plugin (NET/OFI in the log), that every EFA "
        "interface is attached (fi_info -p efa) and GPUDirect RDMA"
    ),
    FabricKind.TCPXO: (
        "check that the GPUDirect-TCPXO plugin and its receive data path manager run and that "
        "NCCL uses the plugin, not NET/Socket"
    ),
    FabricKind.TCPX: (
        "check that the GPUDirect-TCPX plugin and its receive data path manager run and that "
        "NCCL uses the plugin, not NET/Socket"
    ),
    FabricKind.ETHERNET: (
        "check that NCCL_SOCKET_IFNAME picks the fast NIC and the socket thread settings"
    ),
}
MODEL_OPS = ("all_reduce", "all_gather", "reduce_scatter")


class ComparisonError(ValueError):
    """The log and the offer do not give enough to predict; the message says what is missing."""


@dataclass(frozen=True, slots=True)
class SizePoint:
    """One message size: measured out-of-place busbw and the model's prediction (GB/s)."""

    size_bytes: int
    measured_busbw_gbs: float
    predicted_busbw_gbs: float

    @property
    def ratio(self) -> float:
        """measured / predicted."""
        return self.measured_busbw_gbs / self.predicted_busbw_gbs


@dataclass(frozen=True, slots=True)
class Comparison:
    """Measured vs predicted for one log on one offer, with the verdict."""

    offer: Offer
    op: str
    nodes: int
    gpus_per_node: int
    ranks_per_node: int
    """GPUs of each node the run used; fewer than ``gpus_per_node`` for a subset run."""
    points: tuple[SizePoint, ...]
    reference: SizePoint
    status: str
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (GB/s, bytes)."""
        return {
            "offer": self.offer.id,
            "op": self.op,
            "nodes": self.nodes,
            "gpus_per_node": self.gpus_per_node,
            "ranks_per_node": self.ranks_per_node,
            "status": self.status,
            "verdict": self.verdict,
            "reference_bytes": self.reference.size_bytes,
            "ratio": self.reference.ratio,
            "points": [
                {
                    "message_bytes": p.size_bytes,
                    "measured_busbw_gbs": p.measured_busbw_gbs,
                    "predicted_busbw_gbs": p.predicted_busbw_gbs,
                }
                for p in self.points
            ],
        }


def human_bytes(size: int) -> str:
    """``1073741824`` -> ``1 GiB``; ``8`` -> ``8 B``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def _shape(log: NcclLog, offer: Offer, nodes: int | None) -> tuple[int, int, int]:
    """Nodes, GPUs per node of the offer, and ranks per node of the run.

    The run may use part of each node (``-g 4`` on 8-GPU nodes): the ranks per node come
    from the device lines (ranks on each host), else from the ranks over the node count.
    """
    gpn = offer.gpus_per_node
    nodes = nodes or log.nodes
    if nodes is None and log.ranks is not None and gpn:
        nodes = log.ranks // gpn if log.ranks % gpn == 0 else None
    if nodes is None:
        msg = f"{log.name}: the log does not show how many nodes ran; give the node count"
        raise ComparisonError(msg)
    if gpn is None:
        msg = f"the catalog does not state GPUs per node for {offer.id}"
        raise ComparisonError(msg)
    if log.nodes is not None and log.nodes != nodes:
        msg = f"{log.name}: the device lines show {log.nodes} nodes, not {nodes}"
        raise ComparisonError(msg)
    if log.ranks is None:
        return nodes, gpn, gpn  # no device lines at all: nothing says the nodes were not full
    if len(set(log.ranks_per_node)) > 1:
        spread = " + ".join(str(n) for n in log.ranks_per_node)
        msg = f"{log.name}: ranks are spread unevenly over the nodes ({spread}); the model "
        msg += "predicts the same number of GPUs on every node"
        raise ComparisonError(msg)
    if log.ranks % nodes:
        msg = f"{log.name}: {log.ranks} ranks do not split evenly over {nodes} nodes"
        raise ComparisonError(msg)
    per_node = log.ranks // nodes
    if per_node > gpn:
        msg = (
            f"{log.name}: {log.ranks} ranks on {nodes} nodes is {per_node} per node, "
            f"but {offer.id} has {gpn} GPUs per node"
        )
        raise ComparisonError(msg)
    return nodes, gpn, per_node


def _reference(points: Sequence[SizePoint]) -> SizePoint:
    return min(points, key=lambda p: (abs(p.size_bytes - REFERENCE_BYTES), -p.size_bytes))


def compare(
    log: NcclLog,
    offer: Offer,
    gpus: Sequence[GpuSpec],
    calibration: Calibration,
    nodes: int | None = None,
) -> Comparison:
    """Predict every message size of ``log`` on ``offer`` and judge the fabric.

    Raises:
        ComparisonError: when the offer lacks the fabric or bandwidth the model needs, the
            collective is not modelled, or the node count is unknown or inconsistent.
    """
    if offer.fabric is None or offer.per_node_gbps is None:
        msg = f"the catalog does not state the fabric and per-node bandwidth of {offer.id}"
        raise ComparisonError(msg)
    if log.op not in MODEL_OPS:
        raise ComparisonError(
            f"the model does not predict {log.op} (it does {', '.join(MODEL_OPS)})"
        )
    nodes, gpn, per_node = _shape(log, offer, nodes)
    try:
        gpu = GpuIndex.of(gpus).require(offer.gpu, "cluster.gpu")
    except InputError as exc:
        raise ComparisonError(exc.message) from None
    cluster: dict[str, Any] = {
        "gpu": gpu.name,
        "gpus_per_node": gpn,
        "nodes": nodes,
        "fabric": offer.fabric.value,
        "per_node_gbps": offer.per_node_gbps,
    }
    if offer.gpudirect_rdma is not None:
        cluster["gpudirect_rdma"] = offer.gpudirect_rdma
    points: list[SizePoint] = []
    for row in log.rows:
        if row.busbw_gbs <= 0:
            continue  # nccl-tests prints 0.00 for the smallest sizes: nothing to compare
        scenario = parse_scenario(
            {
                "cluster": cluster,
                "workload": {"kind": "collective", "op": log.op, "message_bytes": row.size_bytes},
            }
        )
        spec = cluster_spec(scenario.cluster, gpu)
        work = scenario.workload
        if not isinstance(work, CollectiveWorkload):  # a collective scenario always gives one
            raise ComparisonError(f"the model gave no collective estimate for {log.op}")
        # The model's own subset rule: each node's share of its NICs follows its ranks.
        predicted = collective(spec, work, calibration, per_node).busbw_gbs
        points.append(SizePoint(row.size_bytes, row.busbw_gbs, predicted))
    if not points:
        raise ComparisonError(f"{log.name}: every row has zero bus bandwidth")
    ref = _reference(points)
    status, verdict = _verdict(ref, offer.fabric)
    if per_node < gpn:
        verdict = f"{verdict} (measured on {per_node} of the {gpn} GPUs of each node)"
    return Comparison(offer, log.op, nodes, gpn, per_node, tuple(points), ref, status, verdict)


def _verdict(ref: SizePoint, fabric: FabricKind) -> tuple[str, str]:
    pct = ref.ratio * 100
    at = human_bytes(ref.size_bytes)
    head = f"delivers {pct:.0f}% of what this fabric should at {at}"
    if ref.ratio < OK_RATIO:
        return "low", f"{head}: {ADVICE[fabric]}"
    if ref.ratio > HIGH_RATIO:
        return "high", f"{head}: faster than the model predicts; worth adding to calibration"
    return "ok", f"{head}: within the model's error, the fabric performs as advertised"


_SLUG = re.compile(r"[^a-z0-9]+")


def measurement_records(log: NcclLog, comparison: Comparison, source: str) -> list[dict[str, Any]]:
    """One ``data/measurements.json`` collective point per message size with busbw > 0.

    The structured point shape (``schema_version`` 2): ``check-model`` can express every
    record, since GPU, nodes, fabric kind and per-node bandwidth come from the offer and the
    message size and the measured out-of-place busbw from the log. ``source`` is the log's
    public page when it has one (``source_url`` then), else whatever names the run.
    """
    offer = comparison.offer
    c = comparison
    base = _SLUG.sub("-", f"{offer.id}-{log.op}-{c.nodes}n").strip("-")
    gbps = offer.per_node_gbps or 0.0
    note = f"the catalog's {offer.id}: {gbps:g} Gb/s per node"
    if c.ranks_per_node < c.gpus_per_node:
        # The run used part of each node: record the cluster it ran on, with the NIC share
        # the model gives those GPUs (one NIC per GPU), so check-model predicts the same.
        base = f"{base}-{c.ranks_per_node}of{c.gpus_per_node}"
        gbps = gbps * c.ranks_per_node / c.gpus_per_node
        note += f"; {c.ranks_per_node} of its {c.gpus_per_node} GPUs per node ran"
    version = f"; NCCL {log.nccl_version}" if log.nccl_version else ""
    url = source if source.startswith("https://") else None
    return [
        {
            "id": f"{base}-{p.size_bytes}b",
            "source": f"nccl-tests log {log.name} on {offer.id}",
            "source_url": url,
            # The person who ran the test is its author: a primary source once published.
            "source_kind": "primary",
            "published_on": None,
            "where": None,
            "series": base,  # the sizes of one run form a series
            "gpu": offer.gpu,
            "gpus_per_node": c.ranks_per_node,
            "nodes": c.nodes,
            "fabric": offer.fabric.value if offer.fabric else None,
            "per_node_gbps": gbps,
            "fabric_note": note,
            "workload": {
                "type": "collective",
                "op": log.op,
                "tool": f"nccl-tests {log.op}_perf",
                "gpus": c.nodes * c.ranks_per_node,
                "message_bytes": p.size_bytes,
                "algorithm": None,
            },
            "metric": "busbw",
            "value": p.measured_busbw_gbs,
            "unit": "GB/s",
            "flops_convention": None,
            "unstated": {},
            "notes": f"Out-of-place busbw from {source}{version}.",
            "confidence": "medium" if not log.warnings else "low",
        }
        for p in comparison.points
    ]
