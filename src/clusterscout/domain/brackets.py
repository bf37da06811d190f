"""Fabric brackets: the lowest and highest per-node Gbit/s shipped per fabric kind and GPU class."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from clusterscout.domain.models import FabricKind, Source

OPEN_MARKET_FABRICS = (FabricKind.INFINIBAND, FabricKind.ROCE, FabricKind.ETHERNET)
"""What an offer of unknown fabric can be: the fabrics any operator can build. EFA and Google's
TCPX/TCPXO exist only on their own clouds, whose offers always name them."""


@dataclass(frozen=True, slots=True)
class FabricBracket:
    """Per-node Gbit/s of one fabric kind on one GPU generation, lowest and highest shipped.

    Each end carries the public source that shows a node built that way.
    """

    fabric: FabricKind
    generation: str
    gpus: tuple[str, ...]
    low_gbps: float
    high_gbps: float
    low_source: Source
    high_source: Source
    note: str | None = None


@dataclass(frozen=True, slots=True)
class NodeSize:
    """GPUs per node of a GPU generation's standard board, for offers that do not state it."""

    generation: str
    gpus: tuple[str, ...]
    gpus_per_node: int
    source: Source


def node_size_for(sizes: Iterable[NodeSize], gpu: str) -> NodeSize | None:
    """The standard node size of ``gpu``'s generation, or None."""
    return next((s for s in sizes if gpu in s.gpus), None)


@dataclass(frozen=True, slots=True)
class NetworkCase:
    """One end of an assumed network: fabric kind, Gbit/s per node and GPUDirect RDMA."""

    fabric: FabricKind
    per_node_gbps: float
    gpudirect_rdma: bool | None


@dataclass(frozen=True, slots=True)
class AssumedNetwork:
    """The network an offer is evaluated on when a fact is unknown: its two ends.

    ``low`` is the pessimistic end (the slowest network shipped for the offer's fabric and GPU
    class, GPUDirect RDMA missing when unknown), ``high`` the optimistic one. ``fields`` names
    the facts that were unknown (``fabric``, ``per_node_gbps``, ``gpudirect_rdma``).
    """

    low: NetworkCase
    high: NetworkCase
    fields: tuple[str, ...]
    brackets: tuple[FabricBracket, ...] = ()

    @property
    def label(self) -> str:
        """``assumed 800-3200 Gbit/s`` (one figure when both ends agree), plus what else.

        >>> lo = NetworkCase(FabricKind.ROCE, 800.0, False)
        >>> AssumedNetwork(lo, NetworkCase(FabricKind.ROCE, 3200.0, True),
        ...                ("per_node_gbps", "gpudirect_rdma")).label
        'assumed 800-3200 Gbit/s, GPUDirect RDMA with and without'
        """
        lo, hi = self.low.per_node_gbps, self.high.per_node_gbps
        parts = [f"assumed {lo:g} Gbit/s" if lo == hi else f"assumed {lo:g}-{hi:g} Gbit/s"]
        if "fabric" in self.fields:
            kinds = sorted({self.low.fabric.value, self.high.fabric.value})
            parts.append("fabric " + " or ".join(kinds))
        if "gpudirect_rdma" in self.fields and self.low.gpudirect_rdma != self.high.gpudirect_rdma:
            parts.append("GPUDirect RDMA with and without")
        return ", ".join(parts)


def bracket_for(
    brackets: Iterable[FabricBracket], fabric: FabricKind, gpu: str
) -> FabricBracket | None:
    """The bracket of ``fabric`` on the generation that holds ``gpu`` (canonical name), or None."""
    return next((b for b in brackets if b.fabric is fabric and gpu in b.gpus), None)


_RDMA = frozenset({FabricKind.INFINIBAND, FabricKind.ROCE, FabricKind.EFA})


def assume_network(
    brackets: Iterable[FabricBracket],
    gpu: str,
    fabric: FabricKind | None,
    per_node_gbps: float | None,
    gpudirect_rdma: bool | None,
) -> AssumedNetwork | None:
    """The two ends an offer is evaluated at, or None when nothing needs assuming or no bracket
    covers it.

    A known fact always wins: a known Gbit/s is used at both ends, a known fabric picks its own
    bracket. An unknown fabric spans the open-market fabrics' brackets for the GPU (the slowest
    low end, the fastest high end). Unknown GPUDirect RDMA on an RDMA fabric is missing at the
    low end and present at the high end.
    """
    brackets = tuple(brackets)
    fields: list[str] = []
    if fabric is None:
        found = [b for k in OPEN_MARKET_FABRICS if (b := bracket_for(brackets, k, gpu))]
        if not found:
            return None
        # On a tie the slower kind is the pessimistic end: Ethernet, then RoCE, then InfiniBand.
        low_b = min(found, key=lambda b: (b.low_gbps, OPEN_MARKET_FABRICS[::-1].index(b.fabric)))
        high_b = max(found, key=lambda b: (b.high_gbps, OPEN_MARKET_FABRICS[::-1].index(b.fabric)))
        fields.append("fabric")
        low_kind, high_kind = low_b.fabric, high_b.fabric
        used: tuple[FabricBracket, ...] = tuple(dict.fromkeys((low_b, high_b)))
        lo, hi = low_b.low_gbps, high_b.high_gbps
    else:
        low_kind = high_kind = fabric
        b = bracket_for(brackets, fabric, gpu)
        used = (b,) if b is not None and per_node_gbps is None else ()
        lo = hi = per_node_gbps or 0.0
        if per_node_gbps is None:
            if b is None:
                return None
            lo, hi = b.low_gbps, b.high_gbps
    if per_node_gbps is None:
        fields.append("per_node_gbps")
    else:
        lo = hi = per_node_gbps
    rdma_lo = rdma_hi = gpudirect_rdma
    if gpudirect_rdma is None and (low_kind in _RDMA or high_kind in _RDMA):
        fields.append("gpudirect_rdma")
        rdma_lo, rdma_hi = (False if low_kind in _RDMA else None), True
    if not fields:
        return None
    return AssumedNetwork(
        NetworkCase(low_kind, lo, rdma_lo),
        NetworkCase(high_kind, hi, rdma_hi if high_kind in _RDMA else None),
        tuple(fields),
        used,
    )
