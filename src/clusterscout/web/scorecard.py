"""The buyer's checklist over six dimensions, per provider: facts, sources, and gaps as unknown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from clusterscout.web import fabric_view
from clusterscout.web.cells import (
    GRANULARITY_LABELS,
    Cell,
    SourceLink,
    bool_fact,
    fabric_label,
    fact,
    refs_for,
    yes_no,
)
from clusterscout.web.i18n import N_, Formatter

Record = Mapping[str, Any]

DIMENSIONS: Final = (
    ("network", N_("Network")),
    ("topology", N_("Topology")),
    ("orchestration", N_("Orchestration")),
    ("provisioning", N_("Provisioning")),
    ("billing", N_("Billing")),
    ("storage", N_("Storage")),
)


@dataclass(frozen=True, slots=True)
class Fact:
    """One labelled fact of a dimension."""

    label: str
    cell: Cell


@dataclass(frozen=True, slots=True)
class Dimension:
    """One checklist point with its facts and how many of them are known."""

    key: str
    title: str
    facts: tuple[Fact, ...]
    known: int
    summary: str
    sources: tuple[SourceLink, ...]
    status: str  # "known", "partial" or "unknown": a CSS hook, never shown as text


def _offer_refs(offers: Sequence[Record], *fields: str) -> list[Record]:
    return [ref for o in offers for ref in refs_for(o, *fields)]


def _join(values: Sequence[str]) -> str | None:
    return ", ".join(values) if values else None


def offer_labels(offers: Sequence[Record]) -> list[str]:
    """How the checklist names each offer: its GPU, with its id where two share a GPU."""
    gpus = [str(o["gpu"]) for o in offers]
    return [
        g if gpus.count(g) == 1 else f"{g} ({o['id']})" for g, o in zip(gpus, offers, strict=True)
    ]


def per_offer(labels: Sequence[str], values: Sequence[str]) -> str | None:
    """One value when every offer has it, else each value with the offers that have it
    (``3,200 Gbit/s: H100, H200 · unknown: B300``); None for no offer.

    A provider-level summary ("up to 3,200 Gbit/s") would read as a fact of every offer; this
    keeps each figure on the offers it belongs to.
    """
    if not values:
        return None
    groups: dict[str, list[str]] = {}
    for label, v in zip(labels, values, strict=True):
        groups.setdefault(v, []).append(label)
    if len(groups) == 1:
        return values[0]
    return " · ".join(f"{v}: {', '.join(names)}" for v, names in groups.items())


def _measured(fmt: Formatter, offers: Sequence[Record]) -> str | None:
    # Per offer with a published run: its GPU, the measured and the model's bus bandwidth.
    parts = [
        f"{o['gpu']}: {line}" for o in offers if (line := fabric_view.summary(fmt, o)) is not None
    ]
    return " · ".join(parts) or None


def _network(fmt: Formatter, offers: Sequence[Record]) -> list[Fact]:
    _ = fmt.gettext
    labels = offer_labels(offers)
    unknown = _("unknown")
    fabrics = [str(fabric_label(o["fabric"])) if o["fabric"] else unknown for o in offers]
    # The row says "per node"; the value is the figure and its unit only.
    gbps = [
        f"{fmt.number(o['per_node_gbps'])} Gbit/s" if o["per_node_gbps"] is not None else unknown
        for o in offers
    ]
    rdma = [yes_no(fmt, o["gpudirect_rdma"]) for o in offers]
    return [
        Fact(_("Fabric"), _offer_fact(fmt, offers, labels, fabrics, "fabric")),
        Fact(_("Bandwidth per node"), _offer_fact(fmt, offers, labels, gbps, "per_node_gbps")),
        Fact(
            _("Measured bus bandwidth"),
            fact(fmt, _measured(fmt, offers), _offer_refs(offers, "measured_fabric")),
        ),
        Fact(_("GPUDirect RDMA"), _offer_fact(fmt, offers, labels, rdma, "gpudirect_rdma")),
    ]


def _offer_fact(
    fmt: Formatter, offers: Sequence[Record], labels: list[str], values: list[str], field: str
) -> Cell:
    """One fact over a provider's offers (``per_offer``); unknown when no offer knows it."""
    if all(v == fmt.gettext("unknown") for v in values):
        return fact(fmt, None, [])
    return fact(fmt, per_offer(labels, values), _offer_refs(offers, field))


def _topology(fmt: Formatter, offers: Sequence[Record]) -> list[Fact]:
    _ = fmt.gettext
    refs = _offer_refs(offers, "topology")
    locality = next((o["topology"]["locality"] for o in offers if o["topology"]["locality"]), None)
    labels = offer_labels(offers)

    def per(key: str) -> Cell:
        values = [yes_no(fmt, o["topology"][key]) for o in offers]
        return _offer_fact(fmt, offers, labels, values, "topology")

    return [
        Fact(_("Non-blocking network"), per("non_blocking")),
        Fact(_("Rail-optimised"), per("rail_optimized")),
        Fact(_("Locality"), fact(fmt, locality, refs, lang=fmt.catalog.lang_of(locality))),
    ]


