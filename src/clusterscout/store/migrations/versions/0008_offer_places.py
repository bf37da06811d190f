"""Where each offer is: one row per place key (region, country, UN M49 areas), ADR 0018.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the table; it stays empty until the next build, which reads data/regions.toml.

    The places come from regions.toml, which a stored database does not hold, so a migrated
    database filters by region only after `clusterscout build-db`.
    """
    op.create_table(
        "offer_places",
        sa.Column("offer_id", sa.String(170), sa.ForeignKey("offers.id"), nullable=False),
        sa.Column("place", sa.String(120), nullable=False),
    )
    op.create_index("ix_offer_places_offer_id", "offer_places", ["offer_id"])
    op.create_index("ix_offer_places_place", "offer_places", ["place", "offer_id"])


def downgrade() -> None:
    """Drop the table."""
    op.drop_index("ix_offer_places_place", table_name="offer_places")
    op.drop_index("ix_offer_places_offer_id", table_name="offer_places")
    op.drop_table("offer_places")
