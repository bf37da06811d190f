"""Price observations keep their source's kind and the commitment term in days.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add nullable columns; older rows stay NULL (kind shown as secondary, term days unknown)."""
    op.add_column("price_observations", sa.Column("source_kind", sa.String(16)))
    op.add_column("price_observations", sa.Column("term_days", sa.Integer))
    op.add_column("price_observations", sa.Column("prepay", sa.Boolean))


def downgrade() -> None:
    """Drop the columns."""
    for column in ("prepay", "term_days", "source_kind"):
        op.drop_column("price_observations", column)
