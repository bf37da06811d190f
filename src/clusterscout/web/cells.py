"""Fact cells: a formatted value plus its sources, so every page shows provenance alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from clusterscout.catalog.filters import ClusterMaxChoice, TopologyClaim
from clusterscout.domain.models import (
    BillingGranularity,
    FabricKind,
    OrchestrationKind,
    PriceTier,
    ProvisioningMode,
)
from clusterscout.model.inputs import JobKind, Stack
from clusterscout.web.i18n import N_, Formatter

FABRIC_LABELS: Final = {
    "infiniband": "InfiniBand",
    "roce": "RoCE",
    "efa": "EFA",
    "tcpxo": "GPUDirect-TCPXO",
    "tcpx": "GPUDirect-TCPX",
    "ethernet": "Ethernet",
}
TIER_LABELS: Final = {
    "on_demand": N_("on-demand"),
    "reserved": N_("reserved"),
    "spot": N_("spot"),
    "capacity_block": N_("capacity block"),
}
PROVISIONING_LABELS: Final = {
    "on_demand": N_("on-demand"),
    "reserved": N_("reserved"),
    "waitlist": N_("waitlist"),
}
ORCHESTRATION_LABELS: Final = {"slurm": "Slurm", "kubernetes": "Kubernetes"}
STACK_LABELS: Final = {
    "megatron": "Megatron-LM / NeMo",
    "pytorch": "PyTorch FSDP / torchtitan",
    "deepspeed": "DeepSpeed",
}
ACCESS_LABELS: Final = {
    "self_serve": N_("self-serve now"),
    "approval": N_("after approval"),
    "sales": N_("through sales"),
    "waitlist": N_("waitlist"),
}
"""How fast a buyer gets a cluster (the provisioning ``access`` fact), fastest first."""
RATING_LABELS: Final = {
    "platinum": N_("Platinum"),
    "gold": N_("Gold"),
    "silver": N_("Silver"),
    "bronze": N_("Bronze"),
    "participation_ribbon": N_("Participation ribbon (below bronze)"),
    "underperform": N_("Underperforming"),
    "unavailable": N_("Unavailable (could not be tested)"),
    "not_recommended": N_("Not recommended"),
    "not_rated": N_("not rated"),
}
"""Tiers of an independent rating; ``not_rated`` (absent from an edition) is not a tier."""
SOURCE_KIND_LABELS: Final = {
    "primary": N_("provider's page"),
    "secondary": N_("third party"),
    "catalog": N_("price catalog"),
}
"""Whose page a source is (``kind``): the provider's own, a third party's, a price catalog."""
JOB_LABELS: Final = {
    "pretrain": N_("pre-training"),
    "full_finetune": N_("full fine-tuning"),
    "lora": N_("LoRA fine-tuning (BF16 weights)"),
    "qlora": N_("QLoRA fine-tuning (4-bit weights)"),
    "inference": N_("inference (serving)"),
}
"""The job selector's labels (values are the API's ``job`` values)."""
MULTI_NODE_LABELS: Final = {"yes": N_("yes"), "no": N_("no"), "unknown": N_("unknown")}
GRANULARITY_LABELS: Final = {
    "per_second": N_("per second"),
    "per_minute": N_("per minute"),
    "per_hour": N_("per hour"),
    "per_day": N_("per day"),
    "per_week": N_("per week"),
    "per_month": N_("per month"),
    "upfront": N_("upfront"),
}
TOPOLOGY_LABELS: Final = {
    "non_blocking": N_("non-blocking"),
    "rail_optimized": N_("rail-optimised"),
    "locality": N_("placement stated (rack, pod or hall)"),
}
"""The ``topology`` filter's claims."""
VALUE_LABELS: Final[Mapping[type[StrEnum], Mapping[str, str]]] = {
    JobKind: JOB_LABELS,
    FabricKind: FABRIC_LABELS,
    Stack: STACK_LABELS,
    OrchestrationKind: ORCHESTRATION_LABELS,
    ProvisioningMode: PROVISIONING_LABELS,
    PriceTier: TIER_LABELS,
    ClusterMaxChoice: RATING_LABELS,
    BillingGranularity: GRANULARITY_LABELS,
    TopologyClaim: TOPOLOGY_LABELS,
}
"""Display names (or message ids) of the values of each enum a field of ``app.fields`` offers."""


