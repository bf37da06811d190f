"""All-in job cost: compute plus shared storage for the run's footprint and egress of the result.

The footprint is the latest checkpoint (weights and optimizer state) and the tokenized dataset,
kept on the provider's shared storage for the whole run; the egress is the trained weights
moved out once. A price the catalog does not know leaves the total unknown and is named,
never counted as zero. ADR 0027.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from clusterscout.domain.units import GIB

HOURS_PER_MONTH: Final = 730.0
"""Hours of a billing month (365 * 24 / 12), as storage prices per month are prorated."""
SMALL_VOCAB: Final = 65536
"""Vocabularies up to this size store a token id in 2 bytes; larger ones take 4."""
STORAGE_PRICE: Final = "storage price"
EGRESS_PRICE: Final = "egress price"


def token_bytes(vocab: int) -> int:
    """Bytes per token id in a tokenized dataset: 2 when ids fit 16 bits, else 4.

    >>> token_bytes(32000), token_bytes(128256)
    (2, 4)
    """
    return 2 if vocab <= SMALL_VOCAB else 4


@dataclass(frozen=True, slots=True)
class Footprint:
    """What a run keeps on shared storage and moves out, in GiB."""

    checkpoint_gib: float
    dataset_gib: float
    egress_gib: float

    @property
    def storage_gib(self) -> float:
        """Checkpoint plus dataset."""
        return self.checkpoint_gib + self.dataset_gib


def footprint(weights_gib: float, optimizer_gib: float, tokens: float, vocab: int) -> Footprint:
    """The footprint of a training job: one checkpoint, the tokenized dataset, the weights out."""
    return Footprint(weights_gib + optimizer_gib, tokens * token_bytes(vocab) / GIB, weights_gib)


@dataclass(frozen=True, slots=True)
class AllInCost:
    """Compute, storage and egress of one option; ``total_usd`` is None when a price is unknown
    (``unknown`` names which)."""

    compute_usd: float
    storage_usd: float | None
    egress_usd: float | None
    total_usd: float | None
    unknown: tuple[str, ...]


def all_in_cost(
    compute_usd: float,
    hours: float,
    fp: Footprint,
    usd_per_gib_month: float | None,
    egress_usd_per_gib: float | None,
) -> AllInCost:
    """Compute plus the footprint stored for ``hours`` and the weights moved out.

    >>> fp = Footprint(1000.0, 460.0, 140.0)
    >>> a = all_in_cost(1e6, 730.0, fp, 0.07, 0.0)
    >>> round(a.storage_usd, 2), a.egress_usd, round(a.total_usd, 2)
    (102.2, 0.0, 1000102.2)
    >>> all_in_cost(1e6, 730.0, fp, None, 0.12).unknown
    ('storage price',)
    """
    storage = (
        None
        if usd_per_gib_month is None
        else fp.storage_gib * usd_per_gib_month * (hours / HOURS_PER_MONTH)
    )
    egress = None if egress_usd_per_gib is None else fp.egress_gib * egress_usd_per_gib
    unknown = tuple(
        name for name, v in ((STORAGE_PRICE, storage), (EGRESS_PRICE, egress)) if v is None
    )
    total = None if storage is None or egress is None else compute_usd + storage + egress
    return AllInCost(compute_usd, storage, egress, total, unknown)
