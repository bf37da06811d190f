"""The provider directory: every provider with its summary, filtered and sorted (page, API, CLI).

Filters are the offer filters of the fields table plus a three-valued ``multi_node``: a provider
passes the offer filters when one of its offers does (so ``fabric=infiniband`` keeps providers
with an InfiniBand offer); with no offer filter set, providers without offers are listed too.
``multi_node`` and ``clustermax`` are read on the provider itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection

from clusterscout.app.inputs import parse_offer_filter
from clusterscout.catalog.directory import DirectorySort, parse_directory_sort, sort_rows, summary
from clusterscout.catalog.filters import OfferFilter, SortKey
from clusterscout.domain.errors import InputError
from clusterscout.domain.models import MultiNode
from clusterscout.store import queries


@dataclass(frozen=True, slots=True)
class Directory:
    """One directory answer: the rows (provider records with summary keys) and what was asked."""

    rows: list[dict[str, Any]]
    multi_node: tuple[MultiNode, ...]
    filter: OfferFilter
    sort: DirectorySort
    total: int
    """Providers in the catalog, before filters (for "n of m")."""

    def params(self) -> list[tuple[str, str]]:
        """Canonical query parameters of this answer (for links and redirects)."""
        out = [("multi_node", m.value) for m in sorted(self.multi_node, key=lambda m: m.value)]
        out += self.filter.to_params()
        if self.sort is not DirectorySort.NAME:
            out.append(("sort", self.sort.value))
        return sorted(out)


def parse_multi_node(values: Sequence[str]) -> tuple[MultiNode, ...]:
    """``yes``, ``no`` or ``unknown`` (repeated or comma-separated: alternatives); true/false
    read as yes/no."""
    aliases = {"true": "yes", "false": "no"}
    out: list[MultiNode] = []
    for raw in (v for value in values for v in value.split(",")):
        if not raw.strip():
            continue
        try:
            value = MultiNode.parse(aliases.get(raw.strip().lower(), raw))
        except ValueError as exc:
            raise InputError("multi_node", str(exc)) from None
        if value not in out:
            out.append(value)
    return tuple(out)


def directory(conn: Connection, params: Mapping[str, Sequence[str]]) -> Directory:
    """Every provider matching ``params`` (raw query or CLI values), with its summary.

    Raises:
        InputError: naming the parameter that is unknown or malformed.
    """
    params = {k: list(v) for k, v in params.items()}
    sort_values = params.pop("sort", [])
    sort = parse_directory_sort(sort_values[-1] if sort_values else None)
    multi = parse_multi_node(params.pop("multi_node", []))
    known = queries.provider_slugs(conn)
    f = parse_offer_filter(
        params, queries.gpu_index(conn).canonical, known.__contains__, queries.region_index(conn)
    )
    every = queries.list_offers(conn, OfferFilter(), SortKey.PRICE).records
    by_provider: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for offer in every:
        by_provider[offer["provider"]].append(offer)
    on_offers = replace(f, clustermax=())
    passing: set[str] | None = None
    if not on_offers.is_empty():
        matched = queries.list_offers(conn, on_offers, SortKey.PRICE).records
        passing = {o["provider"] for o in matched}
    editions = queries.rating_editions(conn)
    providers = queries.list_providers(conn).records
    rows = []
    for record in providers:
        row = {**record, **summary(record, by_provider[record["slug"]], editions)}
        if multi and MultiNode(row["multi_node"]) not in multi:
            continue
        if f.clustermax and row["clustermax"] not in f.clustermax:
            continue
        if passing is not None and row["slug"] not in passing:
            continue
        rows.append(row)
    return Directory(sort_rows(rows, sort), multi, f, sort, len(providers))
