"""What the catalog knows, from the stored records: ``clusterscout coverage`` and the API's."""

from __future__ import annotations

from datetime import date

from sqlalchemy import Connection

from clusterscout.catalog.coverage import CoverageReport, coverage_report
from clusterscout.catalog.filters import OfferFilter
from clusterscout.store import queries

__all__ = ["CoverageReport", "coverage"]


def coverage(conn: Connection, today: date, stale_after_days: int) -> CoverageReport:
    """Coverage of every provider and multi-node offer as served (feed prices included)."""
    providers = queries.list_providers(conn).records
    offers = queries.list_offers(conn, OfferFilter()).records
    return coverage_report(providers, offers, today, stale_after_days)
