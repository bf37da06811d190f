"""A launch request (offer, nodes, optional plan layout) and what a generator returns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from clusterscout.domain.messages import N_
from clusterscout.domain.models import Offer
from clusterscout.model.planner.results import Layout


class LaunchFormat(StrEnum):
    """The launch file formats ``clusterscout launch --format`` writes."""

    SKYPILOT = "skypilot"
    DSTACK = "dstack"
    SLURM = "slurm"


@dataclass(frozen=True, slots=True)
class Why:
    """Why a tool cannot target an offer, in parts a page can show in its own language.

    ``message`` is an English sentence with ``{named}`` fields and a message id (marked with
    ``N_``); ``note`` is the curator's note from ``data/launch.toml`` (a catalog text with
    its own translations). ``str()`` gives the English reason the CLI and API print.
    """

    message: str
    fields: tuple[tuple[str, str], ...] = ()
    note: str | None = None

    def __str__(self) -> str:
        text = self.message.format(**dict(self.fields))
        return f"{text}: {self.note}" if self.note else text


class UnsupportedError(Exception):
    """The tool cannot target this offer; ``reason`` says why in one sentence."""

    def __init__(self, why: Why) -> None:
        super().__init__(str(why))
        self.why = why
        self.reason = str(why)


@dataclass(frozen=True, slots=True)
class TrainingLayout:
    """The parallel layout of a plan option, passed to the training command.

    Attributes:
        tp: tensor-parallel size.
        pp: pipeline-parallel size.
        dp: data-parallel size.
        sharding: ``none``, ``zero1``, ``zero2`` or ``fsdp``.
        micro_batch: sequences per micro-batch.
        global_batch: sequences per optimizer step.
    """

    tp: int
    pp: int
    dp: int
    sharding: str
    micro_batch: int
    global_batch: int

    @classmethod
    def of(cls, layout: Layout) -> TrainingLayout:
        """The layout of a plan option (``PlanOption.layout``)."""
        return cls(
            tp=layout.tp,
            pp=layout.pp,
            dp=layout.dp,
            sharding=layout.sharding.value,
            micro_batch=layout.micro_batch,
            global_batch=layout.global_batch,
        )


@dataclass(frozen=True, slots=True)
class LaunchRequest:
    """One cluster to launch: the offer, how many nodes, and the plan layout when known."""

    offer: Offer
    nodes: int
    layout: TrainingLayout | None = None

    def __post_init__(self) -> None:
        if self.nodes < 1:
            msg = f"nodes must be at least 1 (got {self.nodes})"
            raise ValueError(msg)

    @property
    def gpus_per_node(self) -> int:
        """GPUs per node from the catalog.

        Raises:
            UnsupportedError: when the catalog does not know it (we never guess a count).
        """
        if self.offer.gpus_per_node is None:
            msg = N_(
                "the catalog does not state how many GPUs a {offer} node has, "
                "so no launch file can request them"
            )
            raise UnsupportedError(Why(msg, (("offer", self.offer.id),)))
        return self.offer.gpus_per_node

    @property
    def name(self) -> str:
        """A job/cluster name tools accept: lowercase letters, digits and dashes."""
        base = re.sub(r"[^a-z0-9-]+", "-", self.offer.id.lower()).strip("-")
        return f"{base}-{self.nodes}n"[:50].rstrip("-")


@dataclass(frozen=True, slots=True)
class LaunchFile:
    """One generated file: its suggested name, its text and its media type."""

    filename: str
    content: str
    media_type: str = "text/plain"


@dataclass(frozen=True, slots=True)
class FormatResult:
    """One format's files for a request, or why the tool cannot target the offer."""

    format: str
    files: tuple[LaunchFile, ...] = ()
    reason: str | None = None
    why: Why | None = None
    """``reason`` in parts, for pages that translate it."""


@dataclass(frozen=True, slots=True)
class LaunchAnswer:
    """Launch files in every requested format and the fabric check script for one cluster."""

    request: LaunchRequest
    formats: tuple[FormatResult, ...]
    check: FormatResult
