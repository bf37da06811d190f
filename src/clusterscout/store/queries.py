"""Read queries over the store: the one SQL path behind the CLI, the web pages and the API."""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final, TypeVar

import orjson
from sqlalchemy import ColumnElement, Connection, Engine, Select, and_, func, or_, select, true

from clusterscout.catalog.filters import OfferFilter, SortKey, Unknowable
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import (
    GpuSpec,
    MultiNode,
    OrchestrationKind,
    ProvisioningMode,
)
from clusterscout.domain.regions import RegionIndex
from clusterscout.store.tables import (
    TIER_PRICE_COLUMNS,
    TOPOLOGY_COLUMNS,
    meta,
    offer_places,
    offers,
    providers,
)

_ORCHESTRATION_COLUMNS = {
    OrchestrationKind.SLURM: offers.c.managed_slurm,
    OrchestrationKind.KUBERNETES: offers.c.managed_kubernetes,
}
_PROVISIONING_COLUMNS = {
    ProvisioningMode.ON_DEMAND: offers.c.on_demand,
    ProvisioningMode.RESERVED: offers.c.reserved,
    ProvisioningMode.WAITLIST: offers.c.waitlist,
}


T = TypeVar("T")
VERSION_KEY: Final = "clusterscout.snapshot_version"
"""``Connection.info`` key: the data version a read snapshot carries (set by app.database)."""
_MEMO_KEY: Final = "clusterscout.per_version"


def per_version(conn: Connection, name: str, compute: Callable[[], T]) -> T:
    """``compute()``, remembered on this pooled connection for the snapshot's data version.

    Lookups that change only with the data (provider slugs, GPU reference data, calibration)
    are read once per version instead of once per request. Outside a snapshot (CLI, builds)
    nothing is remembered. Values must not be mutated by callers.
    """
    version = conn.info.get(VERSION_KEY)
    if version is None:
        return compute()
    memo: dict[str, tuple[str, Any]] = conn.info.setdefault(_MEMO_KEY, {})
    hit = memo.get(name)
    if hit is not None and hit[0] == version:
        value: T = hit[1]
        return value
    value = compute()
    memo[name] = (version, value)
    return value


@dataclass(frozen=True, slots=True)
class Page:
    """One page of records and the total count that matched."""

    records: list[dict[str, Any]]
    count: int


def offer_conditions(f: OfferFilter) -> list[ColumnElement[bool]]:
    """SQL conditions equivalent to ``catalog.filters.matches`` (a test holds them equal)."""
    c = offers.c
    u = f.lets_unknown
    conds: list[ColumnElement[bool]] = []

    def add(cond: ColumnElement[bool], name: Unknowable, column: Any) -> None:
        # With include_unknown, an offer whose fact is null passes the filter as well.
        conds.append(or_(cond, column.is_(None)) if u(name) else cond)

    if f.multi_node is not None:
        conds.append(c.multi_node.is_(f.multi_node))
    if f.gpu:
        conds.append(c.gpu.in_(f.gpu))
    if f.fabric:
        add(c.fabric.in_([x.value for x in f.fabric]), Unknowable.FABRIC, c.fabric)
    if f.min_gbps is not None:
        add(c.per_node_gbps >= f.min_gbps, Unknowable.MIN_GBPS, c.per_node_gbps)
    if f.rdma is not None:
        add(c.gpudirect_rdma.is_(f.rdma), Unknowable.RDMA, c.gpudirect_rdma)
    for k in f.orchestration:
        col = _ORCHESTRATION_COLUMNS[k]
        add(col.is_(True), Unknowable.ORCHESTRATION, col)
    if f.provisioning:
        cols = [_PROVISIONING_COLUMNS[m] for m in f.provisioning]
        unknown = [col.is_(None) for col in cols] if u(Unknowable.PROVISIONING) else []
        conds.append(or_(*(col.is_(True) for col in cols), *unknown))
    price = _price_column(f)
    if f.price_tier is not None and not u(Unknowable.PRICE_TIER):
        conds.append(price.is_not(None))
    if f.max_price is not None:
        add(price <= f.max_price, Unknowable.MAX_PRICE, price)
    if f.min_nodes is not None:
        add(c.reach_nodes >= f.min_nodes, Unknowable.MIN_NODES, c.reach_nodes)
    if f.region is not None:
        places = select(offer_places.c.offer_id).where(
            offer_places.c.place.in_(sorted(f.region.places))
        )
        cond = c.id.in_(places)
        # regions_text is empty exactly when neither the offer nor its provider names a region.
        conds.append(or_(cond, c.regions_text == "") if u(Unknowable.REGION) else cond)
    if f.clustermax:
        conds.append(c.clustermax_tier.in_([x.value for x in f.clustermax]))
    if f.nccl is not None:
        add(c.nccl_preconfigured.is_(f.nccl), Unknowable.NCCL, c.nccl_preconfigured)
    if f.billing:
        grains = [x.value for x in f.billing]
        add(c.billing_granularity.in_(grains), Unknowable.BILLING, c.billing_granularity)
    if f.shared_storage is not None:
        cond = c.shared_storage.is_(f.shared_storage)
        add(cond, Unknowable.SHARED_STORAGE, c.shared_storage)
    for claim in f.topology:
        col = c[TOPOLOGY_COLUMNS[claim]]
        add(col.is_(True), Unknowable.TOPOLOGY, col)
    if f.provider:
        conds.append(c.provider.in_(f.provider))
    return conds


