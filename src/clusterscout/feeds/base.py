"""The one small interface every price feed implements, and the item it yields."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Protocol

# Price tiers of docs/design.md §3; a feed row with any other tier is rejected.
TIERS = ("on_demand", "reserved", "spot", "capacity_block")

# Only whole 8-GPU nodes are cluster building blocks: smaller instance types of the same GPU
# are not what a cluster offer sells, so their prices must not update it.
CLUSTER_GPUS_PER_NODE = 8


class FeedError(Exception):
    """A feed's input cannot be used (bad file, unknown layout, network error).

    Nothing from the feed is applied; the runner records the message as the feed's failure.
    """


class FeedHeldError(FeedError):
    """A feed's input looks wrong though it parses (a price jump, a cut-off last line).

    Held like a failure (nothing applied) until the user says it is right with a flag.
    """


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One price seen in an outside catalog, before it is matched to an offer.

    Adapters fill ``provider``/``gpu_*``/``instance_type`` from catalogs of instance types, or
    ``offer_id`` when the input names our offer directly (the ``file`` feed).
    """

    tier: str
    usd_per_gpu_hour: float
    source_url: str
    as_of: date
    provider: str | None = None
    instance_type: str | None = None
    gpu_name: str | None = None
    gpu_memory_gib: float | None = None
    gpu_count: int = 0
    region: str | None = None
    usd_per_instance_hour: float | None = None
    offer_id: str | None = None
    term: str | None = None
    note: str | None = None
    source_checked_on: date | None = None
    line: int | None = None
    # gpuhunt and SkyPilot are machine-readable price catalogs; the file feed says per row.
    source_kind: str = "catalog"

    def label(self) -> str:
        """Short description, e.g. ``oci BM.GPU3.8 (8x V100, on_demand) in af-casablanca-1``."""
        if self.offer_id is not None and self.instance_type is None:
            text = f"offer {self.offer_id} {self.tier}"
        else:
            gpus = f"{self.gpu_count}x {self.gpu_name}" if self.gpu_name else "no GPU"
            text = f"{self.provider or '?'} {self.instance_type or '?'} ({gpus}, {self.tier})"
            if self.region:
                text += f" in {self.region}"
        if self.line is not None:
            text += f" (line {self.line})"
        return text


@dataclass(frozen=True, slots=True)
class FeedBatch:
    """Everything one feed read: its items, how many input rows, and where from."""

    items: tuple[FeedItem, ...]
    rows_read: int
    source: str


class Feed(Protocol):
    """A named source of prices.

    ``fetch`` reads the whole input and validates it before returning: it raises
    :class:`FeedError` for any problem (so a half-read input is never applied) and must not hang
    (network adapters use short timeouts).
    """

    @property
    def name(self) -> str:
        """Registry name, e.g. ``skypilot-csv``; also the ``feed`` of its observations."""
        ...

    @property
    def needs_input(self) -> bool:
        """True when the feed reads only from ``--input`` (``--source all`` skips it then)."""
        ...

    @property
    def summary(self) -> str:
        """One line for ``--help`` and reports."""
        ...

    def fetch(self, source: Path | None, *, today: date) -> FeedBatch:
        """Read and validate the feed's input; ``today`` is the ``as_of`` of undated prices."""
        ...


def positive_price(value: str | float | None, what: str, where: str) -> float | None:
    """Parse a price that must be a finite number > 0; empty means absent (None).

    Raises:
        FeedError: for text that is not a number, or a zero, negative or non-finite price.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        msg = f"{where}: {what} {value!r} is not a number"
        raise FeedError(msg) from None
    if not math.isfinite(number) or number <= 0:
        msg = f"{where}: {what} {value!r} must be a positive number"
        raise FeedError(msg)
    return number


def per_gpu(usd_per_instance_hour: float, gpu_count: int) -> float:
    """USD per GPU-hour from a whole-instance hourly price, rounded to 1e-6 USD."""
    return round(usd_per_instance_hour / gpu_count, 6)
