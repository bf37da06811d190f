"""The provider's tier in the newest ClusterMAX edition on offers; ratings in offer records.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

RATER = "clustermax"
NOT_RATED = "not_rated"


def _tiers(provider_records: dict[str, dict[str, Any]]) -> dict[str, str]:
    # A copy of catalog.filters.clustermax_choice as of this revision: the newest edition is
    # the one with the latest date; a provider absent from it is not rated.
    ratings = [
        (slug, r)
        for slug, rec in provider_records.items()
        for r in rec.get("ratings") or ()
        if r.get("rater") == RATER
    ]
    if not ratings:
        return {}
    newest = max(ratings, key=lambda sr: (str(sr[1]["published_on"]), str(sr[1]["edition"])))
    edition = newest[1]["edition"]
    return {slug: str(r["tier"]) for slug, r in ratings if r["edition"] == edition}


def upgrade() -> None:
    """Add and fill the column; copy each provider's ratings into its offers' records."""
    op.add_column("offers", sa.Column("clustermax_tier", sa.String(32)))
    op.create_index("ix_offers_clustermax_tier", "offers", ["clustermax_tier"])
    conn = op.get_bind()
    providers = sa.table("providers", sa.column("slug", sa.String), sa.column("record_json"))
    offers = sa.table(
        "offers", sa.column("id", sa.String), sa.column("provider", sa.String),
        sa.column("record_json", sa.Text), sa.column("clustermax_tier", sa.String),
    )  # fmt: skip
    records = {
        r.slug: json.loads(r.record_json)
        for r in conn.execute(sa.select(providers.c.slug, providers.c.record_json))
    }
    tiers = _tiers(records)
    rows = conn.execute(sa.select(offers.c.id, offers.c.provider, offers.c.record_json)).all()
    for row in rows:
        record = json.loads(row.record_json)
        record["ratings"] = (records.get(row.provider) or {}).get("ratings") or []
        conn.execute(
            sa.update(offers)
            .where(offers.c.id == row.id)
            .values(
                record_json=json.dumps(record),
                clustermax_tier=tiers.get(row.provider, NOT_RATED),
            )
        )


def downgrade() -> None:
    """Drop the column and the offer records' ``ratings``, which older releases do not publish."""
    conn = op.get_bind()
    offers = sa.table("offers", sa.column("id", sa.String), sa.column("record_json", sa.Text))
    for row in conn.execute(sa.select(offers.c.id, offers.c.record_json)).all():
        record = json.loads(row.record_json)
        record.pop("ratings", None)
        conn.execute(
            sa.update(offers).where(offers.c.id == row.id).values(record_json=json.dumps(record))
        )
    op.drop_index("ix_offers_clustermax_tier", table_name="offers")
    op.drop_column("offers", "clustermax_tier")