def _price_column(f: OfferFilter) -> Any:
    """The price ``max_price`` and the price sort use: the tier's, else the headline price."""
    if f.price_tier is None:
        return offers.c.headline_usd_per_gpu_hour
    return offers.c[TIER_PRICE_COLUMNS[f.price_tier]]


def _order(stmt: Select[Any], sort: SortKey, f: OfferFilter) -> Select[Any]:
    c = offers.c
    # Unknown values sort last in every ordering; the id keeps pages stable.
    if sort is SortKey.PRICE:
        price = _price_column(f)
        if f.price_tier is None:
            # At equal price the fresher price first, so stale prices sort after fresh ones.
            return stmt.order_by(price.is_(None), price, c.headline_as_of.desc(), c.id)
        return stmt.order_by(price.is_(None), price, c.id)
    if sort is SortKey.GBPS:
        return stmt.order_by(c.per_node_gbps.is_(None), c.per_node_gbps.desc(), c.id)
    if sort is SortKey.NODES:
        return stmt.order_by(c.reach_nodes.is_(None), c.reach_nodes.desc(), c.id)
    return stmt.order_by(c.provider_name, c.gpu, c.id)


def list_offers(
    conn: Connection,
    f: OfferFilter,
    sort: SortKey = SortKey.PRICE,
    limit: int | None = None,
    offset: int = 0,
) -> Page:
    """Offers matching ``f``, sorted, paged; ``count`` is the total before paging."""
    where = and_(true(), *offer_conditions(f))
    decoded = _decoded_offers(conn)
    # One query: the window count is the total before LIMIT/OFFSET.
    total = func.count().over().label("total")
    column = offers.c.record_json if decoded is None else offers.c.id
    stmt = _order(select(column, total).where(where), sort, f).offset(offset)
    if limit is not None:
        stmt = stmt.limit(limit)
    rows = conn.execute(stmt).all()
    if rows:
        count = int(rows[0].total)
    elif offset:  # past the end: the rows are gone but the total is still asked for
        count = count_offers(conn, f)
    else:
        count = 0
    if decoded is None:
        return Page([orjson.loads(r.record_json) for r in rows], count)
    # A shallow copy each: callers set keys on the records they get (mark_freshness).
    return Page([dict(decoded[r.id]) for r in rows], count)


