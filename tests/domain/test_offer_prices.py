"""Which of an offer's prices can lead it: the on-demand rule and the headline order."""

from __future__ import annotations

from datetime import date

import pytest

from clusterscout.catalog.filters import offer_price
from clusterscout.domain.models import (
    Conflict,
    ConflictTopic,
    Offer,
    Price,
    PriceTier,
    Provisioning,
    Source,
)

SRC = Source("s", "https://example.com/prices", date(2026, 11, 1))
DAY = date(2026, 11, 1)


def _offer(on_demand: bool | None, *, conflict: bool = False, reserved: bool = True) -> Offer:
    prices = [Price(PriceTier.ON_DEMAND, 4.0, DAY, SRC), Price(PriceTier.SPOT, 1.0, DAY, SRC)]
    if reserved:
        prices.append(Price(PriceTier.RESERVED, 3.0, DAY, SRC, term_days=365))
    about = (ConflictTopic.PROVISIONING,) if conflict else (ConflictTopic.PRICE,)
    return Offer(
        "p-h100",
        "h100",
        "p",
        "H100-SXM-80GB",
        provisioning=Provisioning(on_demand_clusters=on_demand),
        prices=tuple(prices),
        conflicts=(Conflict("t", "note", (SRC,), about),),
    )


@pytest.mark.parametrize(
    ("on_demand", "conflict", "offered"),
    [
        (True, False, True),
        (True, True, True),  # the curated fact wins over a conflict about other terms
        (False, False, False),
        (None, False, True),
        (None, True, False),  # unknown, and sources disagree about provisioning: in doubt
    ],
)
def test_the_recorded_fact_decides_and_a_conflict_only_when_it_is_unknown(
    on_demand: bool | None, conflict: bool, offered: bool
) -> None:
    offer = _offer(on_demand, conflict=conflict)
    assert offer.on_demand_offered is offered
    assert offer.headline_price() == (4.0 if offered else 3.0)
    assert offer_price(offer, PriceTier.ON_DEMAND) == (4.0 if offered else None)
    assert offer_price(offer, None) == offer.headline_price()
    assert offer_price(offer, PriceTier.SPOT) == 1.0  # other tiers are untouched


def test_spot_never_leads_and_an_untrusted_list_price_leaves_no_headline() -> None:
    assert _offer(False, reserved=False).headline_price() is None
    assert _offer(True, reserved=False).headline_price() == 4.0
