"""The offer comparison: up to six offers side by side, prices by tier with their dates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clusterscout.domain.models import PriceTier
from clusterscout.web import params
from clusterscout.web.cells import TIER_LABELS, Cell
from clusterscout.web.i18n import Formatter
from clusterscout.web.viewmodels import OfferRow, offer_row, price_cell

Record = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Column:
    """One compared offer: its table row and the links under its name."""

    row: OfferRow
    provider_href: str
    launch_href: str
    remove_href: str


@dataclass(frozen=True, slots=True)
class Line:
    """One fact across the compared offers."""

    label: str
    cells: tuple[Cell, ...]


def columns(
    fmt: Formatter,
    records: Sequence[Record],
    providers: Mapping[str, Record],
    stale_after_days: int,
    nodes: int | None,
) -> list[Column]:
    """A column per offer, in the order asked."""
    ids = [str(r["id"]) for r in records]
    out = []
    for r in records:
        row = offer_row(fmt, r, providers.get(r["provider"]), stale_after_days)
        provider = f"/{fmt.lang}/providers/{r['provider']}/"
        launch = provider + params.query_string([("nodes", str(nodes))] if nodes else [])
        rest = [("o", i) for i in ids if i != r["id"]]
        if nodes:
            rest.append(("nodes", str(nodes)))
        remove = f"/{fmt.lang}/compare/offers/" + params.query_string(rest)
        out.append(Column(row, provider, f"{launch}#launch-{r['id']}", remove))
    return out


def lines(
    fmt: Formatter, records: Sequence[Record], cols: Sequence[Column], stale_after_days: int
) -> list[Line]:
    """The facts, then one line per price tier: the lowest price and its date."""
    _ = fmt.gettext
    facts = [
        (_("GPU"), [c.row.gpu for c in cols]),
        (_("GPUs per node"), [c.row.gpus_per_node for c in cols]),
        (_("Fabric"), [c.row.fabric for c in cols]),
        (_("Gbit/s per node"), [c.row.gbps for c in cols]),
        (_("GPUDirect RDMA"), [c.row.rdma for c in cols]),
        (_("Cluster size"), [c.row.cluster_size for c in cols]),
        (_("Region"), [c.row.region for c in cols]),
        (_("How fast"), [c.row.access for c in cols]),
        (_("Provisioning"), [c.row.provisioning for c in cols]),
        (_("Orchestration"), [c.row.orchestration for c in cols]),
        (_("Storage"), [c.row.storage for c in cols]),
    ]
    for tier in PriceTier:
        label = _("%(tier)s, per GPU-hour") % {"tier": _(TIER_LABELS[tier.value])}
        cells = [
            price_cell(fmt, r["prices"], stale_after_days, tier.value, with_tier=False)
            for r in records
        ]
        facts.append((label[:1].upper() + label[1:], cells))
    return [Line(label, tuple(cells)) for label, cells in facts]
