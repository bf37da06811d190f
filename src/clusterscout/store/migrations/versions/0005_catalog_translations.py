"""The catalog's free text in each translated language (ADR 0011).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the table; it stays empty (English everywhere) until the next build."""
    op.create_table(
        "catalog_translations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("lang", sa.String(8), nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
    )
    op.create_index("ix_catalog_translations_lang", "catalog_translations", ["lang"])


def downgrade() -> None:
    """Drop the table."""
    op.drop_index("ix_catalog_translations_lang", table_name="catalog_translations")
    op.drop_table("catalog_translations")
