"""The directory's per-provider summary: facts known, cheapest price, sort and flat rows."""

from __future__ import annotations

from typing import Any

import pytest

from clusterscout.catalog.directory import (
    CHECKLIST_FACTS,
    DirectorySort,
    cheapest,
    clustermax_of,
    directory_row,
    facts_known,
    parse_directory_sort,
    sort_rows,
    summary,
)
from clusterscout.domain.errors import InputError


def _price(tier: str, usd: float, as_of: str) -> dict[str, Any]:
    return {"tier": tier, "usd_per_gpu_hour": usd, "as_of": as_of}


def _offer(oid: str, *prices: dict[str, Any], **facts: Any) -> dict[str, Any]:
    return {"id": oid, "gpu": "H100-SXM-80GB", "prices": list(prices), **facts}


def test_facts_known_counts_every_checklist_fact() -> None:
    # The buyer's 20 and the published fabric measurement.
    assert len(CHECKLIST_FACTS) == 21
    empty = facts_known({}, [])
    assert (empty["known"], empty["total"]) == (0, 21)
    assert "storage.shared_filesystem" in empty["unknown"]
    provider = {
        "orchestration": {"managed_slurm": False, "nccl_preconfigured": None},
        "provisioning": {"reserved_terms": []},
        "storage": {"products": ["Lustre"]},
    }
    offers = [
        _offer("a", fabric="infiniband", topology={"locality": "same pod"}),
        _offer("b", per_node_gbps=None, topology=None),
    ]
    found = facts_known(provider, offers)
    # fabric and locality from the offers; a stated "no" (managed_slurm) counts as known, an
    # empty list of terms does not.
    assert found["known"] == 4
    assert "orchestration.managed_slurm" not in found["unknown"]
    assert "provisioning.reserved_terms" in found["unknown"]
    assert "network.per_node_gbps" in found["unknown"]


def test_cheapest_takes_on_demand_or_reserved_and_the_newer_at_equal_price() -> None:
    offers = [
        _offer("a", _price("spot", 0.5, "2026-11-01"), _price("on_demand", 2.0, "2026-10-01")),
        _offer("b", _price("reserved", 2.0, "2026-11-20")),
        _offer("c", _price("capacity_block", 1.0, "2026-11-01")),
    ]
    best = cheapest(offers)
    assert best == {
        "usd_per_gpu_hour": 2.0,
        "tier": "reserved",
        "as_of": "2026-11-20",
        "offer": "b",
        "gpu": "H100-SXM-80GB",
    }
    assert cheapest([_offer("x", _price("spot", 0.1, "2026-01-01"))]) is None
    assert cheapest([]) is None


def test_clustermax_of_reads_the_newest_edition() -> None:
    editions = [{"rater": "other", "edition": "9"}, {"rater": "clustermax", "edition": "3.0"}]
    rated = {"ratings": [{"rater": "clustermax", "edition": "3.0", "tier": "gold"}]}
    old = {"ratings": [{"rater": "clustermax", "edition": "2.0", "tier": "silver"}]}
    assert clustermax_of(rated, editions) == "gold"
    assert clustermax_of(old, editions) == "not_rated"
    assert clustermax_of(rated, []) == "not_rated"


def _row(name: str, offers: int, known: int, price: float | None) -> dict[str, Any]:
    cheap = None if price is None else {"usd_per_gpu_hour": price}
    return {
        "name": name,
        "offer_count": offers,
        "facts_known": {"known": known},
        "cheapest": cheap,
    }


@pytest.mark.parametrize(
    ("key", "order"),
    [
        (DirectorySort.NAME, ["alpha", "Beta", "gamma"]),
        (DirectorySort.OFFERS, ["gamma", "alpha", "Beta"]),
        (DirectorySort.FACTS, ["Beta", "alpha", "gamma"]),
        (DirectorySort.PRICE, ["gamma", "alpha", "Beta"]),
    ],
)
def test_sort_rows(key: DirectorySort, order: list[str]) -> None:
    rows = [_row("gamma", 5, 1, 1.0), _row("Beta", 1, 9, None), _row("alpha", 2, 3, 3.0)]
    assert [r["name"] for r in sort_rows(rows, key)] == order


def test_parse_directory_sort() -> None:
    assert parse_directory_sort(None) is DirectorySort.NAME
    assert parse_directory_sort(" ") is DirectorySort.NAME
    assert parse_directory_sort("Price") is DirectorySort.PRICE
    with pytest.raises(InputError, match="name, offers, price, facts") as err:
        parse_directory_sort("cheapest")
    assert err.value.field == "sort"


def test_summary_and_flat_row() -> None:
    provider = {
        "slug": "p",
        "name": "P",
        "url": "https://p.example/",
        "multi_node": "yes",
        "regions": ["eu-west"],
        "ratings": [],
    }
    offers = [
        _offer("p-1", _price("on_demand", 2.5, "2026-11-01"), fabric="roce"),
        _offer("p-2", fabric="infiniband"),
        _offer("p-3", fabric=None),
    ]
    row = {**provider, **summary(provider, offers, [])}
    assert row["fabrics"] == ["infiniband", "roce"]
    assert row["offer_count"] == 3
    flat = directory_row(row)
    assert flat["fabrics"] == "infiniband; roce"
    assert (flat["cheapest_usd_per_gpu_hour"], flat["cheapest_tier"]) == (2.5, "on_demand")
    assert (flat["facts_known"], flat["facts_total"]) == (1, 21)
    empty = {**provider, "regions": []}
    bare = directory_row({**empty, **summary(empty, [], [])})
    assert bare["fabrics"] is None and bare["regions"] is None
    assert bare["cheapest_usd_per_gpu_hour"] is None
