"""Offer counts for facets and chips, in memory: one bit per offer for each stored fact value.

A listing shows about twenty counts (each facet value, each chip). As SQL they cost a query
each, or one large statement whose construction alone took about 6 ms, and every round trip
to SQLite also hands the interpreter lock to other threads. The catalog has about a hundred
offers, so the facts the filters read are loaded once per data version and every count is a
few integer ANDs. ``mask`` follows ``queries.offer_conditions`` clause by clause; a property
test holds both equal to the pure predicate ``catalog.filters.matches``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import Connection, select

from clusterscout.catalog.filters import OfferFilter, Unknowable
from clusterscout.domain.models import OrchestrationKind, ProvisioningMode
from clusterscout.store.queries import per_version
from clusterscout.store.tables import TIER_PRICE_COLUMNS, TOPOLOGY_COLUMNS, offer_places, offers

ORCHESTRATION: Final = {
    OrchestrationKind.SLURM: "managed_slurm",
    OrchestrationKind.KUBERNETES: "managed_kubernetes",
}
PROVISIONING: Final = {
    ProvisioningMode.ON_DEMAND: "on_demand",
    ProvisioningMode.RESERVED: "reserved",
    ProvisioningMode.WAITLIST: "waitlist",
}
HEADLINE: Final = "headline_usd_per_gpu_hour"
_EQUAL: Final = (
    "multi_node",
    "gpu",
    "fabric",
    "gpudirect_rdma",
    *ORCHESTRATION.values(),
    *PROVISIONING.values(),
    "clustermax_tier",
    "nccl_preconfigured",
    "billing_granularity",
    "shared_storage",
    *TOPOLOGY_COLUMNS.values(),
    "provider",
)
_NUMBER: Final = ("per_node_gbps", "reach_nodes", HEADLINE, *TIER_PRICE_COLUMNS.values())
COLUMNS: Final = {"clustermax": "clustermax_tier"}
"""Tally column names that differ from the stored column's."""


@dataclass(frozen=True, slots=True)
class Tally:
    """One count of a batch: offers matching ``filter``, per value of ``column`` when given.

    ``column`` is gpu, fabric, provider, clustermax, or ``place`` (the region keys of
    ``offer_places``; an offer counts once under each of its places).
    """

    filter: OfferFilter
    column: str | None = None


