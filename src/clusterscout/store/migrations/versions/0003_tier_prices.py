"""Lowest current price per tier on offers, for the price_tier filter and sort.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

COLUMNS = {
    "on_demand": "usd_on_demand",
    "reserved": "usd_reserved",
    "spot": "usd_spot",
    "capacity_block": "usd_capacity_block",
}


def upgrade() -> None:
    """Add the four columns with indexes and fill them from each offer's current prices."""
    for column in COLUMNS.values():
        op.add_column("offers", sa.Column(column, sa.Float))
        op.create_index(f"ix_offers_{column}", "offers", [column])
    # Existing rows: the record JSON already holds the current prices; a rebuild or refresh
    # would fill the columns too, but an upgraded database must filter correctly at once.
    conn = op.get_bind()
    offers = sa.table(
        "offers", sa.column("id", sa.String), sa.column("record_json", sa.Text),
        *(sa.column(c, sa.Float) for c in COLUMNS.values()),
    )  # fmt: skip
    for row in conn.execute(sa.select(offers.c.id, offers.c.record_json)).all():
        prices = json.loads(row.record_json).get("prices") or []
        values = {
            column: min(
                (float(p["usd_per_gpu_hour"]) for p in prices if p.get("tier") == tier),
                default=None,
            )
            for tier, column in COLUMNS.items()
        }
        conn.execute(sa.update(offers).where(offers.c.id == row.id).values(**values))


def downgrade() -> None:
    """Drop the per-tier price columns."""
    for column in COLUMNS.values():
        op.drop_index(f"ix_offers_{column}", table_name="offers")
        op.drop_column("offers", column)