@dataclass(frozen=True, slots=True)
class SourceLink:
    """A source URL with its check date, formatted for the page."""

    url: str
    checked_on: str
    title: str
    kind: str = "primary"
    """``primary``, ``secondary`` or ``catalog`` (the CSS class of the badge)."""
    kind_label: str = ""
    """Whose page it is, translated: shown as a badge and part of the link's name."""

    @property
    def flagged(self) -> bool:
        """True for a source that is not the provider's own page (shown more prominently)."""
        return self.kind != "primary"


@dataclass(frozen=True, slots=True)
class Cell:
    """One displayed fact: text (``unknown`` translated when null) and where it comes from."""

    text: str
    unknown: bool = False
    sources: tuple[SourceLink, ...] = ()
    badge: str | None = None
    detail: str | None = None
    sort_value: str = ""
    items: tuple[str, ...] = ()
    """Longer values behind a short ``text`` label, shown on demand (a ``details`` element)."""
    lang: str | None = None
    """Language of ``text``/``items`` when they are catalog prose, not interface strings."""

    @property
    def source(self) -> SourceLink | None:
        """The first (primary) source, if any."""
        return self.sources[0] if self.sources else None


def source_links(fmt: Formatter, refs: Iterable[Mapping[str, Any]]) -> tuple[SourceLink, ...]:
    """Deduplicated links from ``[{url, checked_on}]``, newest check first."""
    seen: dict[str, Mapping[str, Any]] = {}
    for ref in refs:
        url = str(ref.get("url", ""))
        if url and (url not in seen or ref["checked_on"] > seen[url]["checked_on"]):
            seen[url] = ref
    ordered = sorted(seen.values(), key=lambda r: str(r["checked_on"]), reverse=True)
    return tuple(source_link(fmt, r) for r in ordered)


def source_link(fmt: Formatter, ref: Mapping[str, Any]) -> SourceLink:
    """One ``{url, checked_on, kind}`` reference as a link with its translated kind."""
    # Records written before kinds existed carry none; nothing vouches for them being primary.
    kind = str(ref.get("kind") or "secondary")
    label = fmt.gettext(SOURCE_KIND_LABELS.get(kind, SOURCE_KIND_LABELS["secondary"]))
    day = fmt.day(str(ref["checked_on"]))
    title = fmt.gettext("Source (%(kind)s), checked on %(date)s") % {"kind": label, "date": day}
    return SourceLink(str(ref["url"]), day, title, kind, label)


def refs_for(record: Mapping[str, Any], *fields: str) -> list[Mapping[str, Any]]:
    """The source references of ``fields`` in a record's ``sources`` object."""
    sources = record.get("sources") or {}
    return [ref for name in fields for ref in sources.get(name, [])]


def unknown(fmt: Formatter) -> Cell:
    """The translated "unknown" cell."""
    return Cell(fmt.gettext("unknown"), unknown=True)


def yes_no(fmt: Formatter, value: bool | None) -> str:
    """``yes``/``no``/``unknown``, translated."""
    if value is None:
        return fmt.gettext("unknown")
    return fmt.gettext("yes") if value else fmt.gettext("no")


def fact(fmt: Formatter, text: str | None, refs: Sequence[Mapping[str, Any]], **extra: Any) -> Cell:
    """A cell for ``text`` with sources, or "unknown" (no sources shown for unknown)."""
    if text is None or text == "":
        return unknown(fmt)
    return Cell(text, sources=source_links(fmt, refs), **extra)


def bool_fact(fmt: Formatter, value: bool | None, refs: Sequence[Mapping[str, Any]]) -> Cell:
    """A yes/no fact cell."""
    return fact(fmt, None if value is None else yes_no(fmt, value), refs)


def country_names(fmt: Formatter, codes: Iterable[str]) -> list[str]:
    """Country names in the reader's language for ISO 3166-1 alpha-2 codes."""
    names = fmt.locale.territories
    return [str(names.get(c, c)) for c in codes]


def fabric_label(value: str | None) -> str | None:
    """Display name of a fabric kind."""
    return FABRIC_LABELS.get(value, value) if value else None


def latest_check(record: Mapping[str, Any]) -> str | None:
    """The newest ``checked_on`` over all sources of a record (ISO date)."""
    dates = [str(ref["checked_on"]) for refs in record.get("sources", {}).values() for ref in refs]
    return max(dates, default=None)


def any_true(values: Iterable[bool | None]) -> bool | None:
    """True if any is True, False if all known ones are False, None if nothing is known."""
    known = [v for v in values if v is not None]
    if not known:
        return None
    return any(known)