@dataclass
class FactIndex:
    """For each stored fact and value, the set of offers having it, as bits of an int."""

    everyone: int = 0
    equal: dict[str, dict[Any, int]] = field(default_factory=dict)
    """Column -> value (None: unknown) -> offers."""
    numbers: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    """Column -> (value, offer bit) of the offers whose value is known."""
    places: dict[str, int] = field(default_factory=dict)
    no_region: int = 0
    """Offers that name no region, nor does their provider."""

    @classmethod
    def of(cls, rows: Iterable[Any], places: Iterable[tuple[str, str]]) -> FactIndex:
        """From offer rows (the columns above, with ``id`` and ``regions_text``) and
        ``(offer_id, place)`` pairs."""
        index = cls(equal={c: {} for c in _EQUAL}, numbers={c: [] for c in _NUMBER})
        bit_of: dict[str, int] = {}
        for i, row in enumerate(rows):
            bit = 1 << i
            bit_of[row.id] = bit
            index.everyone |= bit
            for name in _EQUAL:
                values = index.equal[name]
                value = getattr(row, name)
                values[value] = values.get(value, 0) | bit
            for name in _NUMBER:
                number = getattr(row, name)
                if number is not None:
                    index.numbers[name].append((float(number), bit))
            if row.regions_text == "":
                index.no_region |= bit
        for offer_id, place in places:
            index.places[place] = index.places.get(place, 0) | bit_of.get(offer_id, 0)
        return index

    def _is(self, name: str, *values: Any) -> int:
        found = 0
        for value in values:
            found |= self.equal[name].get(value, 0)
        return found

    def _unknown(self, name: str) -> int:
        """Offers whose number or fact ``name`` is unknown."""
        if name in self.equal:
            return self._is(name, None)
        known = 0
        for _value, bit in self.numbers[name]:
            known |= bit
        return self.everyone & ~known

    def _compare(self, name: str, bound: float, *, at_least: bool) -> int:
        found = 0
        for value, bit in self.numbers[name]:
            if (value >= bound) if at_least else (value <= bound):
                found |= bit
        return found

    def mask(self, f: OfferFilter) -> int:
        """The offers matching ``f``: ``queries.offer_conditions`` as bit operations."""
        u = f.lets_unknown
        out = self.everyone

        def add(cond: int, name: Unknowable, column: str) -> None:
            # With include_unknown, an offer whose fact is unknown passes the filter as well.
            nonlocal out
            out &= cond | self._unknown(column) if u(name) else cond

        if f.multi_node is not None:
            out &= self._is("multi_node", f.multi_node)
        if f.gpu:
            out &= self._is("gpu", *f.gpu)
        if f.fabric:
            add(self._is("fabric", *(x.value for x in f.fabric)), Unknowable.FABRIC, "fabric")
        if f.min_gbps is not None:
            gbps = self._compare("per_node_gbps", f.min_gbps, at_least=True)
            add(gbps, Unknowable.MIN_GBPS, "per_node_gbps")
        if f.rdma is not None:
            add(self._is("gpudirect_rdma", f.rdma), Unknowable.RDMA, "gpudirect_rdma")
        for kind in f.orchestration:
            column = ORCHESTRATION[kind]
            add(self._is(column, True), Unknowable.ORCHESTRATION, column)
        if f.provisioning:
            columns = [PROVISIONING[m] for m in f.provisioning]
            either = 0
            for column in columns:
                either |= self._is(column, True)
                if u(Unknowable.PROVISIONING):
                    either |= self._unknown(column)
            out &= either
        price = HEADLINE if f.price_tier is None else TIER_PRICE_COLUMNS[f.price_tier]
        if f.price_tier is not None and not u(Unknowable.PRICE_TIER):
            out &= ~self._unknown(price)
        if f.max_price is not None:
            cheap = self._compare(price, f.max_price, at_least=False)
            add(cheap, Unknowable.MAX_PRICE, price)
        if f.min_nodes is not None:
            big = self._compare("reach_nodes", f.min_nodes, at_least=True)
            add(big, Unknowable.MIN_NODES, "reach_nodes")
        if f.region is not None:
            somewhere = 0
            for place in f.region.places:
                somewhere |= self.places.get(place, 0)
            out &= somewhere | self.no_region if u(Unknowable.REGION) else somewhere
        if f.clustermax:
            out &= self._is("clustermax_tier", *(x.value for x in f.clustermax))
        if f.nccl is not None:
            nccl = self._is("nccl_preconfigured", f.nccl)
            add(nccl, Unknowable.NCCL, "nccl_preconfigured")
        if f.billing:
            grains = self._is("billing_granularity", *(x.value for x in f.billing))
            add(grains, Unknowable.BILLING, "billing_granularity")
        if f.shared_storage is not None:
            shared = self._is("shared_storage", f.shared_storage)
            add(shared, Unknowable.SHARED_STORAGE, "shared_storage")
        for claim in f.topology:
            column = TOPOLOGY_COLUMNS[claim]
            add(self._is(column, True), Unknowable.TOPOLOGY, column)
        if f.provider:
            out &= self._is("provider", *f.provider)
        return out & self.everyone

    def tally(self, ask: Tally) -> dict[str | None, int]:
        """Offers matching the ask's filter, per value of its column (``None``: unknown), or
        ``{None: count}`` without a column."""
        kept = self.mask(ask.filter)
        if ask.column is None:
            return {None: kept.bit_count()}
        if ask.column == "place":
            groups = self.places
        else:
            groups = self.equal[COLUMNS.get(ask.column, ask.column)]
        out: dict[str | None, int] = {}
        for value, bits in groups.items():
            n = (kept & bits).bit_count()
            if n:
                out[None if value is None else str(value)] = n
        return out


def load_index(conn: Connection) -> FactIndex:
    """The fact index of the stored offers (one query for the offers, one for their places)."""
    c = offers.c
    names = ("id", "regions_text", *_EQUAL, *_NUMBER)
    rows = conn.execute(select(*(c[name] for name in names)).order_by(c.id)).all()
    places = conn.execute(select(offer_places.c.offer_id, offer_places.c.place)).all()
    return FactIndex.of(rows, ((str(o), str(p)) for o, p in places))


def tallies(conn: Connection, asks: Sequence[Tally]) -> list[dict[str | None, int]]:
    """Every ask's counts, in order, from the fact index of the snapshot's data version."""
    index = per_version(conn, "fact_index", lambda: load_index(conn))
    return [index.tally(ask) for ask in asks]
