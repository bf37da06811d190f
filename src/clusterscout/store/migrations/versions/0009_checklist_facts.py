"""The rest of the buyer's checklist on offers: NCCL, billing, shared storage, topology (ADR 0029).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

COLUMNS = (
    ("nccl_preconfigured", sa.Boolean()),
    ("billing_granularity", sa.String(16)),
    ("shared_storage", sa.Boolean()),
    ("non_blocking", sa.Boolean()),
    ("rail_optimized", sa.Boolean()),
    ("locality_stated", sa.Boolean()),
)


def _facts(offer: dict[str, Any], provider: dict[str, Any]) -> dict[str, Any]:
    # As store.build writes them at this revision, read back from the stored public records.
    topology = offer.get("topology") or {}
    return {
        "nccl_preconfigured": (offer.get("orchestration") or {}).get("nccl_preconfigured"),
        "billing_granularity": (offer.get("billing") or {}).get("granularity"),
        "shared_storage": (provider.get("storage") or {}).get("shared_filesystem"),
        "non_blocking": topology.get("non_blocking"),
        "rail_optimized": topology.get("rail_optimized"),
        "locality_stated": True if topology.get("locality") else None,
    }


def upgrade() -> None:
    """Add the columns and fill them from the offer and provider records."""
    for name, kind in COLUMNS:
        op.add_column("offers", sa.Column(name, kind))
    conn = op.get_bind()
    providers = sa.table("providers", sa.column("slug", sa.String), sa.column("record_json"))
    offers = sa.table(
        "offers",
        sa.column("id", sa.String),
        sa.column("provider", sa.String),
        sa.column("record_json", sa.Text),
        *(sa.column(name, kind) for name, kind in COLUMNS),
    )
    records = {
        r.slug: json.loads(r.record_json)
        for r in conn.execute(sa.select(providers.c.slug, providers.c.record_json))
    }
    rows = conn.execute(sa.select(offers.c.id, offers.c.provider, offers.c.record_json)).all()
    for row in rows:
        facts = _facts(json.loads(row.record_json), records.get(row.provider) or {})
        conn.execute(sa.update(offers).where(offers.c.id == row.id).values(**facts))


def downgrade() -> None:
    """Drop the columns."""
    for name, _kind in reversed(COLUMNS):
        op.drop_column("offers", name)
