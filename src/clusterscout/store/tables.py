"""SQLAlchemy Core tables, valid on SQLite and PostgreSQL; filter columns are indexed."""

from __future__ import annotations

from typing import Final

from sqlalchemy import (
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

from clusterscout.catalog.filters import TopologyClaim
from clusterscout.domain.models import PriceTier

metadata = MetaData()

meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

providers = Table(
    "providers",
    metadata,
    Column("slug", String(80), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("url", Text, nullable=False),
    Column("multi_node", String(16), nullable=False, index=True),
    Column("hq_country", String(2)),
    Column("offer_count", Integer, nullable=False),
    # The full public record (with sources) as JSON: listing pages read it without joins.
    Column("record_json", Text, nullable=False),
)

offers = Table(
    "offers",
    metadata,
    Column("id", String(170), primary_key=True),
    Column("provider", String(80), ForeignKey("providers.slug"), nullable=False, index=True),
    Column("provider_name", String(200), nullable=False),
    Column("gpu", String(80), nullable=False, index=True),
    Column("gpus_per_node", Integer),
    Column("fabric", String(16), index=True),
    Column("per_node_gbps", Float, index=True),
    Column("gpudirect_rdma", Boolean),
    Column("min_nodes", Integer),
    Column("max_nodes", Integer),
    Column("max_nodes_by_quote", Integer),
    Column("reach_nodes", Integer, index=True),
    Column("multi_node", Boolean, nullable=False, index=True),
    Column("managed_slurm", Boolean),
    Column("managed_kubernetes", Boolean),
    Column("on_demand", Boolean),
    Column("reserved", Boolean),
    Column("waitlist", Boolean),
    Column("regions_text", Text, nullable=False),
    Column("from_usd_per_gpu_hour", Float, index=True),
    # Lowest current price per tier, for the price_tier filter and sort (migration 0003).
    Column("usd_on_demand", Float, index=True),
    Column("usd_reserved", Float, index=True),
    Column("usd_spot", Float, index=True),
    Column("usd_capacity_block", Float, index=True),
    # The headline price (first uninterruptible tier priced) and its date, for the default
    # sort: cheapest first, fresher first at equal price (migration 0006).
    Column("headline_usd_per_gpu_hour", Float, index=True),
    Column("headline_as_of", Date),
    # The provider's tier in the newest ClusterMAX edition, or "not_rated" (migration 0007).
    Column("clustermax_tier", String(32), index=True),
    # The rest of the buyer's checklist, one filter each (migration 0009): NCCL configured,
    # billing granularity, the provider's shared file system, topology claims. A locality is
    # True when stated and null when not (a statement, not a yes/no fact).
    Column("nccl_preconfigured", Boolean),
    Column("billing_granularity", String(16)),
    Column("shared_storage", Boolean),
    Column("non_blocking", Boolean),
    Column("rail_optimized", Boolean),
    Column("locality_stated", Boolean),
    Column("record_json", Text, nullable=False),
    Index("ix_offers_fabric_rdma", "fabric", "gpudirect_rdma"),
)

# Where each offer is (migration 0008): one row per place key of ``Offer.places`` (region,
# country, M49 areas), so the region filter is one indexed IN over places.
offer_places = Table(
    "offer_places",
    metadata,
    Column("offer_id", String(170), ForeignKey("offers.id"), nullable=False, index=True),
    Column("place", String(120), nullable=False),
    Index("ix_offer_places_place", "place", "offer_id"),
)

# The catalog's free text in each translated language, keyed by language and the English text
# (ADR 0011); written by every build from data/locale, so serving never reads data/.
catalog_translations = Table(
    "catalog_translations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("lang", String(8), nullable=False, index=True),
    Column("source", Text, nullable=False),
    Column("text", Text, nullable=False),
)

# Which offers column holds each topology claim's fact (the ``topology`` filter).
TOPOLOGY_COLUMNS: Final = {
    TopologyClaim.NON_BLOCKING: "non_blocking",
    TopologyClaim.RAIL_OPTIMIZED: "rail_optimized",
    TopologyClaim.LOCALITY: "locality_stated",
}

# Which offers column holds the lowest current price of each tier.
TIER_PRICE_COLUMNS: Final = {
    PriceTier.ON_DEMAND: "usd_on_demand",
    PriceTier.RESERVED: "usd_reserved",
    PriceTier.SPOT: "usd_spot",
    PriceTier.CAPACITY_BLOCK: "usd_capacity_block",
}

# Append-only: every price ever seen. The current price of an (offer, tier, term) is the newest
# row. No foreign key to offers: a catalog rebuild replaces offers while history must survive.
price_observations = Table(
    "price_observations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("offer_id", String(170), nullable=False),
    Column("tier", String(20), nullable=False),
    Column("term", String(200)),
    Column("usd_per_gpu_hour", Float, nullable=False),
    Column("as_of", Date, nullable=False),
    Column("observed_at", DateTime(timezone=True), nullable=False),
    Column("feed", String(40), nullable=False),
    Column("source_url", Text, nullable=False),
    Column("source_checked_on", Date),
    Column("source_kind", String(16)),
    Column("term_days", Integer),
    Column("prepay", Boolean),
    Column("note", Text),
    Index("ix_price_obs_offer_tier", "offer_id", "tier", "observed_at"),
)

# One row per feed applied by `clusterscout refresh` (dry runs are not recorded): what it read,
# when, whether it succeeded and, when it failed, why. Observations it added are in
# price_observations with the same feed name.
feed_runs = Table(
    "feed_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("feed", String(40), nullable=False),
    Column("input", Text),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
    Column("status", String(16), nullable=False),
    Column("message", Text),
    Column("rows_read", Integer, nullable=False),
    Column("new_prices", Integer, nullable=False),
    Column("changed_prices", Integer, nullable=False),
    Column("unchanged_prices", Integer, nullable=False),
    Column("unmatched_items", Integer, nullable=False),
    Index("ix_feed_runs_feed_started", "feed", "started_at"),
)
