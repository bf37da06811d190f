"""Read data/ into domain records, collecting every problem with its file and key path."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clusterscout.catalog.problems import Problem, Severity, has_errors
from clusterscout.catalog.reading import _read_toml, _rel, _validate
from clusterscout.catalog.regions import load_regions, place_provider
from clusterscout.catalog.schema import (
    OFFER_FACT_FIELDS,
    BillingIn,
    DiscountIn,
    FabricsFileIn,
    GpusFileIn,
    OfferIn,
    ProviderIn,
    RatingsFileIn,
    RegionEntry,
    RegionIn,
    SourceIn,
)
from clusterscout.domain.ids import offer_id
from clusterscout.domain.models import (
    Billing,
    CatalogData,
    Conflict,
    Discount,
    FabricSpec,
    GpuSpec,
    MeasuredFabric,
    Offer,
    Orchestration,
    Price,
    Provider,
    Provisioning,
    Rating,
    RatingEdition,
    Source,
    Sources,
    Storage,
    Topology,
)
from clusterscout.domain.regions import RegionIndex


@dataclass(slots=True)
class LoadResult:
    """What a load produced: the catalog (None when unreadable) and every problem found."""

    catalog: CatalogData | None
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when there is a catalog and no error."""
        return self.catalog is not None and not has_errors(self.problems)


def _sources_by_id(
    sources: Sequence[SourceIn], label: str, problems: list[Problem]
) -> dict[str, Source]:
    out: dict[str, Source] = {}
    for i, s in enumerate(sources):
        if s.id in out:
            problems.append(Problem(label, f"sources[{i}].id", f"duplicate source id {s.id!r}"))
        out[s.id] = Source(
            id=s.id,
            url=str(s.url),
            checked_on=s.checked_on,
            kind=s.kind,
            published_on=s.published_on,
            title=s.title,
            note=s.note,
        )
    return out


class _Resolver:
    """Turns source ids into Source records, reporting ids that do not resolve."""

    def __init__(self, by_id: dict[str, Source], label: str, problems: list[Problem]) -> None:
        self.by_id = by_id
        self.label = label
        self.problems = problems
        self.used: set[str] = set()

    def many(self, ids: Sequence[str], path: str) -> Sources:
        out: list[Source] = []
        for sid in ids:
            src = self.by_id.get(sid)
            if src is None:
                self.problems.append(
                    Problem(self.label, path, f"source {sid!r} is not defined in [[sources]]")
                )
            else:
                self.used.add(sid)
                out.append(src)
        return tuple(out)

    def one(self, sid: str, path: str) -> Source | None:
        found = self.many([sid], path)
        return found[0] if found else None


def _orchestration(data: Any, res: _Resolver, path: str) -> Orchestration:
    if data is None:
        return Orchestration()
    return Orchestration(
        managed_slurm=data.managed_slurm,
        managed_kubernetes=data.managed_kubernetes,
        nccl_preconfigured=data.nccl_preconfigured,
        raw_vms=data.raw_vms,
        note=data.note,
        sources=res.many(data.sources, f"{path}.sources"),
    )


def _provisioning(data: Any, res: _Resolver, path: str) -> Provisioning:
    if data is None:
        return Provisioning()
    return Provisioning(
        on_demand_clusters=data.on_demand_clusters,
        reserved=data.reserved,
        reserved_terms=tuple(data.reserved_terms),
        waitlist=data.waitlist,
        access=data.access,
        note=data.note,
        sources=res.many(data.sources, f"{path}.sources"),
    )


def _billing(data: BillingIn | None, res: _Resolver, path: str) -> Billing:
    if data is None:
        return Billing()
    return Billing(
        granularity=data.granularity,
        minimum=data.minimum,
        minimum_hours=data.minimum_hours,
        note=data.note,
        sources=res.many(data.sources, f"{path}.sources"),
    )


