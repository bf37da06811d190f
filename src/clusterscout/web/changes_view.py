"""What changed, in the reader's language: one dated line per change, for the page and the feeds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from clusterscout.app.changes import Change
from clusterscout.catalog.changes import ChangedField
from clusterscout.domain.messages import N_
from clusterscout.web.cells import TIER_LABELS
from clusterscout.web.i18n import Formatter

FIELD_LABELS: Final = {
    ChangedField.GPU: N_("GPU model"),
    ChangedField.GPUS_PER_NODE: N_("GPUs per node"),
    ChangedField.FABRIC: N_("Fabric"),
    ChangedField.PER_NODE_GBPS: N_("Bandwidth per node"),
    ChangedField.GPUDIRECT_RDMA: N_("GPUDirect RDMA"),
    ChangedField.MIN_NODES: N_("Smallest cluster"),
    ChangedField.MAX_NODES: N_("Largest cluster"),
    ChangedField.PRICES: N_("Prices"),
    ChangedField.ORCHESTRATION: N_("Orchestration"),
    ChangedField.PROVISIONING: N_("Provisioning"),
    ChangedField.STORAGE: N_("Storage"),
    ChangedField.MULTI_NODE: N_("Multi-node"),
}


@dataclass(frozen=True, slots=True)
class ChangeLine:
    """One change as shown: date, kind, a title sentence, details and the provider page."""

    on: str
    day: str
    kind: str
    title: str
    details: tuple[str, ...]
    href: str
    source_url: str | None
    key: str


def _title(fmt: Formatter, c: Change) -> str:
    name = c.provider_name
    if c.kind == "added":
        if not c.offers:
            return fmt.gettext("%(provider)s joined the catalog") % {"provider": name}
        return fmt.ngettext(
            "%(provider)s: %(num)s offer added", "%(provider)s: %(num)s offers added", len(c.offers)
        ) % {"provider": name, "num": fmt.number(len(c.offers))}
    if c.kind == "corrected":
        labels = fmt.join([fmt.gettext(FIELD_LABELS[f]) for f in c.fields])
        return fmt.gettext("%(provider)s: corrected %(fields)s") % {
            "provider": name,
            "fields": labels,
        }
    p = c.price
    assert p is not None  # noqa: S101 - a price change always carries its price
    tier = fmt.gettext(TIER_LABELS.get(p.tier, p.tier))
    if p.term:
        tier = f"{tier}, {fmt.term(p.term)}"
    return fmt.gettext("%(provider)s, %(gpu)s (%(tier)s): %(old)s → %(new)s per GPU-hour") % {
        "provider": name,
        "gpu": c.offers[0][1],
        "tier": tier,
        "old": fmt.usd(p.old_usd_per_gpu_hour),
        "new": fmt.usd(p.new_usd_per_gpu_hour),
    }


def lines(fmt: Formatter, found: Sequence[Change]) -> list[ChangeLine]:
    """Changes (newest first) as lines in ``fmt``'s language."""
    out = []
    for c in found:
        out.append(
            ChangeLine(
                on=c.on,
                day=fmt.day(c.on),
                kind=c.kind,
                title=_title(fmt, c),
                # GPU names only: offer ids are words of no language (the crawl would judge them).
                details=tuple(dict.fromkeys(gpu for _, gpu in c.offers)),
                href=f"/{fmt.lang}/providers/{c.provider}/",
                source_url=c.price.source_url if c.price else None,
                key=c.key,
            )
        )
    return out
