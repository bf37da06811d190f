"""The provider directory's summary of a provider: fabrics, cheapest price, facts known."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final, TypeVar

from clusterscout.catalog.filters import CLUSTERMAX, ClusterMaxChoice
from clusterscout.domain.errors import InputError

Record = Mapping[str, Any]
R = TypeVar("R", bound=Mapping[str, Any])

DIRECTORY_TIERS: Final = ("on_demand", "reserved")
"""Tiers the directory's cheapest price is taken from: capacity you keep (no spot)."""


def _offer_fact(*path: str) -> Callable[[Record, Sequence[Record]], bool]:
    """Known when any offer states the fact at ``path`` (the scorecard's network and topology)."""

    def known(_provider: Record, offers: Sequence[Record]) -> bool:
        for offer in offers:
            value: Any = offer
            for key in path:
                value = value.get(key) if isinstance(value, Mapping) else None
            if value not in (None, "", []):
                return True
        return False

    return known


def _provider_fact(group: str, name: str) -> Callable[[Record, Sequence[Record]], bool]:
    """Known when the provider states ``group.name`` (a list counts when not empty)."""

    def known(provider: Record, _offers: Sequence[Record]) -> bool:
        return (provider.get(group) or {}).get(name) not in (None, "", [])

    return known


CHECKLIST_FACTS: Final = (
    ("network", "fabric", _offer_fact("fabric")),
    ("network", "per_node_gbps", _offer_fact("per_node_gbps")),
    ("network", "measured_fabric", _offer_fact("measured_fabric")),
    ("network", "gpudirect_rdma", _offer_fact("gpudirect_rdma")),
    ("topology", "non_blocking", _offer_fact("topology", "non_blocking")),
    ("topology", "rail_optimized", _offer_fact("topology", "rail_optimized")),
    ("topology", "locality", _offer_fact("topology", "locality")),
    ("orchestration", "managed_slurm", _provider_fact("orchestration", "managed_slurm")),
    ("orchestration", "managed_kubernetes", _provider_fact("orchestration", "managed_kubernetes")),
    ("orchestration", "nccl_preconfigured", _provider_fact("orchestration", "nccl_preconfigured")),
    ("orchestration", "raw_vms", _provider_fact("orchestration", "raw_vms")),
    ("provisioning", "on_demand_clusters", _provider_fact("provisioning", "on_demand_clusters")),
    ("provisioning", "reserved", _provider_fact("provisioning", "reserved")),
    ("provisioning", "reserved_terms", _provider_fact("provisioning", "reserved_terms")),
    ("provisioning", "waitlist", _provider_fact("provisioning", "waitlist")),
    ("billing", "granularity", _provider_fact("billing", "granularity")),
    ("billing", "minimum", _provider_fact("billing", "minimum")),
    ("storage", "shared_filesystem", _provider_fact("storage", "shared_filesystem")),
    ("storage", "products", _provider_fact("storage", "products")),
    ("storage", "throughput_gbs", _provider_fact("storage", "throughput_gbs")),
    ("storage", "usd_per_gib_month", _provider_fact("storage", "usd_per_gib_month")),
)
"""The buyer's checklist as the provider page's scorecard shows it: (dimension, fact, known?)."""


def facts_known(provider: Record, offers: Sequence[Record]) -> dict[str, Any]:
    """How many checklist facts the catalog states for a provider, and which are unknown."""
    unknown = [
        f"{dim}.{name}" for dim, name, known in CHECKLIST_FACTS if not known(provider, offers)
    ]
    total = len(CHECKLIST_FACTS)
    return {"known": total - len(unknown), "total": total, "unknown": unknown}


def cheapest(offers: Sequence[Record]) -> dict[str, Any] | None:
    """The lowest on-demand or reserved price over ``offers``, with its tier, date and offer.

    At equal price the newer observation wins, then the offer id decides (stable output).
    """
    best: tuple[float, str, str] | None = None
    found: dict[str, Any] | None = None
    for offer in offers:
        for price in offer.get("prices") or ():
            if price["tier"] not in DIRECTORY_TIERS:
                continue
            # Newest first at equal price: the ISO date with its digits complemented.
            key = (float(price["usd_per_gpu_hour"]), _inverse(price["as_of"]), offer["id"])
            if best is None or key < best:
                best = key
                found = {
                    "usd_per_gpu_hour": price["usd_per_gpu_hour"],
                    "tier": price["tier"],
                    "as_of": price["as_of"],
                    "offer": offer["id"],
                    "gpu": offer["gpu"],
                }
    return found