def _discounts(items: Sequence[DiscountIn], res: _Resolver, path: str) -> tuple[Discount, ...]:
    return tuple(
        Discount(
            term_days=d.term_days,
            max_percent=d.max_percent,
            min_percent=d.min_percent,
            off=d.off,
            note=d.note,
            sources=res.many(d.sources, f"{path}[{i}].sources"),
        )
        for i, d in enumerate(items)
    )


def _region_names(entries: Sequence[RegionEntry]) -> tuple[str, ...]:
    return tuple(e.name if isinstance(e, RegionIn) else e for e in entries)


def _countries(entries: Sequence[RegionEntry]) -> tuple[str, ...]:
    """Distinct countries of the regions that name one, in the order they appear."""
    return tuple(dict.fromkeys(e.country for e in entries if isinstance(e, RegionIn)))


def _offer(slug: str, o: OfferIn, provider: ProviderIn, res: _Resolver) -> Offer:
    path = f"offers[{o.id}]"
    default = res.many(o.sources, f"{path}.sources")
    field_sources: dict[str, Sources] = {}
    for name in OFFER_FACT_FIELDS:
        value = getattr(o, name)
        if value is None or value == []:
            continue
        ids = o.field_sources.get(name)
        field_sources[name] = (
            res.many(ids, f"{path}.field_sources.{name}") if ids is not None else default
        )
    prices: list[Price] = []
    for i, p in enumerate(o.prices):
        src = res.one(p.source, f"{path}.prices[{i}].source")
        if src is not None:
            prices.append(
                Price(
                    tier=p.tier,
                    usd_per_gpu_hour=p.usd_per_gpu_hour,
                    as_of=p.as_of,
                    source=src,
                    term=p.term,
                    term_days=p.term_days,
                    prepay=p.prepay,
                    note=p.note,
                )
            )
    # Offer-level orchestration/provisioning override the provider's; otherwise inherit it so
    # every offer can be filtered on the same columns.
    orch = _orchestration(o.orchestration or provider.orchestration, res, f"{path}.orchestration")
    prov = _provisioning(o.provisioning or provider.provisioning, res, f"{path}.provisioning")
    billing = _billing(o.billing or provider.billing, res, f"{path}.billing")
    # Offer discounts replace the provider's when given, like the other override groups.
    discounts = _discounts(
        o.discounts or provider.discounts,
        res,
        f"{path}.discounts" if o.discounts else "discounts",
    )
    topo = Topology()
    if o.topology is not None:
        topo = Topology(
            non_blocking=o.topology.non_blocking,
            rail_optimized=o.topology.rail_optimized,
            locality=o.topology.locality,
            sources=res.many(o.topology.sources, f"{path}.topology.sources"),
        )
    groups = (
        ("topology", topo),
        ("orchestration", orch),
        ("provisioning", prov),
        ("billing", billing),
    )
    for name, group in groups:
        if group.sources:
            field_sources[name] = group.sources
    if prices:
        field_sources["prices"] = tuple(dict.fromkeys(p.source for p in prices))
    measured = tuple(
        MeasuredFabric(
            collective=m.collective,
            message_bytes=m.message_bytes,
            nodes=m.nodes,
            gpus_per_node=m.gpus_per_node,
            busbw_gbs=m.busbw_gbs,
            sources=res.many(m.sources, f"{path}.measured_fabric[{i}].sources"),
            nccl_version=m.nccl_version,
            tool=m.tool,
            in_network_reduction=m.in_network_reduction,
            degraded=m.degraded,
            published_on=m.published_on,
            note=m.note,
        )
        for i, m in enumerate(o.measured_fabric)
    )
    if measured:
        field_sources["measured_fabric"] = tuple(
            dict.fromkeys(src for m in measured for src in m.sources)
        )
    return Offer(
        id=offer_id(slug, o.id),
        local_id=o.id,
        provider=slug,
        gpu=o.gpu,
        name=o.name,
        gpus_per_node=o.gpus_per_node,
        fabric=o.fabric,
        fabric_generation=o.fabric_generation,
        per_node_gbps=o.per_node_gbps,
        gpudirect_rdma=o.gpudirect_rdma,
        min_nodes=o.min_nodes,
        max_nodes=o.max_nodes,
        max_nodes_by_quote=o.max_nodes_by_quote,
        regions=_region_names(o.regions),
        countries=_countries(o.regions),
        note=o.note,
        topology=topo,
        orchestration=orch,
        provisioning=prov,
        billing=billing,
        discounts=discounts,
        prices=tuple(prices),
        field_sources=field_sources,
        measured_fabric=measured,
    )


