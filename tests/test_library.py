"""The Python API gives the same answers as the CLI's query path."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from clusterscout import Catalog
from clusterscout.app.database import CatalogInvalidError
from clusterscout.domain.errors import InputError
from clusterscout.model.planner.results import PlanResult


@pytest.fixture(scope="module")
def cat(fixture_data_dir: Path) -> Catalog:
    return Catalog.from_data(fixture_data_dir)


def test_offers_with_filters(cat: Catalog) -> None:
    ids = [o["id"] for o in cat.offers(fabric="infiniband", rdma=True, sort="gbps")]
    assert ids == ["alpha-h100-ib", "alpha-a100-ib"]
    assert [o["id"] for o in cat.offers(gpu=["h100"], max_price=5)] == ["alpha-h100-ib"]


def test_bad_filter_raises_naming_it(cat: Catalog) -> None:
    with pytest.raises(InputError) as info:
        cat.offers(fabric="token-ring")
    assert info.value.field == "fabric"


def test_providers_and_compare(cat: Catalog) -> None:
    assert [p["slug"] for p in cat.providers(multi_node="yes")] == ["alpha", "beta"]
    detail = cat.provider("beta")
    assert detail is not None
    assert {o["id"] for o in detail["offers"]} == {
        "beta-mi300x-roce",
        "beta-h100-eth",
        "beta-h100-pool",
    }
    assert cat.provider("nope") is None
    assert [p["slug"] for p in cat.compare("beta", "alpha")] == ["alpha", "beta"]


def test_from_data_refuses_invalid_catalog(tmp_path: Path) -> None:
    (tmp_path / "providers").mkdir()
    with pytest.raises(CatalogInvalidError):
        Catalog.from_data(tmp_path)


def test_plan_is_typed_and_frozen(cat: Catalog) -> None:
    plan = cat.plan(model="70B", tokens=1e12, gpu="H100", fabric=("infiniband",))
    assert isinstance(plan, PlanResult)
    assert plan.options[0].offer.offer_id == "alpha-h100-ib"
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.steps = 1  # type: ignore[misc]
    with pytest.raises(InputError) as info:
        cat.plan(model="70B", tokens=1e12, seq_len=20_000_000)
    assert info.value.field == "seq_len"


def test_estimate_takes_a_scenario_or_its_parts(cat: Catalog) -> None:
    cluster = {
        "gpu": "A100",
        "gpus_per_node": 8,
        "nodes": 2,
        "fabric": "roce",
        "per_node_gbps": 800,
    }
    workload = {"kind": "collective", "op": "all_gather", "message_bytes": 1e9}
    by_parts = cat.estimate(cluster=cluster, workload=workload)
    assert by_parts == cat.estimate({"cluster": cluster, "workload": workload})
    assert by_parts.gpu == "A100-SXM-80GB"
    with pytest.raises(InputError) as info:
        cat.estimate(cluster=cluster)
    assert info.value.field == "workload"
