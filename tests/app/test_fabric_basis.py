"""A plan's network figure rests on a published run on the offer: scaled down, never up."""

from __future__ import annotations

from typing import Any

import pytest

from clusterscout.app.plans import fabric_basis, plan_offer

URL = "https://example.org/nccl-log"


def _run(busbw: float, predicted: float | None, **kw: Any) -> dict[str, Any]:
    return {
        "collective": "all_reduce",
        "message_bytes": 2**33,
        "nodes": 2,
        "gpus_per_node": 8,
        "busbw_gbs": busbw,
        "predicted_busbw_gbs": predicted,
        "degraded": False,
        "in_network_reduction": False,
        "sources": [{"url": URL, "checked_on": "2026-12-03", "kind": "primary"}],
    } | kw


def _record(*runs: dict[str, Any], gbps: float | None = 3200.0) -> dict[str, Any]:
    return {
        "id": "x-h100",
        "provider": "x",
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "fabric": "infiniband",
        "per_node_gbps": gbps,
        "gpudirect_rdma": True,
        "max_nodes": 64,
        "max_nodes_by_quote": None,
        "prices": [{"tier": "on_demand", "usd_per_gpu_hour": 2.0, "as_of": "2026-12-01"}],
        "provisioning": {},
        "conflicts": [],
        "measured_fabric": list(runs),
    }


def test_a_run_below_the_model_lowers_the_bandwidth_the_plan_uses() -> None:
    offer = plan_offer(_record(_run(300.0, 400.0)))
    assert offer.per_node_gbps == pytest.approx(3200 * 0.75)
    assert offer.advertised_gbps == 3200.0
    assert offer.measured is not None
    assert offer.measured.factor == pytest.approx(0.75)
    assert (offer.measured.busbw_gbs, offer.measured.source_url) == (300.0, URL)


def test_a_run_above_the_model_keeps_the_advertised_figure_but_is_named() -> None:
    offer = plan_offer(_record(_run(500.0, 400.0)))
    assert offer.per_node_gbps == 3200.0
    assert offer.measured is not None and offer.measured.factor == 1.0


@pytest.mark.parametrize(
    "record",
    [
        _record(),
        _record(_run(300.0, None)),  # no prediction to compare with
        _record(_run(300.0, 400.0, degraded=True)),
        _record(_run(300.0, 400.0, in_network_reduction=True)),
        _record(_run(300.0, 400.0, collective="all_gather")),
        _record(_run(300.0, 400.0), gbps=None),  # nothing advertised to scale
    ],
)
def test_without_a_plain_all_reduce_run_the_advertised_figure_stands(
    record: dict[str, Any],
) -> None:
    offer = plan_offer(record)
    assert offer.per_node_gbps == record["per_node_gbps"]
    assert offer.measured is None and offer.advertised_gbps is None


def test_the_run_on_more_nodes_wins() -> None:
    basis = fabric_basis(_record(_run(450.0, 460.0), _run(350.0, 400.0, nodes=8)))
    assert basis is not None
    assert basis.nodes == 8 and basis.factor == pytest.approx(350 / 400)