def _provider(p: ProviderIn, label: str, problems: list[Problem]) -> Provider:
    res = _Resolver(_sources_by_id(p.sources, label, problems), label, problems)
    field_sources: dict[str, Sources] = {
        "multi_node": res.many(p.multi_node.sources, "multi_node.sources")
    }
    hq_country = None
    regions: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    if p.location is not None:
        loc_sources = res.many(p.location.sources, "location.sources")
        hq_country = p.location.hq_country
        regions = _region_names(p.location.regions)
        countries = _countries(p.location.regions)
        if hq_country:
            field_sources["hq_country"] = loc_sources
        if regions:
            field_sources["regions"] = loc_sources
    orch = _orchestration(p.orchestration, res, "orchestration")
    prov = _provisioning(p.provisioning, res, "provisioning")
    billing = _billing(p.billing, res, "billing")
    discounts = _discounts(p.discounts, res, "discounts")
    storage = Storage()
    if p.storage is not None:
        storage = Storage(
            shared_filesystem=p.storage.shared_filesystem,
            products=tuple(p.storage.products),
            throughput_gbs=p.storage.throughput_gbs,
            usd_per_gib_month=p.storage.usd_per_gib_month,
            egress_usd_per_gib=p.storage.egress_usd_per_gib,
            note=p.storage.note,
            sources=res.many(p.storage.sources, "storage.sources"),
        )
    for name, group in (
        ("orchestration", orch),
        ("provisioning", prov),
        ("billing", billing),
        ("storage", storage),
    ):
        if group.sources:
            field_sources[name] = group.sources
    if discounts:
        field_sources["discounts"] = tuple(dict.fromkeys(s for d in discounts for s in d.sources))
    conflicts = tuple(
        Conflict(
            topic=c.topic,
            note=c.note,
            sources=res.many(c.sources, f"conflicts[{i}].sources"),
            about=tuple(c.about),
            offers=tuple(c.offers),
        )
        for i, c in enumerate(p.conflicts)
    )
    local_ids = {o.id for o in p.offers}
    for i, c in enumerate(p.conflicts):
        problems.extend(
            Problem(label, f"conflicts[{i}].offers", f"no offer with id {oid!r}")
            for oid in c.offers
            if oid not in local_ids
        )
    # Each offer carries the conflicts that concern it, so its row can show a badge.
    offers = tuple(
        replace(o, conflicts=tuple(c for c in conflicts if not c.offers or o.local_id in c.offers))
        for o in (_offer(p.slug, o, p, res) for o in p.offers)
    )
    for sid in sorted(set(res.by_id) - res.used):
        problems.append(
            Problem(
                label, f"sources[{sid}]", "source is never cited", Severity.WARNING, "unused-source"
            )
        )
    return Provider(
        slug=p.slug,
        name=p.name,
        url=str(p.url),
        multi_node=p.multi_node.status,
        multi_node_evidence=p.multi_node.evidence,
        hq_country=hq_country,
        regions=regions,
        countries=countries,
        orchestration=orch,
        provisioning=prov,
        billing=billing,
        storage=storage,
        discounts=discounts,
        conflicts=conflicts,
        sources=tuple(res.by_id.values()),
        field_sources=field_sources,
        offers=offers,
    )


