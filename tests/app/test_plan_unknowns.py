"""Plans with unknowns: buyer prices, price dates, billing steps, node sizes and brackets."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from clusterscout.app.plans import buyer_prices, plan_offer, run_plan, stored_brackets
from clusterscout.domain.brackets import FabricBracket, NodeSize
from clusterscout.domain.errors import InputError
from clusterscout.domain.models import FabricKind, Source
from clusterscout.model.planner.reasons import Assumption
from clusterscout.web.schemas import STALE_PRICE_DAYS, plan_json

BODY = {"model": "70B", "tokens": 5e10}
SRC = Source(id="s", url="https://example.org/s", checked_on=date(2026, 12, 1))


def _record(**extra: Any) -> dict[str, Any]:
    return {
        "id": "x-h100",
        "provider": "x",
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "fabric": "infiniband",
        "per_node_gbps": None,
        "gpudirect_rdma": True,
        "max_nodes": 8,
        "prices": [
            {"tier": "on_demand", "usd_per_gpu_hour": 3.0, "as_of": "2026-10-01"},
            {"tier": "on_demand", "usd_per_gpu_hour": 3.0, "as_of": "2026-11-01"},
        ],
        "billing": {"granularity": "per_hour"},
        **extra,
    }


def test_a_buyer_price_ranks_an_unpriced_offer_and_is_labelled(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        before = plan_json(run_plan(conn, BODY))
        after = plan_json(run_plan(conn, {**BODY, "prices": {"beta-h100-eth": "2.5"}}))
    assert "beta-h100-eth" in {o["offer"]["id"] for o in before["on_request"]}
    assert "beta-h100-eth" not in {o["offer"]["id"] for o in after["on_request"]}
    entered = [o for o in after["options"] if o["offer"]["id"] == "beta-h100-eth"]
    assert entered
    for o in entered:
        offer = o["offer"]
        assert (offer["usd_per_gpu_hour"], offer["price_source"]) == (2.5, "buyer")
        assert offer["price_as_of"] is None and offer["price_stale"] is False
    assert Assumption.BUYER_PRICE.value in after["assumptions"]
    assert Assumption.BUYER_PRICE.value not in before["assumptions"]
    # Published prices carry their observation date, age and stale flag.
    for o in before["options"]:
        offer = o["offer"]
        assert offer["price_source"] == "published"
        assert offer["price_as_of"] is not None
        assert offer["price_stale"] is (offer["price_age_days"] > STALE_PRICE_DAYS)


@pytest.mark.parametrize(
    ("prices", "needle"),
    [
        ([1, 2], "must be an object"),
        ({"nope": 2.0}, "'nope' is not an offer"),
        ({"beta-h100-eth": "cheap"}, "needs a number"),
        ({"beta-h100-eth": True}, "needs a number"),
        ({"beta-h100-eth": None}, "needs a number"),
        ({"beta-h100-eth": 0}, "must be above 0"),
        ({"beta-h100-eth": "nan"}, "must be above 0"),
        ({"beta-h100-eth": 5000}, "at most 1000"),
    ],
)
def test_bad_buyer_prices_name_the_field(fixture_engine: Engine, prices: Any, needle: str) -> None:
    with fixture_engine.connect() as conn, pytest.raises(InputError) as err:
        run_plan(conn, {**BODY, "prices": prices})
    assert err.value.field == "prices"
    assert needle in str(err.value)


def test_buyer_prices_without_a_body_object_are_none() -> None:
    assert buyer_prices("x", []) == {}
    assert buyer_prices({"model": "7B"}, []) == {}


def test_plan_offer_assumes_from_brackets_and_sizes_and_keeps_known_facts() -> None:
    bracket = FabricBracket(FabricKind.INFINIBAND, "h", ("H100-SXM-80GB",), 800, 3200, SRC, SRC)
    size = NodeSize("h", ("H100-SXM-80GB",), 8, SRC)
    o = plan_offer(_record(gpus_per_node=None), brackets=[bracket], sizes=[size])
    assert o.assumed is not None and o.assumed.fields == ("per_node_gbps",)
    assert (o.gpus_per_node, o.gpus_per_node_assumed) == (8, True)
    # The newest observation of the price used; an hourly bill rounds up to whole hours.
    assert o.price_as_of == "2026-11-01"
    assert (o.billing_increment_hours, o.billing_known) == (1.0, True)
    known = plan_offer(_record(per_node_gbps=1600.0), brackets=[bracket], sizes=[size])
    assert known.assumed is None and known.gpus_per_node_assumed is False
    bought = plan_offer(_record(), buyer_price=2.0)
    assert (bought.usd_per_gpu_hour, bought.price_source, bought.price_as_of) == (
        2.0,
        "buyer",
        None,
    )
    bare = plan_offer(_record(prices=[], billing={}))
    assert (bare.price_source, bare.price_as_of, bare.billing_known) == (None, None, False)


def test_a_database_without_brackets_assumes_nothing(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        brackets, sizes = stored_brackets(conn)
    # The fixture catalog has no fabric_brackets.toml: unknowns stay excluded there.
    assert (brackets, sizes) == ((), ())


def test_cli_price_option(fixture_settings: Any) -> None:
    from clusterscout.cli import app

    url = fixture_settings.resolved_database_url()
    args = ["plan", "--model", "70B", "--tokens", "5e10", "--database-url", url]
    ok = CliRunner().invoke(app, [*args, "--price", "beta-h100-eth=2.5"])
    assert ok.exit_code == 0, ok.output
    assert "2.50 buyer" in ok.output
    bad = CliRunner().invoke(app, [*args, "--price", "beta-h100-eth"])
    assert bad.exit_code != 0 and "OFFER=USD_PER_GPU_HOUR" in bad.output
    unknown = CliRunner().invoke(app, [*args, "--price", "nope=2"])
    assert unknown.exit_code != 0 and "nope" in unknown.output
