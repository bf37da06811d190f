"""nccl-tests results: a user's logs against the model, and published results per offer."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clusterscout.app.launch import LaunchData
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import FabricKind, Offer
from clusterscout.launch.nccllog import NcclLog, parse_nccl_log
from clusterscout.launch.verdict import Comparison, compare, measurement_records
from clusterscout.model.calibration import Calibration
from clusterscout.model.checkmodel import check

_PARENTHESES = re.compile(r"\(.*?\)")
_FABRIC_WORDS = (
    ("tcpxo", FabricKind.TCPXO),
    ("tcpx", FabricKind.TCPX),
    ("efa", FabricKind.EFA),
    ("roce", FabricKind.ROCE),
    ("infiniband", FabricKind.INFINIBAND),
    ("tcp", FabricKind.ETHERNET),
    ("ethernet", FabricKind.ETHERNET),
)


def fabric_kind(value: Any) -> FabricKind | None:
    """A point's fabric kind: the kind itself, or one named in an older free-text ``fabric``."""
    if not isinstance(value, str):
        return None
    text = value.lower()
    try:
        return FabricKind(text)
    except ValueError:
        return next((kind for word, kind in _FABRIC_WORDS if word in text), None)


@dataclass(frozen=True, slots=True)
class Ingested:
    """One log: what it says, measured against predicted, and its measurement records."""

    log: NcclLog
    comparison: Comparison
    records: tuple[dict[str, Any], ...]


def ingest(
    data: LaunchData,
    calibration: Calibration,
    offer_id: str,
    logs: Sequence[tuple[str, str]],
    nodes: int | None = None,
) -> tuple[Ingested, ...]:
    """Parse each ``(name, text)`` log and compare it with the model's prediction for the offer.

    Raises:
        UnknownOfferError: when the catalog has no such offer.
        NcclLogError: when a log is not nccl-tests output or too broken to read.
        ComparisonError: when the offer or the log lacks what the model needs.
    """
    offer = data.offer(offer_id)
    out = []
    for name, text in logs:
        log = parse_nccl_log(text, name)
        comparison = compare(log, offer, data.gpus, calibration, nodes)
        # A log that names where it was published keeps that page as its source.
        source = log.source_url or name
        out.append(Ingested(log, comparison, tuple(measurement_records(log, comparison, source))))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PublishedResult:
    """A published nccl-tests measurement on an offer's hardware, and the model's prediction."""

    id: str
    op: str
    nodes: int
    gpus_per_node: int | None
    message_bytes: float | None
    metric: str
    unit: str
    measured: float
    predicted: float
    source: str
    source_url: str | None
    confidence: str


def _same_hardware(point: Mapping[str, Any], offer: Offer, gpus: GpuIndex) -> bool:
    """Same GPU, fabric kind and per-node bandwidth, on more than one node."""
    if (point.get("workload") or {}).get("type") != "collective":
        return False
    nodes = point.get("nodes")
    if not isinstance(nodes, int) or nodes < 2:
        return False
    name = point.get("gpu")
    if not isinstance(name, str) or gpus.canonical(_PARENTHESES.sub("", name).strip()) != offer.gpu:
        return False
    if offer.fabric is None or fabric_kind(point.get("fabric")) is not offer.fabric:
        return False
    gbps = point.get("per_node_gbps")
    return offer.per_node_gbps is not None and gbps == offer.per_node_gbps


def published_results(
    data: LaunchData, calibration: Calibration
) -> dict[str, tuple[PublishedResult, ...]]:
    """Offer id -> published multi-node results on its hardware that the model can predict.

    Hardware means GPU model, fabric kind and per-node bandwidth, as the point states them; a
    point stating no bandwidth matches nothing, since the prediction would be for a guess.
    Reads both shapes of ``measurements.json`` points (free-text ``fabric`` and ``source``, or
    a fabric kind with ``source_url``).
    """
    index = GpuIndex.of(data.gpus)
    matches = {
        offer.id: [p for p in data.measurements if _same_hardware(p, offer, index)]
        for offer in data.offers.values()
    }
    wanted = {str(p.get("id")): p for points in matches.values() for p in points}
    report = check(list(wanted.values()), data.gpus, calibration)
    predicted = {r.id: r for r in report.results}
    out: dict[str, tuple[PublishedResult, ...]] = {}
    for offer_id, points in matches.items():
        rows = []
        for p in points:
            r = predicted.get(str(p.get("id")))
            if r is None:
                continue  # the model cannot express it: nothing to show it next to
            work = p.get("workload") or {}
            size = work.get("message_bytes")
            url = p.get("source_url")
            rows.append(
                PublishedResult(
                    id=r.id,
                    op=str(work.get("op", "all_reduce")),
                    nodes=int(p["nodes"]),
                    gpus_per_node=p.get("gpus_per_node"),
                    message_bytes=float(size) if isinstance(size, int | float) else None,
                    metric=r.metric,
                    unit=r.unit,
                    measured=r.measured,
                    predicted=r.predicted,
                    source=str(p.get("source") or ""),
                    source_url=url if isinstance(url, str) and url.startswith("https://") else None,
                    confidence=r.confidence,
                )
            )
        if rows:
            out[offer_id] = tuple(rows)
    return out
