"""Headline price and its date on offers; unknown orchestration and provisioning stay null.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import json
from datetime import date

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

HEADLINE_TIERS = ("on_demand", "reserved", "capacity_block")
# Record paths of the tri-state columns, which older builds stored as False when unknown.
TRI_STATE = {
    "managed_slurm": ("orchestration", "managed_slurm"),
    "managed_kubernetes": ("orchestration", "managed_kubernetes"),
    "on_demand": ("provisioning", "on_demand_clusters"),
    "reserved": ("provisioning", "reserved"),
    "waitlist": ("provisioning", "waitlist"),
}


def _headline(prices: list[dict[str, object]]) -> dict[str, object] | None:
    # A copy of catalog.records.headline_price as of this revision: migrations never change.
    for tier in HEADLINE_TIERS:
        priced = [p for p in prices if p.get("tier") == tier]
        if priced:
            best = min(priced, key=lambda p: float(str(p["usd_per_gpu_hour"])))
            return {
                "tier": tier,
                "usd_per_gpu_hour": float(str(best["usd_per_gpu_hour"])),
                "as_of": str(best["as_of"]),
                "term": best.get("term"),
            }
    return None


def upgrade() -> None:
    """Add the headline columns and fill them, the record's headline and the tri-state columns."""
    op.add_column("offers", sa.Column("headline_usd_per_gpu_hour", sa.Float))
    op.add_column("offers", sa.Column("headline_as_of", sa.Date))
    op.create_index("ix_offers_headline_usd_per_gpu_hour", "offers", ["headline_usd_per_gpu_hour"])
    conn = op.get_bind()
    offers = sa.table(
        "offers", sa.column("id", sa.String), sa.column("record_json", sa.Text),
        sa.column("headline_usd_per_gpu_hour", sa.Float), sa.column("headline_as_of", sa.Date),
        *(sa.column(c, sa.Boolean) for c in TRI_STATE),
    )  # fmt: skip
    for row in conn.execute(sa.select(offers.c.id, offers.c.record_json)).all():
        record = json.loads(row.record_json)
        headline = _headline(record.get("prices") or [])
        record["headline_price"] = headline
        record.setdefault("conflicts", [])
        values = {c: (record.get(a) or {}).get(b) for c, (a, b) in TRI_STATE.items()}
        conn.execute(
            sa.update(offers)
            .where(offers.c.id == row.id)
            .values(
                record_json=json.dumps(record),
                headline_usd_per_gpu_hour=headline["usd_per_gpu_hour"] if headline else None,
                headline_as_of=date.fromisoformat(str(headline["as_of"])) if headline else None,
                **values,
            )
        )


def downgrade() -> None:
    """Drop the headline columns and the record keys that older releases do not publish."""
    conn = op.get_bind()
    offers = sa.table("offers", sa.column("id", sa.String), sa.column("record_json", sa.Text))
    for row in conn.execute(sa.select(offers.c.id, offers.c.record_json)).all():
        record = json.loads(row.record_json)
        record.pop("headline_price", None)
        record.pop("conflicts", None)
        conn.execute(
            sa.update(offers).where(offers.c.id == row.id).values(record_json=json.dumps(record))
        )
    op.drop_index("ix_offers_headline_usd_per_gpu_hour", table_name="offers")
    op.drop_column("offers", "headline_as_of")
    op.drop_column("offers", "headline_usd_per_gpu_hour")
