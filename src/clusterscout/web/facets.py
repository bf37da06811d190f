"""The filter sidebar: one group per DESIGN filter name, with counts under the other filters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.catalog.filters import OfferFilter, SortKey
from clusterscout.domain.models import FabricKind, OrchestrationKind, PriceTier, ProvisioningMode
from clusterscout.store import queries
from clusterscout.web.cells import (
    FABRIC_LABELS,
    ORCHESTRATION_LABELS,
    PROVISIONING_LABELS,
    TIER_LABELS,
)
from clusterscout.web.i18n import N_, Formatter

GBPS_STEPS: Final = (400, 800, 1600, 3200)
SORT_LABELS: Final = {
    SortKey.PRICE: N_("Price (lowest first)"),
    SortKey.GBPS: N_("Bandwidth per node (highest first)"),
    SortKey.NODES: N_("Cluster size (largest first)"),
    SortKey.PROVIDER: N_("Provider (A–Z)"),
}


@dataclass(frozen=True, slots=True)
class Option:
    """One choice in a facet group."""

    value: str
    label: str
    count: int | None
    checked: bool
    input_id: str


@dataclass(frozen=True, slots=True)
class Group:
    """A facet group; ``kind`` is checkbox, select, number or text."""

    name: str
    label: str
    kind: str
    options: tuple[Option, ...] = ()
    value: str = ""
    step: str = "any"
    placeholder: str = ""
    hint: str = ""


def _opt(name: str, value: str, label: str, count: int | None, checked: bool) -> Option:
    return Option(value, label, count, checked, f"f-{name}-{value}".replace(".", "-"))


def _checkboxes(
    name: str,
    label: str,
    choices: Sequence[tuple[str, str]],
    counts: Mapping[str, int],
    selected: Sequence[str],
) -> Group:
    options = tuple(
        _opt(name, value, text, counts.get(value, 0), value in selected) for value, text in choices
    )
    return Group(name, label, "checkbox", options)


def _fmt_num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def build_groups(
    conn: Connection,
    fmt: Formatter,
    f: OfferFilter,
    sort: SortKey,
    providers: Mapping[str, Mapping[str, Any]],
    *,
    all_offers: bool,
) -> list[Group]:
    """Facet groups for the current filter ``f``; counts hold the other filters fixed."""
    _ = fmt.gettext
    gpus = queries.gpu_names(conn)
    gpu_counts = queries.facet_counts(conn, replace(f, gpu=()), "gpu")
    fabric_counts = queries.facet_counts(conn, replace(f, fabric=()), "fabric")
    groups: list[Group] = []
    if all_offers:
        mn = "" if f.multi_node is None else ("true" if f.multi_node else "false")
        groups.append(
            Group(
                "multi_node",
                _("Multi-node"),
                "select",
                (
                    _opt("multi_node", "", _("any"), None, mn == ""),
                    _opt("multi_node", "true", _("yes"), None, mn == "true"),
                    _opt("multi_node", "false", _("no"), None, mn == "false"),
                ),
            )
        )
    groups.append(_checkboxes("gpu", _("GPU model"), [(g, g) for g in gpus], gpu_counts, f.gpu))
    groups.append(
        _checkboxes(
            "fabric",
            _("Fabric"),
            [(k.value, FABRIC_LABELS[k.value]) for k in FabricKind],
            fabric_counts,
            [k.value for k in f.fabric],
        )
    )
    rdma_count = queries.count_offers(conn, replace(f, rdma=True))
    groups.append(
        Group(
            "rdma",
            _("GPUDirect RDMA"),
            "checkbox",
            (_opt("rdma", "true", _("required"), rdma_count, f.rdma is True),),
        )
    )
    # Select options carry no count: a <select> cannot show one (checkbox groups do), so
    # counting would cost a query per option on every page for nothing.
    gbps_options = [_opt("min_gbps", "", _("any"), None, f.min_gbps is None)]
    for step in GBPS_STEPS:
        label = _("at least %(num)s Gbit/s") % {"num": fmt.number(step)}
        gbps_options.append(_opt("min_gbps", str(step), label, None, f.min_gbps == step))
    if f.min_gbps is not None and f.min_gbps not in GBPS_STEPS:
        label = _("at least %(num)s Gbit/s") % {"num": fmt.number(f.min_gbps)}
        gbps_options.append(_opt("min_gbps", _fmt_num(f.min_gbps), label, None, True))
    groups.append(Group("min_gbps", _("Bandwidth per node"), "select", tuple(gbps_options)))
    orch = tuple(
        _opt(
            "orchestration",
            k.value,
            ORCHESTRATION_LABELS[k.value],
            queries.count_offers(
                conn, replace(f, orchestration=tuple(dict.fromkeys((*f.orchestration, k))))
            ),
            k in f.orchestration,
        )
        for k in OrchestrationKind
    )
    groups.append(Group("orchestration", _("Managed orchestration"), "checkbox", orch))
    prov = tuple(
        _opt(
            "provisioning",
            m.value,
            _(PROVISIONING_LABELS[m.value]),
            queries.count_offers(conn, replace(f, provisioning=(m,))),
            m in f.provisioning,
        )
        for m in ProvisioningMode
    )
    groups.append(Group("provisioning", _("Provisioning"), "checkbox", prov))
    tier_options = [_opt("price_tier", "", _("any (lowest listed)"), None, f.price_tier is None)]
    tier_options.extend(
        _opt("price_tier", t.value, _(TIER_LABELS[t.value]), None, f.price_tier is t)
        for t in PriceTier
    )
    groups.append(
        Group(
            "price_tier",
            _("Price tier"),
            "select",
            tuple(tier_options),
            hint=_("Shows, filters and sorts on this tier's price; offers without one drop out."),
        )
    )
    groups.append(
        Group(
            "max_price",
            _("Max price (USD per GPU-hour)"),
            "number",
            value=_fmt_num(f.max_price),
            step="0.01",
        )
    )
    groups.append(
        Group(
            "min_nodes",
            _("Minimum cluster size (nodes)"),
            "number",
            value=_fmt_num(f.min_nodes),
            step="1",
        )
    )
    groups.append(
        Group("region", _("Region"), "text", value=f.region or "", placeholder=_("e.g. us-east"))
    )
    if all_offers:
        counts = queries.facet_counts(conn, replace(f, provider=()), "provider")
        choices = sorted(
            ((s, str(p["name"])) for s, p in providers.items()), key=lambda c: c[1].lower()
        )
        groups.append(_checkboxes("provider", _("Provider"), choices, counts, f.provider))
    sort_options = tuple(
        _opt("sort", k.value, _(SORT_LABELS[k]), None, k is sort) for k in SORT_LABELS
    )
    groups.append(Group("sort", _("Sort by"), "select", sort_options))
    return groups


def active_filters(groups: Sequence[Group]) -> list[tuple[str, str]]:
    """(group label, option label) pairs of what is currently selected, for a summary line."""
    out: list[tuple[str, str]] = []
    for g in groups:
        if g.name == "sort":
            continue
        if g.kind in {"checkbox", "select"}:
            out.extend((g.label, o.label) for o in g.options if o.checked and o.value)
        elif g.value:
            out.append((g.label, g.value))
    return out
