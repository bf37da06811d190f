"""What ``data/launch.toml`` says, as frozen values: fabric environments and tool targets."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, TypeVar

from clusterscout.domain.models import FabricKind, Offer, Source

CONTROL_CHARACTERS: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""Characters no catalog text may hold: a newline or a carriage return in a note would start
a new line of a generated shell script or leave a YAML block; the others are invisible."""
ENV_REFERENCE: Final = re.compile(r"\$\{[A-Z_][A-Z0-9_]*(:-)?\}")
"""The one expansion an env value may hold: ``${NAME}`` or ``${NAME:-}`` (a path prepended to
LD_LIBRARY_PATH); generators keep it and single-quote everything else."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Where an entry applies: a fabric kind, optionally one provider and some of its offers."""

    fabric: FabricKind
    provider: str | None = None
    offers: tuple[str, ...] = ()

    def matches(self, offer: Offer) -> bool:
        """True when ``offer`` is on this fabric (and provider, and offer list when given)."""
        if offer.fabric is not self.fabric:
            return False
        if self.provider is not None and offer.provider != self.provider:
            return False
        return not self.offers or offer.id in self.offers

    @property
    def specificity(self) -> int:
        """0 fabric-wide, 1 provider-wide, 2 offer-specific: the more specific entry wins."""
        return 2 if self.offers else (1 if self.provider else 0)


@dataclass(frozen=True, slots=True)
class EnvVar:
    """One environment variable; ``value`` None means "deliberately not set" (see comment)."""

    scope: Scope
    name: str
    value: str | None
    comment: str
    source: Source


@dataclass(frozen=True, slots=True)
class Command:
    """A shell command: a setup step before the variables, or a fabric preflight check."""

    scope: Scope
    command: str
    comment: str
    source: Source


@dataclass(frozen=True, slots=True)
class SkyPilotTarget:
    """How SkyPilot reaches a provider; ``cloud`` None means it cannot."""

    provider: str
    note: str | None
    sources: tuple[Source, ...]
    cloud: str | None = None
    multi_node: bool = False
    network_tier_best: bool = False
    network_tier_gpus: tuple[str, ...] = ()

    def best_tier_for(self, gpu: str, gpus_per_node: int) -> bool:
        """Whether ``network_tier: best`` applies to this GPU (Nebius: 8-GPU nodes only)."""
        if not self.network_tier_best:
            return False
        if not self.network_tier_gpus:
            return True
        return gpu in self.network_tier_gpus and gpus_per_node == 8


@dataclass(frozen=True, slots=True)
class SkyPilotAccelerator:
    """SkyPilot's name for one of our GPUs and the clouds whose catalog lists it."""

    gpu: str
    name: str
    clouds: tuple[str, ...]
    sources: tuple[Source, ...]
    offers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DstackTarget:
    """How dstack reaches a provider; ``backend`` None means it has no backend for it."""

    provider: str
    note: str | None
    sources: tuple[Source, ...]
    backend: str | None = None
    multi_node: bool = False


@dataclass(frozen=True, slots=True)
class DstackGpu:
    """dstack's GPU spec (``name[:memory]``) for one of our GPUs."""

    gpu: str
    name: str
    sources: tuple[Source, ...]


_Scoped = TypeVar("_Scoped", EnvVar, Command)


def _most_specific(items: tuple[_Scoped, ...], offer: Offer) -> list[_Scoped]:
    return sorted((i for i in items if i.scope.matches(offer)), key=lambda i: -i.scope.specificity)


@dataclass(frozen=True, slots=True)
class LaunchKnowledge:
    """Everything the launch generators read from data, for every offer."""

    env: tuple[EnvVar, ...] = ()
    setup: tuple[Command, ...] = ()
    preflight: tuple[Command, ...] = ()
    skypilot: tuple[SkyPilotTarget, ...] = ()
    skypilot_accelerators: tuple[SkyPilotAccelerator, ...] = ()
    dstack: tuple[DstackTarget, ...] = ()
    dstack_gpus: tuple[DstackGpu, ...] = ()

    def env_for(self, offer: Offer) -> tuple[EnvVar, ...]:
        """The variables for ``offer``: one per name, the most specific entry winning.

        Order follows the data file (fabric-wide first), so a reader sees the general
        settings before the provider's.
        """
        chosen: dict[str, EnvVar] = {}
        for var in _most_specific(self.env, offer):
            chosen.setdefault(var.name, var)
        return tuple(v for v in self.env if chosen.get(v.name) is v)

    def setup_for(self, offer: Offer) -> tuple[Command, ...]:
        """Setup commands for ``offer`` in file order."""
        return tuple(c for c in self.setup if c.scope.matches(offer))

    def preflight_for(self, offer: Offer) -> tuple[Command, ...]:
        """Preflight checks for ``offer`` in file order."""
        return tuple(c for c in self.preflight if c.scope.matches(offer))

    def skypilot_target(self, provider: str) -> SkyPilotTarget | None:
        """SkyPilot's entry for ``provider`` (None when the data has none)."""
        return next((t for t in self.skypilot if t.provider == provider), None)

    def skypilot_accelerator(self, offer: Offer) -> SkyPilotAccelerator | None:
        """SkyPilot's accelerator for the offer: an offer-specific name first, else the GPU's."""
        for acc in self.skypilot_accelerators:
            if offer.id in acc.offers:
                return acc
        return next(
            (a for a in self.skypilot_accelerators if a.gpu == offer.gpu and not a.offers), None
        )

    def dstack_target(self, provider: str) -> DstackTarget | None:
        """dstack's entry for ``provider`` (None when the data has none)."""
        return next((t for t in self.dstack if t.provider == provider), None)

    def dstack_gpu(self, gpu: str) -> DstackGpu | None:
        """dstack's GPU spec for ``gpu`` (None when the data has none)."""
        return next((g for g in self.dstack_gpus if g.gpu == gpu), None)
