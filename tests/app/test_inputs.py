"""Reading offer filters and plan bodies by the fields table: values, errors naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterscout.app.fields import Field, Kind, Use
from clusterscout.app.inputs import GpuResolver, _plan_input, parse_bool
from clusterscout.app.inputs import parse_offer_filter as parse_filter
from clusterscout.catalog.filters import OfferFilter
from clusterscout.catalog.load import load_catalog
from clusterscout.domain.errors import InputError
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import (
    CatalogData,
    FabricKind,
    PriceTier,
)
from clusterscout.model.inputs import Precision


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
        # Python's float() reads these; nobody typing a number means them.
        ({"max_price": ["nan"]}, "max_price", "is not a number"),
        ({"max_price": ["inf"]}, "max_price", "is not a number"),
        ({"min_gbps": ["1_600"]}, "min_gbps", "is not a number"),
        ({"min_nodes": ["0x10"]}, "min_nodes", "is not a whole number"),
        ({"min_nodes": ["9" * 400]}, "min_nodes", "is too long to be a whole number"),
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


def test_to_params_is_canonical_and_round_trips(resolve: GpuResolver, catalog: CatalogData) -> None:
    f = OfferFilter(
        fabric=(FabricKind.ROCE, FabricKind.INFINIBAND),
        rdma=True,
        min_gbps=1600.0,
        region=catalog.regions.resolve("Europa"),
    )
    params = f.to_params()
    assert params == [
        ("fabric", "infiniband"),
        ("fabric", "roce"),
        ("min_gbps", "1600"),
        ("rdma", "true"),
        ("region", "europe"),
    ]
    grouped: dict[str, list[str]] = {}
    for k, v in params:
        grouped.setdefault(k, []).append(v)
    again = parse_filter(grouped, resolve, regions=catalog.regions)
    assert set(again.fabric) == set(f.fabric)
    assert (again.rdma, again.min_gbps, again.region) == (True, 1600.0, f.region)


@pytest.mark.parametrize("typed", ["atlantis", "xx", "-"])
def test_an_unknown_region_names_the_field_and_gives_examples(
    resolve: GpuResolver, catalog: CatalogData, typed: str
) -> None:
    with pytest.raises(InputError) as err:
        parse_filter({"region": [typed]}, resolve, regions=catalog.regions)
    assert err.value.field == "region"
    assert "unknown region" in str(err.value)
    # The message lists values that do resolve.
    examples = str(err.value).split("e.g. ", 1)[1].split(", ")
    assert examples
    assert all(catalog.regions.resolve(e) is not None for e in examples)


def test_price_tier_parses_and_round_trips(resolve: GpuResolver) -> None:
    f = parse_filter({"price-tier": ["On-Demand"]}, resolve)
    assert f.price_tier is PriceTier.ON_DEMAND
    assert f.to_params() == [("price_tier", "on_demand")]
    with pytest.raises(InputError, match="price_tier: 'hourly' is not one of: on_demand"):
        parse_filter({"price_tier": ["hourly"]}, resolve)
    with pytest.raises(InputError, match="price_tier: may be given only once"):
        parse_filter({"price_tier": ["spot", "reserved"]}, resolve)


def test_plan_inputs_of_every_kind_read_json_and_text() -> None:
    # Kinds the next plan inputs use (allow_spot, job, context), read as the API and CLI give them.
    flag = Field("allow_spot", Kind.BOOL, "Spot.", "Spot", frozenset({Use.PLAN_INPUT}))
    assert _plan_input(flag, True) is True
    assert _plan_input(flag, "false") is False
    with pytest.raises(InputError, match="allow_spot: 'sometimes' is not a boolean"):
        _plan_input(flag, "sometimes")
    with pytest.raises(InputError, match="allow_spot: 0 is not a boolean"):
        _plan_input(flag, 0)  # a JSON number: the API's schema says boolean
    count = Field("context", Kind.INTEGER, "Tokens.", "Context", frozenset({Use.PLAN_INPUT}))
    assert _plan_input(count, "8192") == 8192
    with pytest.raises(InputError, match="must be a whole number"):
        _plan_input(count, 2.5)
    choice = Field("p", Kind.CHOICE, "P.", "P", frozenset({Use.PLAN_INPUT}), enum=Precision)
    assert _plan_input(choice, "FP8") is Precision.FP8
    with pytest.raises(InputError, match="must be bf16, fp16, fp8 or int4"):
        _plan_input(choice, "int3")


def test_parse_bool_accepts_both_spellings() -> None:
    assert parse_bool("rdma", "Yes") is True
    assert parse_bool("rdma", "off") is False
