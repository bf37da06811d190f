"""Cross-file rules over a loaded catalog: ids, references, dates, plausibility, staleness."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path

from clusterscout.catalog.problems import Problem, Severity
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.ids import normalise_gpu_key
from clusterscout.domain.models import CatalogData, MultiNode, Provider, Source

STALE_AFTER_DAYS = 180


def _provider_label(data_dir: Path, slug: str) -> str:
    return f"{data_dir.name}/providers/{slug}.toml"


def _dated(provider: Provider) -> Iterator[tuple[str, date, str]]:
    """Yield (key path, date, what) for every dated fact of a provider."""
    for src in provider.sources:
        yield f"sources[{src.id}].checked_on", src.checked_on, "checked_on"
    for offer in provider.offers:
        for i, price in enumerate(offer.prices):
            yield f"offers[{offer.local_id}].prices[{i}].as_of", price.as_of, "as_of"


def check_dates(catalog: CatalogData, data_dir: Path, today: date) -> list[Problem]:
    """Dates may not lie in the future; facts older than STALE_AFTER_DAYS are warned about."""
    problems: list[Problem] = []
    for provider in catalog.providers:
        label = _provider_label(data_dir, provider.slug)
        problems.extend(
            Problem(
                label,
                f"sources[{s.id}].published_on",
                f"published_on {s.published_on} is after checked_on {s.checked_on}: a page "
                "cannot be read before it is published",
            )
            for s in provider.sources
            if s.published_on is not None and s.published_on > s.checked_on
        )
        for path, when, what in _dated(provider):
            if when > today:
                problems.append(Problem(label, path, f"{what} {when} is in the future"))
            elif (today - when).days > STALE_AFTER_DAYS:
                age = (today - when).days
                problems.append(
                    Problem(
                        label,
                        path,
                        f"{what} {when} is {age} days old (stale after {STALE_AFTER_DAYS})",
                        Severity.WARNING,
                        "stale-price" if what == "as_of" else "stale-source",
                    )
                )
    ratings = [r for p in catalog.providers for r in p.ratings]
    problems.extend(
        Problem(
            f"{data_dir.name}/ratings.toml",
            f"ratings[{r.rater} {r.edition}].published_on",
            f"published_on {r.published_on} is in the future",
        )
        for r in ratings
        if r.published_on > today
    )
    for file, sources in (
        ("gpus.toml", {s.id: s for g in catalog.gpus for s in g.sources}),
        ("fabrics.toml", {s.id: s for f in catalog.fabrics for s in f.sources}),
        ("ratings.toml", {s.id: s for r in ratings for s in r.sources}),
    ):
        problems.extend(_future_sources(f"{data_dir.name}/{file}", sources.values(), today))
    return problems


def _future_sources(label: str, sources: Iterable[Source], today: date) -> list[Problem]:
    return [
        Problem(label, f"sources[{s.id}].checked_on", f"checked_on {s.checked_on} is in the future")
        for s in sources
        if s.checked_on > today
    ]


def check_ids(catalog: CatalogData, data_dir: Path) -> list[Problem]:
    """Offer ids are unique in their file and globally; provider slugs are unique."""
    problems: list[Problem] = []
    slugs = Counter(p.slug for p in catalog.providers)
    for slug, n in slugs.items():
        if n > 1:
            problems.append(Problem(_provider_label(data_dir, slug), "slug", "duplicate slug"))
    seen: dict[str, str] = {}
    for provider in catalog.providers:
        label = _provider_label(data_dir, provider.slug)
        local = Counter(o.local_id for o in provider.offers)
        for oid, n in local.items():
            if n > 1:
                problems.append(
                    Problem(label, f"offers[{oid}].id", f"duplicate offer id {oid!r} ({n} times)")
                )
        for offer in provider.offers:
            other = seen.get(offer.id)
            if other is not None and other != provider.slug:
                problems.append(
                    Problem(
                        label,
                        f"offers[{offer.local_id}].id",
                        f"global offer id {offer.id!r} is also produced by {other}",
                    )
                )
            seen[offer.id] = provider.slug
    return problems


def check_references(catalog: CatalogData, data_dir: Path) -> list[Problem]:
    """GPUs and fabric generations named by offers exist in the reference files."""
    problems: list[Problem] = []
    names = {g.name: g for g in catalog.gpus}
    index = GpuIndex.of(catalog.gpus)
    fabrics = {f.id: f for f in catalog.fabrics}
    for provider in catalog.providers:
        label = _provider_label(data_dir, provider.slug)
        for offer in provider.offers:
            path = f"offers[{offer.local_id}]"
            if offer.gpu not in names:
                hint = index.spec(offer.gpu)
                extra = f"; did you mean {hint.name!r}?" if hint else ""
                problems.append(Problem(label, f"{path}.gpu", f"unknown GPU {offer.gpu!r}{extra}"))
            if offer.fabric_generation is not None:
                spec = fabrics.get(offer.fabric_generation)
                if spec is None:
                    problems.append(
                        Problem(
                            label,
                            f"{path}.fabric_generation",
                            f"unknown fabric generation {offer.fabric_generation!r}",
                        )
                    )
                elif offer.fabric is not None and spec.kind is not offer.fabric:
                    problems.append(
                        Problem(
                            label,
                            f"{path}.fabric_generation",
                            f"{spec.id!r} is a {spec.kind.value} fabric, "
                            f"but fabric is {offer.fabric.value!r}",
                        )
                    )
    alias_owner: dict[str, str] = {}
    for gpu in catalog.gpus:
        for alias in (gpu.name, *gpu.aliases):
            key = normalise_gpu_key(alias)
            owner = alias_owner.setdefault(key, gpu.name)
            if owner != gpu.name:
                problems.append(
                    Problem(
                        f"{data_dir.name}/gpus.toml",
                        f"gpus[{gpu.name}].aliases",
                        f"alias {alias!r} also names {owner}",
                    )
                )
    return problems


def check_prices(catalog: CatalogData, data_dir: Path) -> list[Problem]:
    """Prices fall inside the plausibility band of their GPU (catches typos like 29.9 for 2.99)."""
    problems: list[Problem] = []
    names = {g.name: g for g in catalog.gpus}
    for provider in catalog.providers:
        label = _provider_label(data_dir, provider.slug)
        for offer in provider.offers:
            gpu = names.get(offer.gpu)
            if gpu is None:
                continue
            low, high = gpu.price_min_usd_per_gpu_hour, gpu.price_max_usd_per_gpu_hour
            for i, price in enumerate(offer.prices):
                value = price.usd_per_gpu_hour
                if (low is not None and value < low) or (high is not None and value > high):
                    problems.append(
                        Problem(
                            label,
                            f"offers[{offer.local_id}].prices[{i}].usd_per_gpu_hour",
                            f"${value}/GPU-h is outside the plausible band "
                            f"{low}..{high} for {gpu.name}",
                        )
                    )
    return problems


def check_price_keys(catalog: CatalogData, data_dir: Path) -> list[Problem]:
    """Each (tier, term) appears once per offer: it is the key of the current price."""
    problems: list[Problem] = []
    for provider in catalog.providers:
        for offer in provider.offers:
            counts = Counter((p.tier.value, p.term) for p in offer.prices)
            for (tier, term), n in sorted(counts.items(), key=str):
                if n > 1:
                    problems.append(
                        Problem(
                            _provider_label(data_dir, provider.slug),
                            f"offers[{offer.local_id}].prices",
                            f"{n} prices share tier {tier!r} and term {term!r}; "
                            "make the term say what differs (e.g. cluster size)",
                        )
                    )
    return problems


def check_multi_node(catalog: CatalogData, data_dir: Path) -> list[Problem]:
    """A multi-node provider lists at least one offer; a warning when no offer names its fabric.

    A provider whose docs show multi-node clusters of a named GPU is a multi-node provider even
    when it does not say whether the fabric is InfiniBand or RoCE: that stays unknown on the
    offer (and is flagged here) rather than hiding the provider as "unknown".
    """
    problems = []
    for p in catalog.providers:
        if p.multi_node is not MultiNode.YES:
            continue
        if not p.offers:
            problems.append(
                Problem(
                    _provider_label(data_dir, p.slug),
                    "offers",
                    "multi_node is 'yes' but no offer is listed",
                )
            )
        elif not any(o.fabric for o in p.offers):
            problems.append(
                Problem(
                    _provider_label(data_dir, p.slug),
                    "offers",
                    "multi_node is 'yes' but no offer states its fabric",
                    Severity.WARNING,
                    "fabric-unstated",
                )
            )
    return problems


def run_checks(catalog: CatalogData, data_dir: Path, today: date | None = None) -> list[Problem]:
    """Every cross-file rule, in one list."""
    today = today or date.today()  # noqa: DTZ011 (a calendar date, compared with TOML dates)
    return [
        *check_ids(catalog, data_dir),
        *check_references(catalog, data_dir),
        *check_prices(catalog, data_dir),
        *check_price_keys(catalog, data_dir),
        *check_multi_node(catalog, data_dir),
        *check_dates(catalog, data_dir, today),
    ]