def _decoded_offers(conn: Connection) -> Mapping[str, Mapping[str, Any]] | None:
    """Every offer record by id, decoded once per data version; None outside a snapshot.

    Why: decoding the stored JSON of fifty records was about half of an uncached API answer's
    CPU, for records that change only with the data version.
    """
    version = conn.info.get(VERSION_KEY)
    if version is None:
        return None
    # Kept per engine, not per pooled connection: a copy per connection would cost ~2 MiB each.
    kept = _decoded_by_engine.get(conn.engine)
    if kept is not None and kept[0] == version:
        return kept[1]
    decoded = {
        str(r.id): orjson.loads(r.record_json)
        for r in conn.execute(select(offers.c.id, offers.c.record_json))
    }
    # Two threads may both decode a new version; either result serves.
    _decoded_by_engine[conn.engine] = (version, decoded)
    return decoded


_decoded_by_engine: weakref.WeakKeyDictionary[Engine, tuple[str, Mapping[str, Mapping[str, Any]]]]
_decoded_by_engine = weakref.WeakKeyDictionary()


def list_providers(conn: Connection, multi_node: MultiNode | None = None) -> Page:
    """Providers, optionally by multi-node status, by name."""
    stmt = select(providers.c.record_json).order_by(func.lower(providers.c.name))
    if multi_node is not None:
        stmt = stmt.where(providers.c.multi_node == multi_node.value)
    records = [orjson.loads(r.record_json) for r in conn.execute(stmt)]
    return Page(records, len(records))


def get_provider(conn: Connection, slug: str) -> dict[str, Any] | None:
    """One provider with its offers, or None."""
    row = conn.execute(select(providers.c.record_json).where(providers.c.slug == slug)).first()
    if row is None:
        return None
    record: dict[str, Any] = orjson.loads(row.record_json)
    record["offers"] = list_offers(conn, OfferFilter(provider=(slug,)), SortKey.PRICE).records
    return record


def get_providers(conn: Connection, slugs: Sequence[str]) -> list[dict[str, Any]]:
    """Several providers with their offers, in the order asked; unknown slugs are skipped."""
    return [rec for s in slugs if (rec := get_provider(conn, s)) is not None]


def provider_slugs(conn: Connection) -> frozenset[str]:
    """Every provider slug in the store."""
    return per_version(
        conn, "provider_slugs", lambda: frozenset(conn.execute(select(providers.c.slug)).scalars())
    )


def gpu_names(conn: Connection) -> list[str]:
    """GPU models that have at least one offer."""
    names = per_version(
        conn,
        "gpu_names",
        lambda: tuple(
            conn.execute(select(offers.c.gpu).distinct().order_by(offers.c.gpu)).scalars()
        ),
    )
    return list(names)


def read_meta(conn: Connection) -> dict[str, str]:
    """Build metadata: data_version and built_at."""
    return {r.key: r.value for r in conn.execute(select(meta))}


_VERSIONS: Final = select(meta.c.key, meta.c.value).where(
    meta.c.key.in_(("data_version", "built_at"))
)


def read_versions(conn: Connection) -> dict[str, str]:
    """Only ``data_version`` and ``built_at`` (the meta table also holds large values).

    Every request runs it, so the statement is built once (SQLAlchemy then reuses its
    compiled form).
    """
    return {r.key: r.value for r in conn.execute(_VERSIONS)}


def meta_value(conn: Connection, key: str) -> str | None:
    """One value stored with the build (GPU data, calibration), read once per data version."""

    def read() -> str | None:
        row = conn.execute(select(meta.c.value).where(meta.c.key == key)).first()
        return None if row is None else str(row.value)

    return per_version(conn, f"meta:{key}", read)


def rating_editions(conn: Connection) -> list[dict[str, Any]]:
    """Rating editions stored with the build, newest first (empty for an older build)."""
    raw = meta_value(conn, "rating_editions_json")
    return list(orjson.loads(raw)) if raw else []


def gpu_specs(conn: Connection) -> tuple[GpuSpec, ...]:
    """GPU reference data stored with the build (without their sources)."""
    return per_version(conn, "gpu_specs", lambda: _gpu_specs(conn))


