"""The downloadable catalog's tables as a Frictionless Data Package: fields, types, units, licence.

The column lists are those of ``catalog.exports`` (providers, offers) plus the price history;
``tests`` check that every CSV header matches its resource's fields, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

LICENSE: Final = {
    "name": "CC-BY-4.0",
    "path": "https://creativecommons.org/licenses/by/4.0/",
    "title": "Creative Commons Attribution 4.0 International",
}


@dataclass(frozen=True, slots=True)
class Column:
    """A table column: Frictionless type, unit (if any) and what it holds."""

    name: str
    type: str
    description: str
    unit: str | None = None
    enum: tuple[str, ...] = ()

    def descriptor(self) -> dict[str, Any]:
        """The Table Schema field (``unit`` is our own property: the spec has none)."""
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.type == "boolean":
            out.update(trueValues=["true"], falseValues=["false"])
        out["description"] = self.description
        if self.unit:
            out["unit"] = self.unit
        if self.enum:
            out["constraints"] = {"enum": list(self.enum)}
        return out


@dataclass(frozen=True, slots=True)
class Table:
    """One resource: name, title, primary key and columns."""

    name: str
    title: str
    primary_key: tuple[str, ...]
    columns: tuple[Column, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        """The CSV header, in order."""
        return tuple(c.name for c in self.columns)


_URLS = "Public source URLs of the row's facts, space-separated."
PROVIDERS: Final = Table(
    "providers",
    "Providers",
    ("slug",),
    (
        Column("slug", "string", "Provider id, as in the site's URLs and the API."),
        Column("name", "string", "Provider name."),
        Column(
            "multi_node",
            "string",
            "Whether the provider rents clusters of several GPU servers joined by a fabric.",
            enum=("yes", "no", "unknown"),
        ),
        Column("hq_country", "string", "Headquarters country, ISO 3166-1 alpha-2."),
        Column("regions", "string", "Regions with GPU capacity, separated by '; '."),
        Column("offer_count", "integer", "Offers of the provider in the catalog."),
        Column("url", "string", "The provider's GPU cluster page."),
        Column("source_urls", "string", _URLS),
    ),
)

OFFERS: Final = Table(
    "offers",
    "Cluster offers",
    ("id",),
    (
        Column("id", "string", "Offer id: provider slug and the provider's own offer id."),
        Column("provider", "string", "Provider slug (providers.slug)."),
        Column("gpu", "string", "Canonical GPU model name."),
        Column("gpus_per_node", "integer", "GPUs in one server (node).", "GPU"),
        Column(
            "fabric",
            "string",
            "Inter-node network fabric.",
            enum=("infiniband", "roce", "efa", "tcpxo", "tcpx", "ethernet"),
        ),
        Column("per_node_gbps", "number", "Inter-node bandwidth per node.", "Gbit/s"),
        Column("gpudirect_rdma", "boolean", "GPUDirect RDMA between nodes."),
        Column("min_nodes", "integer", "Smallest cluster the offer rents.", "node"),
        Column("max_nodes", "integer", "Largest cluster the provider states.", "node"),
        Column(
            "max_nodes_by_quote",
            "integer",
            "Largest cluster the provider states it rents on request (by quote).",
            "node",
        ),
        Column("on_demand_clusters", "boolean", "Multi-node clusters can be rented on demand."),
        Column("managed_slurm", "boolean", "The provider runs Slurm for the customer."),
        Column("managed_kubernetes", "boolean", "The provider runs Kubernetes for the customer."),
        Column(
            "from_usd_per_gpu_hour",
            "number",
            "Lowest current price of any tier.",
            "USD per GPU-hour",
        ),
        Column("price_tiers", "string", "Price tiers with a current price, space-separated."),
        Column(
            "measured_busbw_gbs",
            "number",
            "Bus bandwidth of a published multi-node collective benchmark on the offer "
            "(the run a plan uses, else the first published).",
            "GB/s",
        ),
        Column(
            "measured_run",
            "string",
            "That run: collective, nodes x GPUs per node, message size.",
        ),
        Column(
            "predicted_busbw_gbs",
            "number",
            "The model's bus bandwidth for the same run on the advertised fabric.",
            "GB/s",
        ),
        Column("source_urls", "string", _URLS),
    ),
)

PRICES: Final = Table(
    "prices",
    "Price observations",
    (),  # no key: a term may be empty, and a key field may not
    (
        Column("offer_id", "string", "Offer id (offers.id)."),
        Column("provider", "string", "Provider slug (providers.slug)."),
        Column(
            "tier",
            "string",
            "Price tier.",
            enum=("on_demand", "reserved", "spot", "capacity_block"),
        ),
        Column("term", "string", "Minimum commitment as the provider words it; empty for none."),
        Column("term_days", "integer", "Minimum commitment.", "day"),
        Column("usd_per_gpu_hour", "number", "Price.", "USD per GPU-hour"),
        Column("as_of", "date", "Date the price applied, from its source."),
        Column("source_url", "string", "Public page the price was read from."),
        Column(
            "source_kind",
            "string",
            "primary: the provider's own page; secondary: a third party; catalog: a price list.",
            enum=("primary", "secondary", "catalog"),
        ),
        Column("source_checked_on", "date", "Date we read the source."),
        Column("feed", "string", "How the price entered: catalog (curated) or a price feed."),
        Column("observed_at", "datetime", "When we recorded the observation (UTC)."),
        Column("current", "boolean", "The newest price of its offer, tier and term."),
    ),
)

TABLES: Final = (PROVIDERS, OFFERS, PRICES)


def descriptor(
    tables: tuple[Table, ...],
    *,
    version: str,
    created: str,
    homepage: str,
    files: dict[str, str],
) -> dict[str, Any]:
    """The ``datapackage.json`` of a download: one CSV and one JSON resource per table.

    Args:
        tables: the tables in the download.
        version: the data version.
        created: when the data was built (ISO 8601, UTC).
        homepage: the downloads page.
        files: ``table name -> file stem`` (``offers`` -> ``offers``: CSV at ``offers.csv``).
    """
    resources: list[dict[str, Any]] = []
    for t in tables:
        schema = {
            "fields": [c.descriptor() for c in t.columns],
            "missingValues": [""],
        }
        if t.primary_key:
            schema["primaryKey"] = list(t.primary_key)
        stem = files[t.name]
        resources.append(
            {
                "name": t.name,
                "title": t.title,
                "path": f"{stem}.csv",
                "profile": "tabular-data-resource",
                "format": "csv",
                "mediatype": "text/csv",
                "encoding": "utf-8",
                "schema": schema,
            }
        )
        resources.append(
            {
                "name": f"{t.name}-json",
                "title": f"{t.title} (JSON)",
                "description": "The same rows as a JSON array of objects; unknown is null.",
                "path": f"{stem}.json",
                "profile": "data-resource",
                "format": "json",
                "mediatype": "application/json",
                "encoding": "utf-8",
                "schema": schema,
            }
        )
    return {
        "profile": "tabular-data-package",
        "name": "clusterscout-catalog",
        "title": "clusterscout: multi-node GPU cluster offers, providers and prices",
        "description": (
            "Cloud GPU providers and their multi-node cluster offers: fabric, bandwidth per "
            "node, GPUDirect RDMA, orchestration, provisioning and every price observed, each "
            "fact with its public source. Empty cells (null in JSON) mean unknown."
        ),
        "version": version,
        "created": created,
        "homepage": homepage,
        "licenses": [LICENSE],
        "sources": [{"title": "Public provider pages and price lists, cited per row"}],
        "resources": resources,
    }
