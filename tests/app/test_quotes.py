"""Commitment quotes: totals from published terms, minimum terms, discount ranges, why not."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from clusterscout.app.quotes import WhyNot, parse_request, quote, run_hours
from clusterscout.catalog.rates import load_rates
from clusterscout.domain.errors import InputError


def _offer(**extra: Any) -> dict[str, Any]:
    base = {
        "id": "p-h100",
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "max_nodes": 16,
        "max_nodes_by_quote": None,
        "prices": [],
        "provisioning": {},
        "conflicts": [],
    }
    return {**base, **extra}


def _price(tier: str, usd: float, term_days: int | None = None) -> dict[str, Any]:
    return {"tier": tier, "usd_per_gpu_hour": usd, "term_days": term_days, "prepay": None}


def test_a_termed_price_pays_whole_terms_and_a_discount_gives_a_range() -> None:
    hours = run_hours(date(2026, 12, 1), 6)  # 182 days
    provider = {
        "slug": "p",
        "name": "P",
        "discounts": [{"term_days": 365, "max_percent": 30, "min_percent": None}],
        "offers": [_offer(prices=[_price("on_demand", 2.0), _price("reserved", 1.0, 14)])],
    }
    (q,) = quote([provider], 64, hours)
    assert q.best is not None
    # 2-week terms: 13 of them cover 182 days exactly.
    assert (q.best.tier, q.best.billed_hours) == ("reserved", 182 * 24)
    assert q.best.low_usd == q.best.high_usd == pytest.approx(1.0 * 64 * 182 * 24)
    # Without the reserved price, the 1-year discount is cheapest: a year at 30% off .. list.
    provider["offers"] = [_offer(prices=[_price("on_demand", 2.0)])]
    (q,) = quote([provider], 64, hours)
    assert q.best is not None
    assert q.best.tier == "on_demand"  # half a year on demand beats a whole year at 0-30% off
    (q,) = quote([provider], 64, run_hours(date(2026, 1, 1), 12))
    assert q.best is not None
    assert q.best.tier == "discount"
    assert (q.best.low_usd, q.best.high_usd) == pytest.approx(
        (1.4 * 64 * 365 * 24, 2.0 * 64 * 365 * 24)
    )


def test_why_not_and_doubtful_on_demand_prices() -> None:
    small = {"slug": "s", "name": "S", "offers": [_offer(prices=[_price("on_demand", 2.0)])]}
    unpriced = {"slug": "u", "name": "U", "offers": [_offer()]}
    doubtful = {
        "slug": "d",
        "name": "D",
        "offers": [
            _offer(prices=[_price("on_demand", 2.0)], conflicts=[{"about": ["provisioning"]}])
        ],
    }
    quotes = quote([small, unpriced, doubtful], 256, 24 * 30)
    assert [(q.why_not, q.largest_gpus) for q in quotes] == [
        (WhyNot.TOO_SMALL, 128),
        (WhyNot.NO_PRICE, None),
        (WhyNot.NO_PRICE, None),
    ]
    (none,) = quote([small], 8, 24, gpu="B200-SXM-180GB")
    assert none.why_not is WhyNot.NO_OFFER


@pytest.mark.parametrize(
    ("gpus", "months", "field"), [("x", "6", "gpus"), ("0", "6", "gpus"), ("8", "nan", "months"),
                                  ("8", "y", "months"), ("8", "61", "months")],
)  # fmt: skip
def test_bad_quote_input_names_the_field(gpus: str, months: str, field: str) -> None:
    with pytest.raises(InputError) as info:
        parse_request(gpus, months)
    assert info.value.field == field


def test_rates_table_is_dated_and_sourced(tmp_path: Path) -> None:
    rates = load_rates(Path(__file__).parents[2] / "data")
    assert rates is not None
    assert rates.on == date(2025, 10, 21)
    assert all(u.startswith("https://www.ecb.europa.eu/") for u in rates.source_urls)
    assert load_rates(tmp_path) is None
    (tmp_path / "exchange_rates.toml").write_text("date = 1\n")
    with pytest.raises(InputError):
        load_rates(tmp_path)