def _stated_countries(p: ProviderIn) -> dict[str, str]:
    """Region name -> the country the provider file gives it (``{ name, country }`` entries)."""
    entries = [
        *(p.location.regions if p.location else ()),
        *(r for o in p.offers for r in o.regions),
    ]
    return {e.name: e.country for e in entries if isinstance(e, RegionIn)}


def load_provider_file(
    path: Path, root: Path, problems: list[Problem], regions: RegionIndex
) -> Provider | None:
    """Parse and convert one provider file; problems are appended, None if unusable.

    Every region name must be in ``regions`` (data/regions.toml); offers get their countries
    and places from it.
    """
    label = _rel(path, root)
    raw = _read_toml(path, label, problems)
    if raw is None:
        return None
    parsed = _validate(ProviderIn, raw, label, problems)
    if parsed is None:
        return None
    if parsed.slug != path.stem:
        problems.append(
            Problem(label, "slug", f"slug {parsed.slug!r} does not match the file name")
        )
    provider = _provider(parsed, label, problems)
    return place_provider(provider, _stated_countries(parsed), regions, label, problems)


def load_gpus(data_dir: Path, problems: list[Problem] | None = None) -> tuple[GpuSpec, ...]:
    """Read gpus.toml; returns () when it is missing or invalid (problems say why)."""
    problems = [] if problems is None else problems
    path = data_dir / "gpus.toml"
    label = _rel(path, data_dir)
    raw = _read_toml(path, label, problems)
    parsed = _validate(GpusFileIn, raw, label, problems) if raw is not None else None
    if parsed is None:
        return ()
    res = _Resolver(_sources_by_id(parsed.sources, label, problems), label, problems)
    return tuple(
        GpuSpec(
            name=g.name,
            vendor=g.vendor,
            memory_gib=g.memory_gib,
            aliases=tuple(g.aliases),
            memory_gb=g.memory_gb,
            bf16_dense_tflops=g.bf16_dense_tflops,
            fp8_dense_tflops=g.fp8_dense_tflops,
            hbm_tbps=g.hbm_tbps,
            scale_up_gbs=g.scale_up_gbs,
            price_min_usd_per_gpu_hour=g.price_min_usd_per_gpu_hour,
            price_max_usd_per_gpu_hour=g.price_max_usd_per_gpu_hour,
            note=g.note,
            sources=res.many(g.sources, f"gpus[{i}].sources"),
        )
        for i, g in enumerate(parsed.gpus)
    )


def load_fabrics(data_dir: Path, problems: list[Problem] | None = None) -> tuple[FabricSpec, ...]:
    """Read fabrics.toml; returns () when it is missing or invalid (problems say why)."""
    problems = [] if problems is None else problems
    path = data_dir / "fabrics.toml"
    label = _rel(path, data_dir)
    raw = _read_toml(path, label, problems)
    parsed = _validate(FabricsFileIn, raw, label, problems) if raw is not None else None
    if parsed is None:
        return ()
    res = _Resolver(_sources_by_id(parsed.sources, label, problems), label, problems)
    return tuple(
        FabricSpec(
            id=f.id,
            kind=f.kind,
            name=f.name,
            per_port_gbps=f.per_port_gbps,
            rdma=f.rdma,
            latency_us=f.latency_us,
            note=f.note,
            sources=res.many(f.sources, f"fabrics[{f.id}].sources"),
        )
        for f in parsed.fabrics
    )


RATINGS_FILE = "ratings.toml"