def _orchestration(fmt: Formatter, p: Record) -> list[Fact]:
    _ = fmt.gettext
    o, refs = p["orchestration"], refs_for(p, "orchestration")
    return [
        Fact(_("Managed Slurm"), bool_fact(fmt, o["managed_slurm"], refs)),
        Fact(_("Managed Kubernetes"), bool_fact(fmt, o["managed_kubernetes"], refs)),
        Fact(_("NCCL preconfigured"), bool_fact(fmt, o["nccl_preconfigured"], refs)),
        Fact(_("Raw VMs or bare metal"), bool_fact(fmt, o["raw_vms"], refs)),
    ]


def _provisioning(fmt: Formatter, p: Record) -> list[Fact]:
    _ = fmt.gettext
    v, refs = p["provisioning"], refs_for(p, "provisioning")
    return [
        Fact(_("On-demand clusters"), bool_fact(fmt, v["on_demand_clusters"], refs)),
        Fact(_("Reserved capacity"), bool_fact(fmt, v["reserved"], refs)),
        Fact(
            _("Reservation terms"),
            fact(fmt, _join([fmt.term(t) for t in v["reserved_terms"]]), refs),
        ),
        Fact(_("Waitlist"), bool_fact(fmt, v["waitlist"], refs)),
    ]


def _billing(fmt: Formatter, p: Record) -> list[Fact]:
    _ = fmt.gettext
    b, refs = p["billing"], refs_for(p, "billing")
    gran = b["granularity"]
    gran_text = _(GRANULARITY_LABELS.get(gran, gran)) if gran else None
    return [
        Fact(_("Billing granularity"), fact(fmt, gran_text, refs)),
        Fact(
            _("Minimum commitment"),
            fact(fmt, fmt.term(b["minimum"]) if b["minimum"] else None, refs),
        ),
    ]


def _storage(fmt: Formatter, p: Record) -> list[Fact]:
    _ = fmt.gettext
    s, refs = p["storage"], refs_for(p, "storage")
    tput = None
    if s["throughput_gbs"] is not None:
        tput = _("%(num)s GB/s") % {"num": fmt.number(s["throughput_gbs"])}
    price = None
    if s["usd_per_gib_month"] is not None:
        price = _("%(price)s per GiB-month") % {"price": fmt.usd(s["usd_per_gib_month"])}
    return [
        Fact(_("Shared file system"), bool_fact(fmt, s["shared_filesystem"], refs)),
        Fact(
            _("Storage products"),
            fact(fmt, _join(s["products"]), refs, lang=fmt.catalog.lang_of(*s["products"])),
        ),
        Fact(_("Throughput"), fact(fmt, tput, refs)),
        Fact(_("Storage price"), fact(fmt, price, refs)),
    ]


def scorecard(fmt: Formatter, provider: Record) -> list[Dimension]:
    """The six checklist dimensions for a provider record with ``offers``."""
    offers = provider.get("offers") or []
    builders = {
        "network": lambda: _network(fmt, offers),
        "topology": lambda: _topology(fmt, offers),
        "orchestration": lambda: _orchestration(fmt, provider),
        "provisioning": lambda: _provisioning(fmt, provider),
        "billing": lambda: _billing(fmt, provider),
        "storage": lambda: _storage(fmt, provider),
    }
    out = []
    for key, title in DIMENSIONS:
        facts = tuple(builders[key]())
        known = sum(1 for f in facts if not f.cell.unknown)
        status = "unknown" if known == 0 else ("known" if known == len(facts) else "partial")
        summary = fmt.ngettext(
            "%(known)s of %(total)s facts known", "%(known)s of %(total)s facts known", known
        ) % {"known": fmt.number(known), "total": fmt.number(len(facts))}
        links = {s.url: s for f in facts for s in f.cell.sources}
        out.append(
            Dimension(key, fmt.gettext(title), facts, known, summary, tuple(links.values()), status)
        )
    return out


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One fact across several providers."""

    label: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class CompareSection:
    """One checklist dimension across several providers."""

    key: str
    title: str
    rows: tuple[CompareRow, ...]
    summaries: tuple[str, ...]


def compare_sections(fmt: Formatter, providers: Sequence[Record]) -> list[CompareSection]:
    """The checklist transposed: one section per dimension, one column per provider."""
    cards = [scorecard(fmt, p) for p in providers]
    sections = []
    for i, (key, _title) in enumerate(DIMENSIONS):
        dims = [card[i] for card in cards]
        rows = tuple(
            CompareRow(dims[0].facts[j].label, tuple(d.facts[j].cell for d in dims))
            for j in range(len(dims[0].facts))
        )
        sections.append(CompareSection(key, dims[0].title, rows, tuple(d.summary for d in dims)))
    return sections


THIN_SHARE = 4
"""A multi-node "yes" with fewer than a quarter of the checklist facts known is flagged."""


def thin_claim(multi_node: str, known: int, total: int) -> bool:
    """True when a provider says "yes" to multi-node but the checklist knows too little to
    back it: such a "yes" should not read as a vetted answer.

    >>> thin_claim("yes", 0, 20), thin_claim("yes", 5, 20), thin_claim("no", 0, 20)
    (True, False, False)
    """
    return multi_node == "yes" and known * THIN_SHARE < total
