"""Feed runs: one row per price feed applied by ``clusterscout refresh``.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create feed_runs and its (feed, started_at) index."""
    op.create_table(
        "feed_runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("feed", sa.String(40), nullable=False),
        sa.Column("input", sa.Text),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("message", sa.Text),
        sa.Column("rows_read", sa.Integer, nullable=False),
        sa.Column("new_prices", sa.Integer, nullable=False),
        sa.Column("changed_prices", sa.Integer, nullable=False),
        sa.Column("unchanged_prices", sa.Integer, nullable=False),
        sa.Column("unmatched_items", sa.Integer, nullable=False),
    )
    op.create_index("ix_feed_runs_feed_started", "feed_runs", ["feed", "started_at"])


def downgrade() -> None:
    """Drop feed_runs."""
    op.drop_index("ix_feed_runs_feed_started", table_name="feed_runs")
    op.drop_table("feed_runs")