def load_ratings(
    data_dir: Path, slugs: set[str], problems: list[Problem]
) -> dict[str, tuple[Rating, ...]]:
    """Read ratings.toml (optional) into ratings per provider slug.

    A rating of a provider that has no file is an error: it would silently never show.
    """
    path = data_dir / RATINGS_FILE
    if not path.exists():
        return {}
    label = _rel(path, data_dir)
    raw = _read_toml(path, label, problems)
    parsed = _validate(RatingsFileIn, raw, label, problems) if raw is not None else None
    if parsed is None:
        return {}
    res = _Resolver(_sources_by_id(parsed.sources, label, problems), label, problems)
    out: dict[str, list[Rating]] = {}
    seen: set[tuple[str, str, str]] = set()
    for i, r in enumerate(parsed.ratings):
        where = f"ratings[{i}]"
        if r.provider not in slugs:
            problems.append(Problem(label, f"{where}.provider", f"unknown provider {r.provider!r}"))
            continue
        key = (r.provider, r.rater, r.edition)
        if key in seen:
            what = f"duplicate rating of {r.provider!r} by {r.rater} {r.edition}"
            problems.append(Problem(label, where, what))
            continue
        seen.add(key)
        out.setdefault(r.provider, []).append(
            Rating(
                rater=r.rater,
                edition=r.edition,
                tier=r.tier,
                published_on=r.published_on,
                note=r.note,
                sources=res.many(r.sources, f"{where}.sources"),
            )
        )
    for sid in sorted(set(res.by_id) - res.used):
        problems.append(
            Problem(
                label, f"sources[{sid}]", "source is never cited", Severity.WARNING, "unused-source"
            )
        )
    # Newest edition first, so pages show the current tier before older ones.
    return {
        slug: tuple(sorted(items, key=lambda r: r.published_on, reverse=True))
        for slug, items in out.items()
    }


def rating_editions(ratings: Iterable[Rating]) -> tuple[RatingEdition, ...]:
    """The editions the ratings belong to, newest first: the latest date and every source.

    An edition's list is the evidence that a provider missing from it was not rated.
    """
    found: dict[tuple[str, str], RatingEdition] = {}
    for r in ratings:
        key = (r.rater, r.edition)
        old = found.get(key)
        if old is None:
            found[key] = RatingEdition(r.rater, r.edition, r.published_on, r.sources)
            continue
        sources = old.sources + tuple(s for s in r.sources if s not in old.sources)
        found[key] = RatingEdition(
            r.rater, r.edition, max(old.published_on, r.published_on), sources
        )
    return tuple(
        sorted(found.values(), key=lambda e: (e.published_on, e.rater, e.edition), reverse=True)
    )


def load_catalog(data_dir: Path) -> LoadResult:
    """Load every file under ``data_dir`` and run the cross-file checks.

    Every problem is collected; nothing stops at the first one.
    """
    from clusterscout.catalog.checks import run_checks  # noqa: PLC0415 (checks imports load)

    problems: list[Problem] = []
    if not data_dir.is_dir():
        what = "is a file, not a directory" if data_dir.exists() else "does not exist"
        return LoadResult(None, [Problem(str(data_dir), "", f"data directory {what}")])
    gpus = load_gpus(data_dir, problems)
    fabrics = load_fabrics(data_dir, problems)
    providers_dir = data_dir / "providers"
    files = sorted(providers_dir.glob("*.toml")) if providers_dir.is_dir() else []
    if not files:
        problems.append(Problem(_rel(providers_dir, data_dir), "", "no provider files found"))
    regions = load_regions(data_dir, problems)
    providers = [
        p for f in files if (p := load_provider_file(f, data_dir, problems, regions)) is not None
    ]
    # Ratings may name any provider that has a file, even one that failed to load: the file's
    # own problems say what is wrong there, an "unknown provider" would only add noise.
    ratings = load_ratings(data_dir, {f.stem for f in files}, problems)
    editions = rating_editions(r for items in ratings.values() for r in items)
    providers = [
        replace(p, ratings=ratings.get(p.slug, ()), rating_editions=editions) for p in providers
    ]
    catalog = CatalogData(providers=tuple(providers), gpus=gpus, fabrics=fabrics, regions=regions)
    problems.extend(run_checks(catalog, data_dir))
    return LoadResult(catalog, sorted(set(problems), key=lambda p: (p.file, p.path, p.message)))
