"""Load a validated catalog into the database in one transaction (idempotent rebuild)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time
from pathlib import Path
from time import time_ns
from typing import Any, Final

from sqlalchemy import Engine, delete, func, insert, select

from clusterscout.catalog.calibration import parse_calibration
from clusterscout.catalog.filters import clustermax_choice, searchable_regions, topology_claims
from clusterscout.catalog.measured import predictions
from clusterscout.catalog.records import edition_record, offer_record, provider_record
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import CatalogData, MultiNode
from clusterscout.store import migrate
from clusterscout.store.prices import (
    CATALOG_FEED,
    Observation,
    append,
    publish_data_version,
    refresh_current,
)
from clusterscout.store.tables import (
    TOPOLOGY_COLUMNS,
    catalog_translations,
    meta,
    offer_places,
    offers,
    price_observations,
    providers,
)


@dataclass(frozen=True, slots=True)
class BuildStats:
    """What a build wrote."""

    providers: int
    offers: int
    prices: int
    data_version: str


def _catalog_files(data_dir: Path) -> list[tuple[tuple[str, ...], os.stat_result]]:
    """The catalog's files as path parts under ``data_dir``, sorted like paths, with ``stat``.

    The files ``rglob`` finds (links to directories are not followed), without building a
    Path per file: this runs per request. Installed, data/ is a package (clusterscout.data):
    its ``__init__.py`` and any bytecode are packaging, not catalog, and never count.
    """
    found: list[tuple[tuple[str, ...], os.stat_result]] = []
    _scan(str(data_dir), (), found)
    return sorted(found, key=lambda pair: pair[0])


def _scan(
    top: str, under: tuple[str, ...], found: list[tuple[tuple[str, ...], os.stat_result]]
) -> None:
    with os.scandir(top) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    _scan(entry.path, (*under, entry.name), found)
                continue
            if entry.name.endswith((".py", ".pyc")):
                continue
            with contextlib.suppress(OSError):  # a dangling link is not a catalog file
                st = entry.stat()
                if stat.S_ISREG(st.st_mode):
                    found.append(((*under, entry.name), st))


_Stamp = tuple[tuple[str, int, int], ...]
_hashed: dict[Path, tuple[_Stamp, str]] = {}
_RACY_NS: Final = 2_000_000_000


def data_version(data_dir: Path) -> str:
    """Content hash of every catalog file under data/: changes whenever the catalog does.

    Files are read and hashed again only when their list, a size or a modification time
    changed. Why: pages and the launch API ask for it per request, and hashing every file took
    about 3.5 ms. As in git's racy-file rule, an answer is kept only when every file is older
    than the hashing by more than the clock's coarse tick, so a file rewritten at the same size
    within that tick is never mistaken for the one hashed.
    """
    files = _catalog_files(data_dir)
    stamp = tuple(("/".join(parts), s.st_size, s.st_mtime_ns) for parts, s in files)
    kept = _hashed.get(data_dir)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    started = time_ns()
    digest = hashlib.sha256()
    for name, _size, _mtime in stamp:
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(data_dir.joinpath(name).read_bytes())
    version = digest.hexdigest()[:12]
    if started - max((s.st_mtime_ns for _p, s in files), default=0) > _RACY_NS:
        if len(_hashed) >= 16:  # tests build many directories; a server reads one or two
            _hashed.clear()
        _hashed[data_dir] = (stamp, version)
    return version


def _gpus_json(catalog: CatalogData) -> str:
    # Stored with the build so the web app can resolve GPU aliases without reading data/.
    fields = (
        "name",
        "vendor",
        "memory_gib",
        "aliases",
        "memory_gb",
        "bf16_dense_tflops",
        "fp8_dense_tflops",
        "hbm_tbps",
        "scale_up_gbs",
    )
    return json.dumps([{k: getattr(g, k) for k in fields} for g in catalog.gpus])


RATING_EDITIONS_KEY = "rating_editions_json"


def _editions(catalog: CatalogData) -> list[dict[str, Any]]:
    editions = catalog.providers[0].rating_editions if catalog.providers else ()
    return [edition_record(e) for e in editions]


def ensure_schema(engine: Engine) -> None:
    """Apply pending migrations."""
    with engine.begin() as conn:
        migrate.upgrade(conn)


def build_database(
    engine: Engine,
    catalog: CatalogData,
    version: str,
    calibration_toml: str | None = None,
    translations: Mapping[str, Mapping[str, str]] | None = None,
    extra_meta: Mapping[str, str] | None = None,
) -> BuildStats:
    """Replace the catalog rows with ``catalog`` in a single transaction.

    Price observations from feeds are kept (history survives rebuilds) unless their offer is
    gone; catalog prices are re-recorded as observations of the ``catalog`` feed. If anything
    raises, the transaction rolls back and the database is exactly as before.
    """
    ensure_schema(engine)
    now = datetime.now(UTC)
    # The model's figure beside each published fabric measurement, fixed at build time so
    # every surface shows the same number.
    calibration = parse_calibration(calibration_toml) if calibration_toml else None
    gpu_index = GpuIndex.of(catalog.gpus)
    offer_rows: list[dict[str, Any]] = []
    observations: list[Observation] = []
    for provider in catalog.providers:
        for offer in provider.offers:
            offer_rows.append(
                {
                    "id": offer.id,
                    "provider": provider.slug,
                    "provider_name": provider.name,
                    "gpu": offer.gpu,
                    "gpus_per_node": offer.gpus_per_node,
                    "fabric": offer.fabric.value if offer.fabric else None,
                    "per_node_gbps": offer.per_node_gbps,
                    "gpudirect_rdma": offer.gpudirect_rdma,
                    "min_nodes": offer.min_nodes,
                    "max_nodes": offer.max_nodes,
                    "max_nodes_by_quote": offer.max_nodes_by_quote,
                    "reach_nodes": offer.reach_nodes,
                    "multi_node": provider.multi_node is MultiNode.YES,
                    # Null stays null: filters that include unknowns need to tell it apart.
                    "managed_slurm": offer.orchestration.managed_slurm,
                    "managed_kubernetes": offer.orchestration.managed_kubernetes,
                    "on_demand": offer.provisioning.on_demand_clusters,
                    "reserved": offer.provisioning.reserved,
                    "waitlist": offer.provisioning.waitlist,
                    "regions_text": searchable_regions(offer, provider),
                    "from_usd_per_gpu_hour": offer.from_usd_per_gpu_hour,
                    "clustermax_tier": clustermax_choice(provider).value,
                    "nccl_preconfigured": offer.orchestration.nccl_preconfigured,
                    "billing_granularity": (
                        offer.billing.granularity.value if offer.billing.granularity else None
                    ),
                    "shared_storage": provider.storage.shared_filesystem,
                    **{
                        TOPOLOGY_COLUMNS[claim]: fact
                        for claim, fact in topology_claims(offer).items()
                    },
                    "record_json": json.dumps(
                        offer_record(
                            offer,
                            provider.name,
                            provider.ratings,
                            predictions(offer, gpu_index, calibration),
                        )
                    ),
                }
            )
            observations.extend(
                Observation(
                    offer_id=offer.id,
                    tier=p.tier.value,
                    usd_per_gpu_hour=p.usd_per_gpu_hour,
                    as_of=p.as_of,
                    # The day curators checked the source: rebuilds stay deterministic.
                    observed_at=datetime.combine(p.source.checked_on, time.min, tzinfo=UTC),
                    feed=CATALOG_FEED,
                    source_url=p.source.url,
                    term=p.term,
                    source_checked_on=p.source.checked_on,
                    source_kind=p.source.kind.value,
                    term_days=p.term_days,
                    prepay=p.prepay,
                    note=p.note,
                )
                for p in offer.prices
            )
    provider_rows = [
        {
            "slug": p.slug,
            "name": p.name,
            "url": p.url,
            "multi_node": p.multi_node.value,
            "hq_country": p.hq_country,
            "offer_count": len(p.offers),
            "record_json": json.dumps(provider_record(p)),
        }
        for p in catalog.providers
    ]
    offer_ids = [o.id for o in catalog.offers]
    place_rows = [{"offer_id": o.id, "place": p} for o in catalog.offers for p in o.places]
    translation_rows = [
        {"lang": lang, "source": source, "text": text}
        for lang, table in sorted((translations or {}).items())
        for source, text in sorted(table.items())
    ]
    with engine.begin() as conn:
        conn.execute(delete(offer_places))
        conn.execute(delete(offers))
        conn.execute(delete(providers))
        conn.execute(delete(price_observations).where(price_observations.c.feed == CATALOG_FEED))
        conn.execute(
            delete(price_observations).where(price_observations.c.offer_id.not_in(offer_ids))
        )
        if provider_rows:
            conn.execute(insert(providers), provider_rows)
        if offer_rows:
            conn.execute(insert(offers), offer_rows)
        if place_rows:
            conn.execute(insert(offer_places), place_rows)
        conn.execute(delete(catalog_translations))
        if translation_rows:
            conn.execute(insert(catalog_translations), translation_rows)
        append(conn, observations)
        refresh_current(conn, offer_ids)
        conn.execute(delete(meta))
        conn.execute(
            insert(meta),
            [
                {"key": "catalog_version", "value": version},
                {"key": "built_at", "value": now.isoformat()},
                {"key": "gpus_json", "value": _gpus_json(catalog)},
                # Which rating editions exist: a provider absent from one was not rated in it.
                {"key": RATING_EDITIONS_KEY, "value": json.dumps(_editions(catalog))},
                # The region filter resolves names on every request without reading data/.
                {"key": "regions_json", "value": json.dumps(catalog.regions.to_json())},
                # Stored with the build so every replica plans with the same constants.
                *(
                    [{"key": "calibration_toml", "value": calibration_toml}]
                    if calibration_toml
                    else []
                ),
                # Read by the application as it is (the fabric brackets, for one).
                *({"key": k, "value": v} for k, v in sorted((extra_meta or {}).items())),
            ],
        )
        published = publish_data_version(conn)
        n_prices = conn.execute(select(func.count()).select_from(price_observations)).scalar_one()
    return BuildStats(len(provider_rows), len(offer_rows), int(n_prices), published)
