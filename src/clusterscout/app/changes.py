"""What changed: the curated log (providers and offers added, facts corrected) and price changes.

The log is ``data/changes.toml`` (read once per content version of the data folder); price
changes come from the price history in the database. Both are filtered the same way, by
provider and by GPU, so a buyer can watch one of either (ADR 0016).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from sqlalchemy import Connection

from clusterscout.catalog.changes import ChangedField, ChangeKind, LoggedChange, load_changes
from clusterscout.domain.errors import InputError
from clusterscout.store import queries
from clusterscout.store.build import data_version
from clusterscout.store.price_changes import offer_gpus, price_changes, provider_names

MAX_ENTRIES: Final = 200
"""The page and the feeds show the newest entries only; the downloads carry every price."""


@dataclass(frozen=True, slots=True)
class PriceChange:
    """One offer's price for a tier and term moved from ``old`` to ``new`` (USD per GPU-hour)."""

    tier: str
    term: str | None
    old_usd_per_gpu_hour: float
    new_usd_per_gpu_hour: float
    source_url: str


@dataclass(frozen=True, slots=True)
class Change:
    """One dated entry of the changes page and feeds.

    ``kind`` is ``added`` or ``corrected`` (from the log) or ``price`` (from the history).
    ``offers`` are ``(offer id, GPU)`` pairs; for a price change, the one offer.
    """

    on: str
    kind: str
    provider: str
    provider_name: str
    offers: tuple[tuple[str, str], ...] = ()
    fields: tuple[ChangedField, ...] = ()
    price: PriceChange | None = None
    key: str = field(default="")


@dataclass(frozen=True, slots=True)
class ChangeFilter:
    """Whose changes to show: one provider, one GPU (canonical name), or all."""

    provider: str | None = None
    gpu: str | None = None

    def pairs(self) -> list[tuple[str, str]]:
        """The filter as sorted query parameters (for canonical links)."""
        return sorted((k, v) for k, v in (("gpu", self.gpu), ("provider", self.provider)) if v)


def parse_filter(conn: Connection, provider: str | None, gpu: str | None) -> ChangeFilter:
    """The filter from raw query values: a known provider slug, a GPU name or alias.

    Raises:
        InputError: naming ``provider`` or ``gpu`` when it is not in the catalog.
    """
    slug = (provider or "").strip().lower() or None
    if slug is not None and slug not in provider_names(conn):
        raise InputError("provider", f"unknown provider {slug!r}")
    name = (gpu or "").strip() or None
    canonical = None
    if name is not None:
        canonical = queries.gpu_index(conn).canonical(name)
        if canonical is None or canonical not in set(queries.gpu_names(conn)):
            raise InputError("gpu", f"no offer has the GPU {name!r}")
    return ChangeFilter(slug, canonical)


def changes(
    conn: Connection, data_dir: Path, f: ChangeFilter, limit: int = MAX_ENTRIES
) -> list[Change]:
    """The newest ``limit`` changes matching ``f``, newest first."""
    names = provider_names(conn)
    gpus = offer_gpus(conn)
    out: list[Change] = []
    for entry in _log(data_dir):
        found = _from_log(entry, names, gpus, f)
        if found is not None:
            out.append(found)
    out.extend(
        Change(
            on=c["on"],
            kind="price",
            provider=c["provider"],
            provider_name=c["provider_name"],
            offers=((c["offer_id"], c["gpu"]),),
            price=PriceChange(
                c["tier"],
                c["term"],
                c["old_usd_per_gpu_hour"],
                c["new_usd_per_gpu_hour"],
                c["source_url"],
            ),
            key=f"price/{c['offer_id']}/{c['tier']}/{c['term'] or ''}/{c['on']}",
        )
        for c in price_changes(conn, f.provider, f.gpu)
    )
    # Newest first; on one day, price changes before corrections before additions.
    order = {"price": 0, "corrected": 1, "added": 2}
    out.sort(key=lambda c: (c.on, -order[c.kind], c.key), reverse=True)
    return out[:limit]


def _from_log(
    entry: LoggedChange,
    names: dict[str, str],
    gpus: dict[str, tuple[str, str]],
    f: ChangeFilter,
) -> Change | None:
    # A log read from another data folder than the database's may name what is not stored.
    if entry.provider not in names or (f.provider and entry.provider != f.provider):
        return None
    offers = tuple((o, gpus[o][1]) for o in entry.offers if o in gpus)
    if f.gpu is not None:
        offers = tuple(o for o in offers if o[1] == f.gpu)
        if not offers:
            return None
    return Change(
        on=entry.on.isoformat(),
        kind=str(entry.kind),
        provider=entry.provider,
        provider_name=names[entry.provider],
        offers=offers,
        fields=entry.fields,
        # Built from the entry itself, so it stays the same when entries are added around it.
        key=f"{entry.kind}/{entry.provider}/{entry.on.isoformat()}/{'+'.join(entry.offers)}",
    )


def _log(data_dir: Path) -> tuple[LoggedChange, ...]:
    return _read_log(data_dir.resolve(), data_version(data_dir))


@functools.lru_cache(maxsize=4)
def _read_log(data_dir: Path, version: str) -> tuple[LoggedChange, ...]:
    del version  # only part of the cache key
    # validate and build-db report the log's problems; here a broken log shows no entries.
    return load_changes(data_dir, [])


__all__ = ["Change", "ChangeFilter", "ChangeKind", "PriceChange", "changes", "parse_filter"]
