"""Filter parsing errors, the pure predicate, and agreement between it and the SQL path."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from clusterscout.app.inputs import GpuResolver
from clusterscout.app.inputs import parse_offer_filter as parse_filter
from clusterscout.catalog.filters import OfferFilter, SortKey, matches, parse_sort
from clusterscout.catalog.load import load_catalog
from clusterscout.domain.errors import InputError
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import (
    CatalogData,
    FabricKind,
    OrchestrationKind,
    PriceTier,
    ProvisioningMode,
)
from clusterscout.store.queries import list_offers


@pytest.fixture(scope="module")
def catalog(fixture_data_dir: Path) -> CatalogData:
    loaded = load_catalog(fixture_data_dir).catalog
    assert loaded is not None
    return loaded


@pytest.fixture(scope="module")
def resolve(catalog: CatalogData) -> GpuResolver:
    return GpuIndex.of(catalog.gpus).canonical


def test_parse_accepts_aliases_dashes_and_commas(resolve: GpuResolver) -> None:
    f = parse_filter(
        {"gpu": ["h100", "A100-80GB"], "fabric": ["InfiniBand,roce"], "min-gbps": ["1600"]},
        resolve,
    )
    assert f.gpu == ("H100-SXM-80GB", "A100-SXM-80GB")
    assert f.fabric == (FabricKind.INFINIBAND, FabricKind.ROCE)
    assert f.min_gbps == 1600.0


@pytest.mark.parametrize(
    ("params", "field", "fragment"),
    [
        ({"fabric": ["nvlink"]}, "fabric", "is not one of: infiniband, roce, efa"),
        ({"rdma": ["maybe"]}, "rdma", "is not a boolean"),
        ({"min_gbps": ["fast"]}, "min_gbps", "is not a number"),
        ({"min_gbps": ["-1"]}, "min_gbps", "finite number >= 0"),
        ({"max_price": ["nan"]}, "max_price", "finite number"),
        ({"min_nodes": ["99999999999999999999999"]}, "min_nodes", "must be at most 100,000"),
        ({"min_gbps": ["1e308"]}, "min_gbps", "must be at most"),
        ({"max_price": ["1e300"]}, "max_price", "must be at most"),
        ({"region": ["a" * 201]}, "region", "must be at most 200 characters"),
        ({"min_nodes": ["2.5"]}, "min_nodes", "is not a whole number"),
        ({"gpu": ["TPUv5"]}, "gpu", "unknown GPU 'TPUv5'"),
        ({"orchestration": ["nomad"]}, "orchestration", "slurm, kubernetes"),
        ({"provisioning": ["spot"]}, "provisioning", "on_demand, reserved, waitlist"),
        ({"colour": ["red"]}, "colour", "unknown filter"),
        ({"region": ["eu", "us"]}, "region", "may be given only once"),
    ],
)
def test_parse_errors_name_the_field(
    resolve: GpuResolver, params: dict[str, list[str]], field: str, fragment: str
) -> None:
    with pytest.raises(InputError) as info:
        parse_filter(params, resolve)
    assert info.value.field == field
    assert fragment in info.value.message


def test_unknown_provider_is_rejected_when_a_check_is_given(resolve: GpuResolver) -> None:
    with pytest.raises(InputError, match="unknown provider 'zeta'"):
        parse_filter({"provider": ["zeta"]}, resolve, {"alpha"}.__contains__)


def test_parse_sort() -> None:
    assert parse_sort(None) is SortKey.PRICE
    assert parse_sort("GBPS") is SortKey.GBPS
    with pytest.raises(InputError, match="price, gbps, provider, nodes"):
        parse_sort("cheapest")


def test_to_params_is_canonical_and_round_trips(resolve: GpuResolver) -> None:
    f = OfferFilter(
        fabric=(FabricKind.ROCE, FabricKind.INFINIBAND), rdma=True, min_gbps=1600.0, region="eu"
    )
    params = f.to_params()
    assert params == [
        ("fabric", "infiniband"),
        ("fabric", "roce"),
        ("min_gbps", "1600"),
        ("rdma", "true"),
        ("region", "eu"),
    ]
    grouped: dict[str, list[str]] = {}
    for k, v in params:
        grouped.setdefault(k, []).append(v)
    again = parse_filter(grouped, resolve)
    assert set(again.fabric) == set(f.fabric)
    assert (again.rdma, again.min_gbps, again.region) == (True, 1600.0, "eu")


def _ids(catalog: CatalogData, f: OfferFilter) -> set[str]:
    by_slug = {p.slug: p for p in catalog.providers}
    return {o.id for o in catalog.offers if matches(o, by_slug[o.provider], f)}


def test_unknown_facts_never_match(catalog: CatalogData) -> None:
    # beta-h100-eth has no price; a max_price filter must drop it rather than guess.
    assert "beta-h100-eth" not in _ids(catalog, OfferFilter(max_price=100.0))
    assert _ids(catalog, OfferFilter(provisioning=(ProvisioningMode.ON_DEMAND,))) == {
        "alpha-h100-ib",
        "alpha-a100-ib",
    }


def test_price_tier_keeps_priced_offers_and_moves_the_price_bound(catalog: CatalogData) -> None:
    # alpha-h100-ib: on-demand 2.99, reserved 2.29; alpha-a100-ib: on-demand 1.79;
    # beta-mi300x-roce: reserved 1.99; beta-h100-eth: no price.
    on_demand = OfferFilter(price_tier=PriceTier.ON_DEMAND)
    assert _ids(catalog, on_demand) == {"alpha-h100-ib", "alpha-a100-ib"}
    assert _ids(catalog, OfferFilter(price_tier=PriceTier.RESERVED)) == {
        "alpha-h100-ib",
        "beta-mi300x-roce",
    }
    assert _ids(catalog, OfferFilter(price_tier=PriceTier.SPOT)) == set()
    # Any tier: alpha-h100-ib is under 2.5 thanks to its reserved price ...
    assert "alpha-h100-ib" in _ids(catalog, OfferFilter(max_price=2.5))
    # ... on demand it is not.
    assert _ids(catalog, OfferFilter(max_price=2.5, price_tier=PriceTier.ON_DEMAND)) == {
        "alpha-a100-ib"
    }


def test_price_sort_uses_the_chosen_tier(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        any_tier = list_offers(conn, OfferFilter(), SortKey.PRICE).records
        on_demand = list_offers(conn, OfferFilter(price_tier=PriceTier.ON_DEMAND)).records
    # Any tier: a100 1.79 (on-demand), mi300x 1.99 (reserved), h100 2.29 (reserved), unpriced.
    assert [r["id"] for r in any_tier] == [
        "alpha-a100-ib",
        "beta-mi300x-roce",
        "alpha-h100-ib",
        "beta-h100-eth",
    ]
    assert [r["id"] for r in on_demand] == ["alpha-a100-ib", "alpha-h100-ib"]


def test_price_tier_parses_and_round_trips(resolve: GpuResolver) -> None:
    f = parse_filter({"price-tier": ["On-Demand"]}, resolve)
    assert f.price_tier is PriceTier.ON_DEMAND
    assert f.to_params() == [("price_tier", "on_demand")]
    with pytest.raises(InputError, match="price_tier: 'hourly' is not one of: on_demand"):
        parse_filter({"price_tier": ["hourly"]}, resolve)
    with pytest.raises(InputError, match="price_tier: may be given only once"):
        parse_filter({"price_tier": ["spot", "reserved"]}, resolve)


def test_specific_filters(catalog: CatalogData) -> None:
    assert _ids(catalog, OfferFilter(fabric=(FabricKind.INFINIBAND,), rdma=True)) == {
        "alpha-h100-ib",
        "alpha-a100-ib",
    }
    assert _ids(catalog, OfferFilter(min_nodes=100)) == {"alpha-h100-ib", "beta-mi300x-roce"}
    assert _ids(catalog, OfferFilter(region="central")) == {"beta-mi300x-roce", "beta-h100-eth"}
    assert _ids(catalog, OfferFilter(orchestration=(OrchestrationKind.SLURM,))) == {
        "alpha-h100-ib",
        "alpha-a100-ib",
    }


filters = st.builds(
    OfferFilter,
    multi_node=st.none() | st.booleans(),
    gpu=st.lists(
        st.sampled_from(["H100-SXM-80GB", "A100-SXM-80GB", "MI300X-192GB"]), max_size=2
    ).map(lambda xs: tuple(dict.fromkeys(xs))),
    fabric=st.lists(st.sampled_from(list(FabricKind)), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    min_gbps=st.none() | st.sampled_from([0.0, 400.0, 1600.0, 3200.0, 5000.0]),
    rdma=st.none() | st.booleans(),
    orchestration=st.lists(st.sampled_from(list(OrchestrationKind)), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    provisioning=st.lists(st.sampled_from(list(ProvisioningMode)), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    max_price=st.none() | st.floats(min_value=0, max_value=5),
    min_nodes=st.none() | st.integers(min_value=0, max_value=300),
    region=st.none() | st.sampled_from(["us", "eu", "central", "%", "_"]),
    provider=st.lists(st.sampled_from(["alpha", "beta", "gamma"]), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    price_tier=st.none() | st.sampled_from(list(PriceTier)),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(f=filters)
def test_sql_query_and_pure_predicate_agree(
    f: OfferFilter, catalog: CatalogData, fixture_engine: Engine
) -> None:
    with fixture_engine.connect() as conn:
        page = list_offers(conn, f)
    assert {r["id"] for r in page.records} == _ids(catalog, f)
    assert page.count == len(page.records)
