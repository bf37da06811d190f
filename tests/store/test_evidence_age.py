"""How old the evidence is: stale checks versus pages that are themselves old."""

from __future__ import annotations

from datetime import date

from sqlalchemy import Engine

from clusterscout.catalog.filters import OfferFilter
from clusterscout.store import queries


def test_a_fact_resting_only_on_an_old_page_is_listed(fixture_engine: Engine) -> None:
    # beta's Ethernet bandwidth cites only a third-party review dated 2023-06-01, read 2026-10-10.
    with fixture_engine.connect() as conn:
        old = queries.old_page_facts(conn, date(2026, 12, 1), 730)
        stale = queries.stale_facts(conn, date(2026, 12, 1), 180)
    assert [(f["scope"], f["field"], f["published_on"]) for f in old] == [
        ("beta-h100-eth", "per_node_gbps", "2023-06-01")
    ]
    assert old[0]["age_days"] == (date(2026, 12, 1) - date(2023, 6, 1)).days
    # The same fact was read recently, so the checked-on rule alone would never flag it.
    assert not any(f["scope"] == "beta-h100-eth" for f in stale)


def test_the_threshold_and_undated_sources_decide(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        # Exactly 730 days after the page's date (2024 is a leap year) is not yet "over".
        assert queries.old_page_facts(conn, date(2025, 5, 31), 730) == []
        assert len(queries.old_page_facts(conn, date(2025, 6, 1), 730)) == 1
        # Facts citing undated pages are never listed, however far ahead the clock is.
        far = queries.old_page_facts(conn, date(2040, 1, 1), 730)
    assert {(f["scope"], f["field"]) for f in far} == {("beta-h100-eth", "per_node_gbps")}


def test_source_objects_carry_the_page_date(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        page = queries.list_offers(conn, OfferFilter(provider=("beta",)))
    (record,) = (r for r in page.records if r["id"] == "beta-h100-eth")
    (ref,) = record["sources"]["per_node_gbps"]
    assert ref["published_on"] == "2023-06-01" and ref["kind"] == "secondary"
    assert all(r["published_on"] is None for r in record["sources"]["gpu"])
