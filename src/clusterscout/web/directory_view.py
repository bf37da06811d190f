"""The provider directory page's view-model: filter groups, rows and sort links."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clusterscout.app.directory import Directory
from clusterscout.catalog.directory import DirectorySort
from clusterscout.catalog.filters import ClusterMaxChoice, TopologyClaim
from clusterscout.domain.messages import N_
from clusterscout.domain.models import (
    BillingGranularity,
    FabricKind,
    MultiNode,
    OrchestrationKind,
    ProvisioningMode,
)
from clusterscout.web import params
from clusterscout.web.cells import (
    FABRIC_LABELS,
    GRANULARITY_LABELS,
    MULTI_NODE_LABELS,
    ORCHESTRATION_LABELS,
    PROVISIONING_LABELS,
    RATING_LABELS,
    TIER_LABELS,
    TOPOLOGY_LABELS,
)
from clusterscout.web.i18n import Formatter

SORT_LABELS = {
    DirectorySort.NAME: N_("name"),
    DirectorySort.OFFERS: N_("most offers"),
    DirectorySort.PRICE: N_("cheapest price"),
    DirectorySort.FACTS: N_("most checklist facts known"),
}


@dataclass(frozen=True, slots=True)
class Choice:
    """One checkbox or option: its value, label and whether it is chosen."""

    value: str
    label: str
    checked: bool


@dataclass(frozen=True, slots=True)
class Group:
    """A group of checkboxes for one query parameter."""

    name: str
    legend: str
    choices: tuple[Choice, ...]


@dataclass(frozen=True, slots=True)
class Row:
    """One provider in the table, every cell already formatted."""

    slug: str
    name: str
    multi_node: str
    fabrics: str
    clustermax: str
    offers: str
    price: str | None
    price_detail: str
    facts: str
    facts_share: int


def _group(
    fmt: Formatter,
    name: str,
    legend: str,
    values: Sequence[str],
    labels: dict[str, str],
    chosen: Sequence[str],
) -> Group:
    return Group(
        name,
        fmt.gettext(legend),
        tuple(Choice(v, fmt.gettext(labels.get(v, v)), v in chosen) for v in values),
    )


def groups(fmt: Formatter, found: Directory) -> list[Group]:
    """The filter form's checkbox groups, ticked as asked."""
    f = found.filter
    return [
        _group(
            fmt,
            "multi_node",
            N_("Multi-node"),
            MultiNode.values(),
            MULTI_NODE_LABELS,
            [m.value for m in found.multi_node],
        ),
        _group(fmt, "fabric", N_("Fabric"), FabricKind.values(), FABRIC_LABELS, f.fabric),
        _group(
            fmt,
            "clustermax",
            N_("ClusterMAX rating"),
            [c.value for c in ClusterMaxChoice],
            RATING_LABELS,
            f.clustermax,
        ),
        _group(
            fmt,
            "orchestration",
            N_("Managed orchestration"),
            OrchestrationKind.values(),
            ORCHESTRATION_LABELS,
            f.orchestration,
        ),
        _group(
            fmt,
            "provisioning",
            N_("Provisioning"),
            ProvisioningMode.values(),
            PROVISIONING_LABELS,
            f.provisioning,
        ),
        _group(
            fmt,
            "topology",
            N_("Topology and locality"),
            [t.value for t in TopologyClaim],
            TOPOLOGY_LABELS,
            f.topology,
        ),
        _group(
            fmt,
            "billing",
            N_("Billing granularity"),
            BillingGranularity.values(),
            GRANULARITY_LABELS,
            f.billing,
        ),
        # The two yes/no checklist facts: ticking asks for a stated "yes".
        _group(
            fmt,
            "nccl",
            N_("NCCL preconfigured"),
            ["true"],
            {"true": N_("required")},
            ["true"] if f.nccl else [],
        ),
        _group(
            fmt,
            "shared_storage",
            N_("Shared storage"),
            ["true"],
            {"true": N_("required")},
            ["true"] if f.shared_storage else [],
        ),
    ]


def sort_choices(fmt: Formatter, found: Directory) -> list[Choice]:
    """The sort select's options."""
    return [Choice(k.value, fmt.gettext(SORT_LABELS[k]), k is found.sort) for k in DirectorySort]


def rows(fmt: Formatter, found: Directory) -> list[Row]:
    """The table's rows."""
    out = []
    for r in found.rows:
        cheapest: dict[str, Any] | None = r["cheapest"]
        price, detail = None, ""
        if cheapest is not None:
            price = fmt.gettext("%(price)s per GPU-hour") % {
                "price": fmt.usd(cheapest["usd_per_gpu_hour"])
            }
            detail = fmt.gettext("%(gpu)s, %(tier)s, %(day)s") % {
                "gpu": cheapest["gpu"],
                "tier": fmt.gettext(TIER_LABELS[cheapest["tier"]]),
                "day": fmt.day(cheapest["as_of"]),
            }
        known = r["facts_known"]
        out.append(
            Row(
                slug=r["slug"],
                name=r["name"],
                multi_node=fmt.gettext(MULTI_NODE_LABELS[r["multi_node"]]),
                fabrics=fmt.join([FABRIC_LABELS.get(k, k) for k in r["fabrics"]]) or "—",
                clustermax=fmt.gettext(RATING_LABELS.get(r["clustermax"], r["clustermax"])),
                offers=fmt.number(r["offer_count"]),
                price=price,
                price_detail=detail,
                facts=fmt.gettext("%(known)s of %(total)s")
                % {
                    "known": fmt.number(known["known"]),
                    "total": fmt.number(known["total"]),
                },
                facts_share=round(100 * known["known"] / known["total"]),
            )
        )
    return out


def sort_link(lang: str, found: Directory, key: DirectorySort) -> str:
    """This view's URL with another order."""
    pairs = [(k, v) for k, v in found.params() if k != "sort"]
    if key is not DirectorySort.NAME:
        pairs.append(("sort", key.value))
    return f"/{lang}/providers/" + params.query_string(sorted(pairs))