def _inverse(iso_day: str) -> str:
    """A string that sorts newest first for ISO dates (each digit complemented)."""
    return "".join(chr(ord("9") - ord(c) + ord("0")) if c.isdigit() else c for c in iso_day)


def clustermax_of(provider: Record, editions: Sequence[Record]) -> str:
    """The provider's tier in the newest ClusterMAX edition (``editions`` newest first), or
    ``not_rated``: the records' form of ``filters.clustermax_choice``."""
    edition = next((e for e in editions if e["rater"] == CLUSTERMAX), None)
    if edition is None:
        return ClusterMaxChoice.NOT_RATED.value
    return next(
        (
            str(r["tier"])
            for r in provider.get("ratings") or ()
            if r["rater"] == CLUSTERMAX and r["edition"] == edition["edition"]
        ),
        ClusterMaxChoice.NOT_RATED.value,
    )


def summary(
    provider: Record, offers: Sequence[Record], editions: Sequence[Record]
) -> dict[str, Any]:
    """The directory's fields for one provider, added to its public record (additive keys)."""
    return {
        "offer_count": len(offers),
        "fabrics": sorted({str(o["fabric"]) for o in offers if o.get("fabric")}),
        "clustermax": clustermax_of(provider, editions),
        "cheapest": cheapest(offers),
        "facts_known": facts_known(provider, offers),
    }


class DirectorySort(StrEnum):
    """Orderings of the provider directory."""

    NAME = "name"
    OFFERS = "offers"
    PRICE = "price"
    FACTS = "facts"


def parse_directory_sort(raw: str | None) -> DirectorySort:
    """Parse the directory's sort key (default: name)."""
    if raw is None or raw.strip() == "":
        return DirectorySort.NAME
    try:
        return DirectorySort(raw.strip().lower())
    except ValueError:
        allowed = ", ".join(k.value for k in DirectorySort)
        raise InputError("sort", f"{raw!r} is not one of: {allowed}") from None


def sort_rows(rows: Sequence[R], key: DirectorySort) -> list[R]:
    """Rows (records with ``summary`` keys) in ``key``'s order; unknown prices go last.

    Offers and facts sort most first; every order ends by name so ties read alphabetically.
    """

    def name(r: Record) -> str:
        return str(r["name"]).lower()

    def order(r: Record) -> tuple[Any, ...]:
        if key is DirectorySort.OFFERS:
            return (-r["offer_count"], name(r))
        if key is DirectorySort.FACTS:
            return (-r["facts_known"]["known"], name(r))
        if key is DirectorySort.PRICE:
            price = r["cheapest"]
            return (price is None, price["usd_per_gpu_hour"] if price else 0.0, name(r))
        return (name(r),)

    return sorted(rows, key=order)


DIRECTORY_COLUMNS: Final = (
    "slug",
    "name",
    "multi_node",
    "fabrics",
    "clustermax",
    "regions",
    "offer_count",
    "cheapest_usd_per_gpu_hour",
    "cheapest_tier",
    "cheapest_gpu",
    "cheapest_as_of",
    "facts_known",
    "facts_total",
    "url",
)
"""The directory's table and CSV columns (the JSON keeps whole records)."""


def directory_row(row: Record) -> dict[str, Any]:
    """A directory row (a provider record with ``summary``'s keys) flattened to columns."""
    price = row["cheapest"] or {}
    return {
        "slug": row["slug"],
        "name": row["name"],
        "multi_node": row["multi_node"],
        "fabrics": "; ".join(row["fabrics"]) or None,
        "clustermax": row["clustermax"],
        "regions": "; ".join(row["regions"]) or None,
        "offer_count": row["offer_count"],
        "cheapest_usd_per_gpu_hour": price.get("usd_per_gpu_hour"),
        "cheapest_tier": price.get("tier"),
        "cheapest_gpu": price.get("gpu"),
        "cheapest_as_of": price.get("as_of"),
        "facts_known": row["facts_known"]["known"],
        "facts_total": row["facts_known"]["total"],
        "url": row["url"],
    }
