"""Read and check ``data/changes.toml``: our dated log of what was added and corrected.

Price changes are not logged here: they come from the price history in the store. The log
holds what the history cannot know (when a provider or offer entered the catalog, which
published fact was corrected). Entries name providers and offers by slug and id; a name
that is not in the catalog is an error, so the log cannot point at a page that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import Field, model_validator

from clusterscout.catalog.problems import Problem
from clusterscout.catalog.reading import _read_toml, _rel, _validate
from clusterscout.catalog.schema import Lax, Slug, _Strict
from clusterscout.domain.models import CatalogData

CHANGES_FILE = "changes.toml"


class ChangeKind(StrEnum):
    """What a log entry records."""

    ADDED = "added"
    CORRECTED = "corrected"


class ChangedField(StrEnum):
    """Facts a correction can name (offer fields and the offer's price list)."""

    GPU = "gpu"
    GPUS_PER_NODE = "gpus_per_node"
    FABRIC = "fabric"
    PER_NODE_GBPS = "per_node_gbps"
    GPUDIRECT_RDMA = "gpudirect_rdma"
    MIN_NODES = "min_nodes"
    MAX_NODES = "max_nodes"
    PRICES = "prices"
    ORCHESTRATION = "orchestration"
    PROVISIONING = "provisioning"
    STORAGE = "storage"
    MULTI_NODE = "multi_node"


@dataclass(frozen=True, slots=True)
class LoggedChange:
    """One dated entry of the log."""

    on: date
    kind: ChangeKind
    provider: str
    offers: tuple[str, ...] = ()
    fields: tuple[ChangedField, ...] = ()


class _ChangeIn(_Strict):
    on: date
    kind: Lax[ChangeKind]
    provider: Slug
    offers: list[Slug] = Field(default_factory=list)
    fields: Annotated[list[Lax[ChangedField]], Field(default_factory=list)]

    @model_validator(mode="after")
    def _fields_only_on_corrections(self) -> _ChangeIn:
        if self.kind is ChangeKind.CORRECTED and not self.fields:
            msg = "a correction names the fields it corrected"
            raise ValueError(msg)
        if self.kind is ChangeKind.ADDED and self.fields:
            msg = "fields belong to corrections only"
            raise ValueError(msg)
        return self


class _ChangesFileIn(_Strict):
    changes: list[_ChangeIn] = Field(default_factory=list)


def load_changes(
    data_dir: Path,
    problems: list[Problem],
    catalog: CatalogData | None = None,
    today: date | None = None,
) -> tuple[LoggedChange, ...]:
    """The log in ``data_dir/changes.toml`` (optional: absent means an empty log).

    Problems go to ``problems``; with ``catalog`` every provider and offer named must exist,
    and with ``today`` no entry may be dated in the future.
    """
    path = data_dir / CHANGES_FILE
    if not path.exists():
        return ()
    label = _rel(path, data_dir)
    raw = _read_toml(path, label, problems)
    parsed = _validate(_ChangesFileIn, raw, label, problems) if raw is not None else None
    if parsed is None:
        return ()
    entries = tuple(
        LoggedChange(c.on, c.kind, c.provider, tuple(c.offers), tuple(c.fields))
        for c in parsed.changes
    )
    if catalog is not None:
        problems.extend(check_changes(entries, catalog, label))
    if today is not None:
        problems.extend(
            Problem(label, f"changes[{i}].on", f"{c.on.isoformat()} is in the future")
            for i, c in enumerate(entries)
            if c.on > today
        )
    return entries


def check_changes(
    entries: tuple[LoggedChange, ...], catalog: CatalogData, label: str
) -> list[Problem]:
    """Every provider and offer an entry names is in the catalog, and offers are the provider's."""
    problems: list[Problem] = []
    providers = {p.slug for p in catalog.providers}
    owner = {o.id: o.provider for o in catalog.offers}
    for i, c in enumerate(entries):
        if c.provider not in providers:
            problems.append(
                Problem(label, f"changes[{i}].provider", f"unknown provider {c.provider!r}")
            )
        for offer in c.offers:
            if offer not in owner:
                problems.append(Problem(label, f"changes[{i}].offers", f"unknown offer {offer!r}"))
            elif owner[offer] != c.provider:
                problems.append(
                    Problem(
                        label,
                        f"changes[{i}].offers",
                        f"offer {offer!r} belongs to {owner[offer]!r}, not {c.provider!r}",
                    )
                )
    return problems
