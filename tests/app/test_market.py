"""Market reference: median and range of other offers' published prices, never spot or doubtful."""

from __future__ import annotations

from typing import Any

import pytest

from clusterscout.app.market import (
    LABEL,
    market_price,
    market_reference,
    market_references,
    offer_price,
)


def _offer(provider: str, gpu: str, *prices: tuple[str, float], **extra: Any) -> dict[str, Any]:
    return {
        "id": f"{provider}/{gpu}",
        "provider": provider,
        "gpu": gpu,
        "prices": [{"tier": t, "usd_per_gpu_hour": v} for t, v in prices],
        "provisioning": {},
        "conflicts": [],
        **extra,
    }


def test_median_range_and_counts_take_each_offers_lowest_price() -> None:
    records = [
        # Two prices of one offer count once, at the lower.
        _offer("a", "H100", ("on_demand", 2.0), ("on_demand", 9.0)),
        _offer("b", "H100", ("on_demand", 3.0)),
        _offer("b", "H100", ("on_demand", 4.0)) | {"id": "b/second"},
        _offer("c", "H100", ("on_demand", 6.0)),
        _offer("d", "A100", ("on_demand", 1.0)),
    ]
    ref = market_price(records, "H100", "on_demand")
    assert ref is not None
    assert (ref.low_usd_per_gpu_hour, ref.high_usd_per_gpu_hour) == (2.0, 6.0)
    assert ref.median_usd_per_gpu_hour == pytest.approx(3.5)
    assert (ref.prices, ref.providers) == (4, 3)
    as_json = ref.to_dict()
    assert as_json["label"] == LABEL
    assert as_json["median_usd_per_gpu_hour"] == pytest.approx(3.5)


def test_too_few_prices_give_no_reference_and_the_next_tier_is_tried() -> None:
    records = [
        _offer("a", "H100", ("on_demand", 2.0), ("reserved", 1.5)),
        _offer("b", "H100", ("reserved", 1.8), ("spot", 0.5)),
        _offer("c", "H100", ("spot", 0.4)),
        _offer("d", "B200", ("spot", 1.0)),
        _offer("e", "B200", ("spot", 1.1)),
    ]
    assert market_price(records, "H100", "on_demand") is None  # one price is no market
    ref = market_reference(records, "H100")
    assert ref is not None
    assert (ref.tier, ref.prices) == ("reserved", 2)
    assert market_reference(records, "H100", ("on_demand",)) is None
    # Two spot prices are not a reference: an interruptible price says nothing of a cluster's.
    assert market_reference(records, "B200") is None
    assert set(market_references(records)) == {"H100"}


def test_doubtful_on_demand_prices_do_not_count() -> None:
    no_clusters = _offer(
        "a", "H100", ("on_demand", 2.0), provisioning={"on_demand_clusters": False}
    )
    disputed = _offer("b", "H100", ("on_demand", 2.5), conflicts=[{"about": ["provisioning"]}])
    plain = _offer("c", "H100", ("on_demand", 3.0))
    assert offer_price(no_clusters, "on_demand") is None
    assert offer_price(disputed, "on_demand") is None
    assert offer_price(no_clusters, "reserved") is None
    assert offer_price(plain, "on_demand") == 3.0
    assert market_price([no_clusters, disputed, plain], "H100", "on_demand") is None
