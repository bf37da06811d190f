"""The coverage report counts known facts, primary sources and stale prices per provider."""

from __future__ import annotations

from datetime import date
from typing import Any

from clusterscout.catalog.coverage import Share, coverage_report

TODAY = date(2026, 12, 1)


def _ref(kind: str) -> dict[str, str]:
    return {"url": f"https://{kind}.example/", "checked_on": "2026-11-01", "kind": kind}


def _offer(provider: str, **facts: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"provider": provider, "prices": [], "sources": {}}
    record.update(facts)
    return record


PROVIDERS = [
    {"slug": "a", "name": "A", "multi_node": "yes"},
    {"slug": "b", "name": "B", "multi_node": "yes"},
    {"slug": "c", "name": "C", "multi_node": "no"},
    {"slug": "d", "name": "D", "multi_node": "unknown"},
]


def test_shares_count_offers_with_each_fact_known() -> None:
    offers = [
        _offer("a", gpus_per_node=8, fabric="infiniband", per_node_gbps=3200.0),
        _offer("a", gpus_per_node=8, fabric=None, gpudirect_rdma=False),
        _offer("b", gpus_per_node=None, max_nodes_by_quote=64),
    ]
    report = coverage_report(PROVIDERS, offers, TODAY, 30)
    facts = report.overall.facts
    assert report.overall.offers == 3
    assert facts["gpus_per_node"] == Share(2, 3)
    assert facts["fabric"] == Share(1, 3)
    # False is a known answer: a source said there is no GPUDirect RDMA.
    assert facts["gpudirect_rdma"] == Share(1, 3)
    assert facts["cluster_size"] == Share(1, 3)
    assert report.providers_by_status == {"yes": 2, "no": 1, "unknown": 1}


def test_only_uninterruptible_prices_count_as_a_price() -> None:
    spot = {"tier": "spot", "usd_per_gpu_hour": 1.0, "as_of": "2026-11-30"}
    reserved = {"tier": "reserved", "usd_per_gpu_hour": 2.0, "as_of": "2026-11-30"}
    offers = [_offer("a", prices=[spot]), _offer("a", prices=[spot, reserved])]
    facts = coverage_report(PROVIDERS, offers, TODAY, 30).overall.facts
    assert facts["any_price"] == Share(2, 2)
    assert facts["on_demand_or_reserved_price"] == Share(1, 2)


def test_a_fact_counts_as_primary_when_any_of_its_sources_is() -> None:
    offers = [
        _offer(
            "a",
            sources={
                "fabric": [_ref("secondary"), _ref("primary")],
                "per_node_gbps": [_ref("secondary")],
                "prices": [_ref("catalog")],
                "regions": [],
            },
        )
    ]
    report = coverage_report(PROVIDERS, offers, TODAY, 30)
    assert report.overall.primary_sourced_facts == Share(1, 3)


def test_stale_prices_are_older_than_the_threshold() -> None:
    prices = [
        {"tier": "on_demand", "usd_per_gpu_hour": 2.0, "as_of": "2026-11-01"},  # 30 days
        {"tier": "reserved", "usd_per_gpu_hour": 1.5, "as_of": "2026-10-31"},  # 31 days
    ]
    report = coverage_report(PROVIDERS, [_offer("a", prices=prices)], TODAY, 30)
    assert report.overall.stale_prices == Share(1, 2)


def test_per_provider_rows_cover_every_provider_and_skip_offers_of_non_multi_node_ones() -> None:
    offers = [_offer("a", fabric="roce"), _offer("c", fabric="infiniband")]
    report = coverage_report(PROVIDERS, offers, TODAY, 30)
    rows = {p.slug: p for p in report.by_provider}
    assert sorted(rows) == ["a", "b", "c", "d"]
    assert rows["a"].coverage.facts["fabric"] == Share(1, 1)
    assert rows["c"].coverage.offers == 0
    assert report.overall.offers == 1


def test_json_shape_gives_shares_and_null_for_nothing_to_count() -> None:
    body = coverage_report(PROVIDERS, [], TODAY, 30).to_dict()
    assert body["providers"] == {"total": 4, "multi_node": {"yes": 2, "no": 1, "unknown": 1}}
    assert body["multi_node_offers"]["facts"]["fabric"] == {"count": 0, "total": 0, "share": None}
    assert body["by_provider"][0]["slug"] == "a"
    assert Share(1, 3).to_dict()["share"] == 0.3333
