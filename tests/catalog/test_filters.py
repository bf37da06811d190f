"""The pure offer predicate, the SQL query, and their agreement on every filter of the table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from clusterscout.app.fields import OFFER_FILTER_NAMES
from clusterscout.catalog.filters import (
    ClusterMaxChoice,
    OfferFilter,
    SortKey,
    TopologyClaim,
    Unknowable,
    clustermax_choice,
    matches,
    parse_sort,
)
from clusterscout.catalog.load import load_catalog
from clusterscout.domain.errors import InputError
from clusterscout.domain.models import (
    BillingGranularity,
    CatalogData,
    FabricKind,
    Offer,
    OrchestrationKind,
    PriceTier,
    ProvisioningMode,
)
from clusterscout.domain.regions import RegionScope
from clusterscout.store.queries import list_offers
from clusterscout.store.tally import Tally, tallies


@pytest.fixture(scope="module")
def catalog(fixture_data_dir: Path) -> CatalogData:
    loaded = load_catalog(fixture_data_dir).catalog
    assert loaded is not None
    return loaded


def test_parse_sort() -> None:
    assert parse_sort(None) is SortKey.PRICE
    assert parse_sort("GBPS") is SortKey.GBPS
    with pytest.raises(InputError, match="price, gbps, provider, nodes"):
        parse_sort("cheapest")


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
    # alpha-a100-ib also spot 0.79; beta-mi300x-roce: reserved 1.99; beta-h100-eth: no price.
    on_demand = OfferFilter(price_tier=PriceTier.ON_DEMAND)
    assert _ids(catalog, on_demand) == {"alpha-h100-ib", "alpha-a100-ib"}
    assert _ids(catalog, OfferFilter(price_tier=PriceTier.RESERVED)) == {
        "alpha-h100-ib",
        "beta-mi300x-roce",
    }
    assert _ids(catalog, OfferFilter(price_tier=PriceTier.SPOT)) == {"alpha-a100-ib"}
    # By default the bound is on the headline price: alpha-h100-ib's on-demand 2.99 is over
    # 2.5 (its reserved 2.29 does not count); beta-mi300x-roce's headline is its reserved 1.99.
    assert _ids(catalog, OfferFilter(max_price=2.5)) == {"alpha-a100-ib", "beta-mi300x-roce"}
    assert "alpha-h100-ib" in _ids(
        catalog, OfferFilter(max_price=2.5, price_tier=PriceTier.RESERVED)
    )
    assert _ids(catalog, OfferFilter(max_price=2.5, price_tier=PriceTier.ON_DEMAND)) == {
        "alpha-a100-ib"
    }


def test_price_sort_uses_the_chosen_tier(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        any_tier = list_offers(conn, OfferFilter(), SortKey.PRICE).records
        on_demand = list_offers(conn, OfferFilter(price_tier=PriceTier.ON_DEMAND)).records
    # Headline: a100 1.79 (on-demand; its spot 0.79 never leads), mi300x 1.99 (reserved),
    # h100 2.99 (on-demand), then the unpriced ones.
    assert [r["id"] for r in any_tier] == [
        "alpha-a100-ib",
        "beta-mi300x-roce",
        "alpha-h100-ib",
        "beta-h100-eth",
        "beta-h100-pool",
    ]
    assert [r["id"] for r in on_demand] == ["alpha-a100-ib", "alpha-h100-ib"]


def test_specific_filters(catalog: CatalogData) -> None:
    assert _ids(catalog, OfferFilter(fabric=(FabricKind.INFINIBAND,), rdma=True)) == {
        "alpha-h100-ib",
        "alpha-a100-ib",
    }
    assert _ids(catalog, OfferFilter(min_nodes=100)) == {"alpha-h100-ib", "beta-mi300x-roce"}
    assert _ids(catalog, OfferFilter(region=catalog.regions.resolve("central"))) == {
        "beta-mi300x-roce",
        "beta-h100-pool",
    }
    assert _ids(catalog, OfferFilter(orchestration=(OrchestrationKind.SLURM,))) == {
        "alpha-h100-ib",
        "alpha-a100-ib",
    }


def test_checklist_filters(catalog: CatalogData) -> None:
    # alpha: NCCL configured, per-minute billing, a shared file system, its H100 offer
    # non-blocking and rail-optimised; beta: NCCL not configured, monthly billing, no shared
    # file system, its MI300X offer blocking but placed in one data hall; gamma: nothing known.
    assert _ids(catalog, OfferFilter(nccl=True)) == {"alpha-h100-ib", "alpha-a100-ib"}
    assert _ids(catalog, OfferFilter(nccl=False)) == {
        "beta-mi300x-roce",
        "beta-h100-eth",
        "beta-h100-pool",
    }
    assert _ids(catalog, OfferFilter(billing=(BillingGranularity.PER_MONTH,))) == {
        "beta-mi300x-roce",
        "beta-h100-eth",
        "beta-h100-pool",
    }
    assert _ids(catalog, OfferFilter(shared_storage=True)) == {"alpha-h100-ib", "alpha-a100-ib"}
    both = (TopologyClaim.NON_BLOCKING, TopologyClaim.RAIL_OPTIMIZED)
    assert _ids(catalog, OfferFilter(topology=both)) == {"alpha-h100-ib"}
    assert _ids(catalog, OfferFilter(topology=(TopologyClaim.LOCALITY,))) == {"beta-mi300x-roce"}
    # A stated locality is not a non-blocking fabric.
    stated = (TopologyClaim.LOCALITY, TopologyClaim.NON_BLOCKING)
    assert _ids(catalog, OfferFilter(topology=stated)) == set()
    loose = OfferFilter(topology=both, include_unknown=(Unknowable.TOPOLOGY,))
    # beta-mi300x-roce says "blocking": known false, so it stays out even with unknowns in.
    assert "beta-mi300x-roce" not in _ids(catalog, loose)
    assert {"alpha-h100-ib", "alpha-a100-ib", "beta-h100-eth"} <= _ids(catalog, loose)


STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "multi_node": st.none() | st.booleans(),
    "gpu": st.lists(
        st.sampled_from(["H100-SXM-80GB", "A100-SXM-80GB", "MI300X-192GB"]), max_size=2
    ).map(lambda xs: tuple(dict.fromkeys(xs))),
    "fabric": st.lists(st.sampled_from(list(FabricKind)), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    "min_gbps": st.none() | st.sampled_from([0.0, 400.0, 1600.0, 3200.0, 5000.0]),
    "rdma": st.none() | st.booleans(),
    "orchestration": st.lists(st.sampled_from(list(OrchestrationKind)), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    "provisioning": st.lists(st.sampled_from(list(ProvisioningMode)), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    "max_price": st.none() | st.floats(min_value=0, max_value=5),
    "min_nodes": st.none() | st.integers(min_value=0, max_value=300),
    # Scopes as the parser resolves them: any set of place keys, some of them in no offer.
    "region": st.none()
    | st.sets(
        st.sampled_from(["US", "DE", "BR", "JP", "150", "019", "005", "r:us-east", "r:eu-west"]),
        min_size=1,
    ).map(lambda places: RegionScope("x", frozenset(places))),
    "provider": st.lists(st.sampled_from(["alpha", "beta", "gamma"]), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    "price_tier": st.none() | st.sampled_from(list(PriceTier)),
    "clustermax": st.lists(st.sampled_from(list(ClusterMaxChoice)), max_size=3).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    "nccl": st.none() | st.booleans(),
    "billing": st.lists(st.sampled_from(list(BillingGranularity)), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    "shared_storage": st.none() | st.booleans(),
    "topology": st.lists(st.sampled_from(list(TopologyClaim)), max_size=2).map(
        lambda xs: tuple(dict.fromkeys(xs))
    ),
    "include_unknown": st.lists(st.sampled_from(list(Unknowable)), max_size=4, unique=True).map(
        tuple
    ),
}
"""A strategy per offer filter: a new row of the fields table needs one (see below)."""
filters = st.builds(OfferFilter, **STRATEGIES)


def test_include_unknown_lets_in_offers_whose_fact_is_unknown(catalog: CatalogData) -> None:
    # gamma's offers state no fabric, bandwidth or RDMA; alpha's and beta's do.
    strict = _ids(catalog, OfferFilter(rdma=True))
    loose = _ids(catalog, OfferFilter(rdma=True, include_unknown=(Unknowable.RDMA,)))
    unknown_rdma = {o.id for o in catalog.offers if o.gpudirect_rdma is None}
    assert unknown_rdma, "the fixture needs an offer with unknown RDMA"
    assert loose == strict | unknown_rdma
    # Letting in the unknowns of another filter changes nothing.
    assert _ids(catalog, OfferFilter(rdma=True, include_unknown=(Unknowable.REGION,))) == strict
    # An offer whose RDMA is known to be absent stays out.
    assert not any(o.gpudirect_rdma is False for o in catalog.offers if o.id in loose)


def test_include_unknown_is_canonical_only_for_filters_that_are_set() -> None:
    f = OfferFilter(min_gbps=400, include_unknown=(Unknowable.MIN_GBPS, Unknowable.RDMA))
    assert f.to_params() == [("include_unknown", "min_gbps"), ("min_gbps", "400")]


def test_every_filter_of_the_table_is_generated() -> None:
    # The agreement test below only covers filters it generates values for.
    assert set(STRATEGIES) == set(OFFER_FILTER_NAMES)


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


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(f=filters)
def test_tallies_agree_with_the_pure_predicate(
    f: OfferFilter, catalog: CatalogData, fixture_engine: Engine
) -> None:
    # The listing's facet and chip counts come from the in-memory fact index: each ask must
    # count what the predicate keeps, per value of its column (None: the value is unknown).
    by_slug = {p.slug: p for p in catalog.providers}
    kept = [o for o in catalog.offers if matches(o, by_slug[o.provider], f)]
    columns: dict[str, Callable[[Offer], list[str | None]]] = {
        "gpu": lambda o: [o.gpu],
        "fabric": lambda o: [o.fabric.value if o.fabric else None],
        "provider": lambda o: [o.provider],
        "clustermax": lambda o: [clustermax_choice(by_slug[o.provider]).value],
        "place": lambda o: list(o.places),
    }
    asks = [Tally(f), *(Tally(f, c) for c in columns)]
    with fixture_engine.connect() as conn:
        plain, *grouped = tallies(conn, asks)
    assert plain == {None: len(kept)}
    for (name, values_of), got in zip(columns.items(), grouped, strict=True):
        assert got == dict(Counter(v for o in kept for v in values_of(o))), name


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        # beta's h100-eth is in sa-east-1 (Brazil); a city, a country name in Portuguese, a
        # cloud prefix and the continent all find it.
        ("sao paulo", {"beta-h100-eth"}),
        ("São Paulo", {"beta-h100-eth"}),
        ("Brasil", {"beta-h100-eth"}),
        ("sa-east", {"beta-h100-eth"}),
        ("BR", {"beta-h100-eth"}),
        ("latin-america", {"beta-h100-eth"}),
        # The Americas hold alpha (us-east) and the Brazilian offer.
        ("americas", {"alpha-h100-ib", "alpha-a100-ib", "beta-h100-eth"}),
        # Europe: beta's German offers and alpha's "eu-west", which names only Europe.
        (
            "Europa",
            {"alpha-h100-ib", "alpha-a100-ib", "beta-mi300x-roce", "beta-h100-pool"},
        ),
        # A country is not matched by a region that names only its continent.
        ("deutschland", {"beta-mi300x-roce", "beta-h100-pool"}),
        ("frankfurt", {"beta-mi300x-roce", "beta-h100-pool"}),
        # Part of a region name still works (docs/design.md: substring).
        ("eu-cen", {"beta-mi300x-roce", "beta-h100-pool"}),
        ("asia", set()),
    ],
)
def test_region_names_resolve_to_places(
    catalog: CatalogData, typed: str, expected: set[str]
) -> None:
    scope = catalog.regions.resolve(typed)
    assert scope is not None
    assert _ids(catalog, OfferFilter(region=scope)) == expected


def test_unknown_region_resolves_to_nothing(catalog: CatalogData) -> None:
    assert catalog.regions.resolve("atlantis") is None
    assert catalog.regions.resolve("  ") is None


def test_region_unknowns_are_offers_without_any_region(catalog: CatalogData) -> None:
    scope = catalog.regions.resolve("JP")
    assert scope is not None
    assert _ids(catalog, OfferFilter(region=scope)) == set()
    loose = _ids(catalog, OfferFilter(region=scope, include_unknown=(Unknowable.REGION,)))
    assert loose == {o.id for o in catalog.offers if not o.places}
