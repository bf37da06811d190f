"""Matching feed items to cluster offers: provider + GPU + whole 8-GPU nodes."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection, select

from clusterscout.feeds.base import CLUSTER_GPUS_PER_NODE, FeedItem
from clusterscout.store.prices import Observation
from clusterscout.store.queries import gpu_index
from clusterscout.store.tables import offers


@dataclass(frozen=True, slots=True)
class OfferRef:
    """What matching needs to know about an offer."""

    id: str
    provider: str
    gpu: str
    gpus_per_node: int | None


@dataclass(frozen=True, slots=True)
class OfferIndex:
    """Offers by id and by (provider, canonical GPU), plus a GPU name resolver."""

    by_id: dict[str, OfferRef]
    resolve_gpu: Callable[[str], str | None]

    @classmethod
    def load(cls, conn: Connection) -> OfferIndex:
        """Index every offer in the store."""
        rows = conn.execute(
            select(offers.c.id, offers.c.provider, offers.c.gpu, offers.c.gpus_per_node)
        ).all()
        refs = {r.id: OfferRef(r.id, r.provider, r.gpu, r.gpus_per_node) for r in rows}
        return cls(refs, gpu_index(conn).canonical)

    @property
    def providers(self) -> set[str]:
        """Provider slugs that have offers."""
        return {o.provider for o in self.by_id.values()}

    def cluster_offers(self, provider: str, gpu: str) -> list[OfferRef]:
        """8-GPU-per-node offers of ``provider`` with ``gpu``, by id."""
        return sorted(
            (
                o
                for o in self.by_id.values()
                if o.provider == provider
                and o.gpu == gpu
                and o.gpus_per_node == CLUSTER_GPUS_PER_NODE
            ),
            key=lambda o: o.id,
        )

    def canonical_gpu(self, name: str, memory_gib: float | None) -> str | None:
        """Canonical GPU for a catalog's name, using memory to tell variants apart.

        ``A100`` with 40 GiB resolves through the alias ``A100-40GB`` before the bare name
        (which means the 80 GB part).
        """
        if memory_gib:
            for size in dict.fromkeys((round(memory_gib), int(memory_gib))):
                found = self.resolve_gpu(f"{name}-{size}GB")
                if found:
                    return found
        return self.resolve_gpu(name)


@dataclass(frozen=True, slots=True)
class Unmatched:
    """A feed item that updates no offer, and why."""

    item: FeedItem
    reason: str


@dataclass(slots=True)
class MatchResult:
    """Observations to append, items that matched nothing, and items that were not nodes."""

    observations: list[Observation] = field(default_factory=list)
    unmatched: list[Unmatched] = field(default_factory=list)
    not_cluster_nodes: int = 0


_TOKEN = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _instance_score(offer: OfferRef, instance_type: str) -> int:
    """How well an offer id names an instance type: 2 per exact token, 1 per prefix.

    ``aws-p5en-h200`` scores 2 for ``p5en.48xlarge`` while ``aws-p5e-h200`` scores 1.
    """
    words = _tokens(instance_type)
    score = 0
    for token in _tokens(offer.id.removeprefix(f"{offer.provider}-")):
        if token in words:
            score += 2
        elif any(w.startswith(token) for w in words):
            score += 1
    return score


def pick_offer(candidates: Sequence[OfferRef], instance_type: str | None) -> OfferRef | None:
    """The one candidate, or the one whose id best names the instance type; None if tied."""
    if len(candidates) == 1:
        return candidates[0]
    if not instance_type or not candidates:
        return None
    scored = sorted(
        ((_instance_score(o, instance_type), o.id, o) for o in candidates), reverse=True
    )
    best, runner_up = scored[0][0], scored[1][0]
    return scored[0][2] if best > runner_up else None


def _target(item: FeedItem, index: OfferIndex) -> tuple[OfferRef | None, str | None]:
    """(offer, None) when matched, (None, reason) when not, (None, None) when not a node."""
    if item.offer_id is not None:
        offer = index.by_id.get(item.offer_id)
        return (offer, None) if offer else (None, f"unknown offer id {item.offer_id!r}")
    if item.gpu_count != CLUSTER_GPUS_PER_NODE or not item.gpu_name:
        return None, None
    gpu = index.canonical_gpu(item.gpu_name, item.gpu_memory_gib)
    if gpu is None:
        return None, f"unknown GPU {item.gpu_name!r}"
    if item.provider not in index.providers:
        return None, f"provider {item.provider!r} is not in the catalog"
    candidates = index.cluster_offers(item.provider, gpu)
    if not candidates:
        return None, f"no 8-GPU-per-node {gpu} offer for {item.provider}"
    offer = pick_offer(candidates, item.instance_type)
    if offer is None:
        ids = ", ".join(o.id for o in candidates)
        return None, f"ambiguous: {item.instance_type} could be {ids}"
    return offer, None


def match_items(
    items: Iterable[FeedItem], index: OfferIndex, *, feed: str, observed_at: datetime
) -> MatchResult:
    """Observations for the items that match an offer; one per (offer, tier, term).

    Several items for the same offer and tier (regions, zones, instance types) give one
    observation at the lowest per-GPU price, the "from" price every listing shows; its note
    says which instance and region it came from and over how many rows.
    """
    result = MatchResult()
    groups: dict[tuple[str, str, str | None], list[FeedItem]] = defaultdict(list)
    for item in items:
        offer, reason = _target(item, index)
        if offer is not None:
            groups[(offer.id, item.tier, item.term)].append(item)
        elif reason is not None:
            result.unmatched.append(Unmatched(item, reason))
        else:
            result.not_cluster_nodes += 1
    for (offer_id, tier, term), group in sorted(groups.items(), key=lambda kv: str(kv[0])):
        best = min(group, key=lambda i: (i.usd_per_gpu_hour, i.region or "", i.line or 0))
        result.observations.append(
            Observation(
                offer_id=offer_id,
                tier=tier,
                usd_per_gpu_hour=best.usd_per_gpu_hour,
                as_of=best.as_of,
                observed_at=observed_at,
                feed=feed,
                source_url=best.source_url,
                term=term,
                source_checked_on=best.source_checked_on or best.as_of,
                source_kind=best.source_kind,
                note=_note(best, len(group)),
            )
        )
    return result


def _note(best: FeedItem, n: int) -> str | None:
    if best.instance_type is None:
        return best.note
    text = f"{best.instance_type}"
    if best.region:
        text += f" in {best.region}"
    if best.usd_per_instance_hour is not None:
        text += f" at ${best.usd_per_instance_hour:g} per instance-hour / {best.gpu_count} GPUs"
    if n > 1:
        text += f"; lowest of {n} listings"
    return text
