"""Fabric brackets: which network an offer with unknown facts is evaluated on, at both ends."""

from __future__ import annotations

from datetime import date

from clusterscout.domain.brackets import (
    FabricBracket,
    NodeSize,
    assume_network,
    bracket_for,
    node_size_for,
)
from clusterscout.domain.models import FabricKind, Source

SRC = Source(id="s", url="https://example.org/s", checked_on=date(2026, 12, 1))
IB = FabricKind.INFINIBAND
ROCE = FabricKind.ROCE
GPUS = ("H100", "H200")


def _b(kind: FabricKind, low: float, high: float) -> FabricBracket:
    return FabricBracket(kind, "hopper", GPUS, low, high, SRC, SRC)


BRACKETS = (_b(IB, 800, 3200), _b(ROCE, 800, 3200), _b(FabricKind.EFA, 3200, 3200))


def test_known_facts_win_and_nothing_is_assumed_when_all_are_known() -> None:
    assert assume_network(BRACKETS, "H100", IB, 1600.0, True) is None
    # Known Gbit/s, unknown RDMA: only RDMA is ranged, the Gbit/s stays the offer's.
    a = assume_network(BRACKETS, "H100", IB, 1600.0, None)
    assert a is not None
    assert a.fields == ("gpudirect_rdma",)
    assert (a.low.per_node_gbps, a.high.per_node_gbps) == (1600.0, 1600.0)
    assert (a.low.gpudirect_rdma, a.high.gpudirect_rdma) == (False, True)
    assert a.brackets == ()
    assert a.label == "assumed 1600 Gbit/s, GPUDirect RDMA with and without"


def test_unknown_gbps_takes_its_own_fabric_bracket() -> None:
    a = assume_network(BRACKETS, "H200", IB, None, False)
    assert a is not None
    assert a.fields == ("per_node_gbps",)
    assert (a.low.per_node_gbps, a.high.per_node_gbps) == (800.0, 3200.0)
    assert a.low.fabric is a.high.fabric is IB
    assert a.label == "assumed 800-3200 Gbit/s"
    # No bracket for the pair: nothing can be assumed.
    assert assume_network(BRACKETS, "B200", IB, None, None) is None
    assert assume_network(BRACKETS, "H100", FabricKind.TCPX, None, None) is None


def test_unknown_fabric_spans_open_market_fabrics_slowest_kind_first() -> None:
    a = assume_network(BRACKETS, "H100", None, None, None)
    assert a is not None
    assert a.fields == ("fabric", "per_node_gbps", "gpudirect_rdma")
    # Equal ends: RoCE is the pessimistic kind, InfiniBand the optimistic; EFA never counts.
    assert (a.low.fabric, a.high.fabric) == (ROCE, IB)
    assert (a.low.gpudirect_rdma, a.high.gpudirect_rdma) == (False, True)
    assert "fabric infiniband or roce" in a.label
    known_gbps = assume_network(BRACKETS, "H100", None, 3200.0, True)
    assert known_gbps is not None
    assert (known_gbps.low.per_node_gbps, known_gbps.high.per_node_gbps) == (3200.0, 3200.0)
    assert assume_network(BRACKETS, "MI300X", None, None, None) is None
    # A TCP-class fabric has no GPUDirect RDMA to assume.
    eth = (_b(FabricKind.ETHERNET, 400, 400),)
    plain = assume_network(eth, "H100", None, None, None)
    assert plain is not None
    assert plain.fields == ("fabric", "per_node_gbps")
    assert plain.low.gpudirect_rdma is None and plain.high.gpudirect_rdma is None


def test_lookups() -> None:
    assert bracket_for(BRACKETS, ROCE, "H200") is BRACKETS[1]
    assert bracket_for(BRACKETS, ROCE, "A100") is None
    size = NodeSize("hopper", GPUS, 8, SRC)
    assert node_size_for([size], "H100") is size
    assert node_size_for([size], "GB200") is None