def _gpu_specs(conn: Connection) -> tuple[GpuSpec, ...]:
    raw = meta_value(conn, "gpus_json")
    if not raw:
        return ()
    specs = []
    for item in json.loads(raw):
        item["aliases"] = tuple(item.get("aliases") or ())
        item["sources"] = ()
        specs.append(GpuSpec(**item))
    return tuple(specs)


def gpu_index(conn: Connection) -> GpuIndex:
    """The GPU index over the stored reference data and every GPU that has an offer."""
    return per_version(conn, "gpu_index", lambda: GpuIndex.of(gpu_specs(conn), gpu_names(conn)))


def region_index(conn: Connection) -> RegionIndex:
    """Areas, countries and provider regions stored with the build (data/regions.toml)."""
    return per_version(conn, "region_index", lambda: _region_index(conn))


def _region_index(conn: Connection) -> RegionIndex:
    raw = meta_value(conn, "regions_json")
    return RegionIndex.from_json(json.loads(raw)) if raw else RegionIndex()


def count_offers(conn: Connection, f: OfferFilter) -> int:
    """How many offers match ``f`` (listings' facet counts use ``store.tally`` instead)."""
    where = and_(true(), *offer_conditions(f))
    return int(conn.execute(select(func.count()).select_from(offers).where(where)).scalar_one())


def stale_facts(conn: Connection, today: date, max_age_days: int) -> list[dict[str, Any]]:
    """Facts whose newest source was checked more than ``max_age_days`` days before ``today``.

    Reads the ``sources`` objects of provider and offer records (prices are left to
    ``prices.stale_prices``, which looks at ``as_of``). Each result is ``{provider, scope,
    field, checked_on, age_days, url}``; ``scope`` is ``provider`` or an offer id. Sorted by
    provider, then oldest first.
    """
    return _aged_facts(conn, today, max_age_days, "checked_on")


def old_page_facts(conn: Connection, today: date, max_age_days: int) -> list[dict[str, Any]]:
    """Facts whose every source is a page dated more than ``max_age_days`` before ``today``.

    A re-read keeps ``checked_on`` fresh, but a 2024 post still only tells what was true in
    2024; this list shows such facts. Facts with any undated source are left out (their page
    may be current). Each result is ``{provider, scope, field, published_on, age_days, url}``
    with the newest page's date; sorted like ``stale_facts``.
    """
    return _aged_facts(conn, today, max_age_days, "published_on")


def _aged_facts(conn: Connection, today: date, max_age_days: int, key: str) -> list[dict[str, Any]]:
    """Facts whose newest source's ``key`` date is over ``max_age_days`` old (undated: never)."""
    out: list[dict[str, Any]] = []
    for provider, scope, field, refs in _fact_sources(conn):
        if any(s.get(key) is None for s in refs):
            continue
        newest = max(refs, key=lambda s: s[key])
        age = (today - date.fromisoformat(newest[key])).days
        if age > max_age_days:
            out.append(
                {
                    "provider": provider,
                    "scope": scope,
                    "field": field,
                    key: newest[key],
                    "age_days": age,
                    "url": newest["url"],
                }
            )
    out.sort(key=lambda f: (f["provider"], f[key], f["scope"], f["field"]))
    return out


def _fact_sources(conn: Connection) -> Iterator[tuple[str, str, str, list[dict[str, Any]]]]:
    """``(provider, scope, field, source refs)`` of every sourced fact except prices."""
    scopes: list[tuple[str, str, dict[str, Any]]] = [
        (r.slug, "provider", orjson.loads(r.record_json))
        for r in conn.execute(select(providers.c.slug, providers.c.record_json))
    ]
    scopes += [
        (r.provider, r.id, orjson.loads(r.record_json))
        for r in conn.execute(select(offers.c.id, offers.c.provider, offers.c.record_json))
    ]
    for provider, scope, record in scopes:
        for field, refs in sorted((record.get("sources") or {}).items()):
            if field != "prices" and refs:
                yield provider, scope, field, refs
