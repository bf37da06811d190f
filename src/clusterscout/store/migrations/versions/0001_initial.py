"""Initial schema: meta, providers, offers, price observations.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the catalog tables and their filter indexes."""
    op.create_table(
        "meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "providers",
        sa.Column("slug", sa.String(80), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("multi_node", sa.String(16), nullable=False),
        sa.Column("hq_country", sa.String(2)),
        sa.Column("offer_count", sa.Integer, nullable=False),
        sa.Column("record_json", sa.Text, nullable=False),
    )
    op.create_index("ix_providers_multi_node", "providers", ["multi_node"])
    op.create_table(
        "offers",
        sa.Column("id", sa.String(170), primary_key=True),
        sa.Column("provider", sa.String(80), sa.ForeignKey("providers.slug"), nullable=False),
        sa.Column("provider_name", sa.String(200), nullable=False),
        sa.Column("gpu", sa.String(80), nullable=False),
        sa.Column("gpus_per_node", sa.Integer),
        sa.Column("fabric", sa.String(16)),
        sa.Column("per_node_gbps", sa.Float),
        sa.Column("gpudirect_rdma", sa.Boolean),
        sa.Column("min_nodes", sa.Integer),
        sa.Column("max_nodes", sa.Integer),
        sa.Column("max_nodes_by_quote", sa.Integer),
        sa.Column("reach_nodes", sa.Integer),
        sa.Column("multi_node", sa.Boolean, nullable=False),
        sa.Column("managed_slurm", sa.Boolean),
        sa.Column("managed_kubernetes", sa.Boolean),
        sa.Column("on_demand", sa.Boolean),
        sa.Column("reserved", sa.Boolean),
        sa.Column("waitlist", sa.Boolean),
        sa.Column("regions_text", sa.Text, nullable=False),
        sa.Column("from_usd_per_gpu_hour", sa.Float),
        sa.Column("record_json", sa.Text, nullable=False),
    )
    for column in (
        "provider",
        "gpu",
        "fabric",
        "per_node_gbps",
        "reach_nodes",
        "multi_node",
        "from_usd_per_gpu_hour",
    ):
        op.create_index(f"ix_offers_{column}", "offers", [column])
    op.create_index("ix_offers_fabric_rdma", "offers", ["fabric", "gpudirect_rdma"])
    op.create_table(
        "price_observations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("offer_id", sa.String(170), nullable=False),
        sa.Column("tier", sa.String(20), nullable=False),
        sa.Column("term", sa.String(200)),
        sa.Column("usd_per_gpu_hour", sa.Float, nullable=False),
        sa.Column("as_of", sa.Date, nullable=False),
        sa.Column("observed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("feed", sa.String(40), nullable=False),
        sa.Column("source_url", sa.Text, nullable=False),
        sa.Column("source_checked_on", sa.Date),
        sa.Column("note", sa.Text),
    )
    op.create_index(
        "ix_price_obs_offer_tier", "price_observations", ["offer_id", "tier", "observed_at"]
    )


def downgrade() -> None:
    """Drop everything."""
    op.drop_table("price_observations")
    op.drop_table("offers")
    op.drop_table("providers")
    op.drop_table("meta")
