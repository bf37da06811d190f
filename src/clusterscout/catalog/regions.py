"""data/regions.toml: read it, check provider regions against it, place offers in it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

from pydantic import Field, StringConstraints, model_validator

from clusterscout.catalog.problems import Problem
from clusterscout.catalog.reading import _read_toml, _rel, _validate
from clusterscout.catalog.schema import Country, ShortText, Slug, SourceIn, _Strict
from clusterscout.domain.models import Offer, Provider
from clusterscout.domain.regions import Area, RegionIndex, normalize
from clusterscout.domain.regions import Country as CountryInfo
from clusterscout.domain.regions import Region as RegionInfo

REGIONS_FILE = "regions.toml"
AreaCode = Annotated[str, StringConstraints(pattern=r"^[0-9]{3}$")]
Alias = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]


class AreaIn(_Strict):
    """`[areas]` entry: an M49 region or sub-region."""

    name: ShortText
    slug: Slug
    parent: AreaCode | None = None
    aliases: list[Alias] = Field(default_factory=list)


class CountryIn(_Strict):
    """`[countries]` entry: a country and its smallest M49 area."""

    name: ShortText
    area: AreaCode
    aliases: list[Alias] = Field(default_factory=list)


class RegionIn(_Strict):
    """`[regions]` entry: a provider region name, in a country or (when unnamed) an area."""

    country: Country | None = None
    area: AreaCode | None = None
    aliases: list[Alias] = Field(default_factory=list)
    note: ShortText | None = None
    sources: list[Slug] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_place(self) -> RegionIn:
        if (self.country is None) == (self.area is None):
            msg = "give exactly one of country or area"
            raise ValueError(msg)
        return self


class RegionsFileIn(_Strict):
    """The whole regions.toml."""

    sources: list[SourceIn] = Field(default_factory=list)
    areas: dict[AreaCode, AreaIn]
    countries: dict[Country, CountryIn]
    regions: dict[ShortText, RegionIn] = Field(default_factory=dict)


def _check(parsed: RegionsFileIn, label: str) -> list[Problem]:
    """References that must resolve, and names that must mean one thing."""
    problems: list[Problem] = []
    source_ids = {s.id for s in parsed.sources}
    for code, a in parsed.areas.items():
        if a.parent is not None and a.parent not in parsed.areas:
            problems.append(Problem(label, f"areas.{code}.parent", f"unknown area {a.parent!r}"))
    for code, c in parsed.countries.items():
        if c.area not in parsed.areas:
            problems.append(Problem(label, f"countries.{code}.area", f"unknown area {c.area!r}"))
    for name, r in parsed.regions.items():
        where = f'regions."{name}"'
        if r.country is not None and r.country not in parsed.countries:
            problems.append(Problem(label, f"{where}.country", f"unknown country {r.country!r}"))
        if r.area is not None and r.area not in parsed.areas:
            problems.append(Problem(label, f"{where}.area", f"unknown area {r.area!r}"))
        problems.extend(
            Problem(label, f"{where}.sources", f"source {sid!r} is not defined in [[sources]]")
            for sid in r.sources
            if sid not in source_ids
        )
    # A name may mean one area or one country; region names and aliases may be shared by
    # several regions (both IBM entries are "frankfurt") but not with an area or a country.
    owner: dict[str, str] = {}
    named = [
        (f"areas.{code}", (code, a.slug, a.name, *a.aliases)) for code, a in parsed.areas.items()
    ]
    named += [
        (f"countries.{code}", (code, c.name, *c.aliases)) for code, c in parsed.countries.items()
    ]
    for where, names in named:
        for n in names:
            key = normalize(n)
            if key in owner and owner[key] != where:
                problems.append(Problem(label, where, f"name {n!r} also names {owner[key]}"))
            owner.setdefault(key, where)
    for name, r in parsed.regions.items():
        for n in r.aliases:
            if normalize(n) in owner:
                what = f"alias {n!r} already names {owner[normalize(n)]}"
                problems.append(Problem(label, f'regions."{name}".aliases', what))
    return problems


def load_regions(data_dir: Path, problems: list[Problem]) -> RegionIndex:
    """Read regions.toml; an empty index when it is missing or invalid (problems say why).

    A catalog whose providers name no region needs no file; otherwise each region it lacks is
    reported where the provider names it.
    """
    path = data_dir / REGIONS_FILE
    label = _rel(path, data_dir)
    if not path.is_file():
        return RegionIndex()
    raw = _read_toml(path, label, problems)
    parsed = _validate(RegionsFileIn, raw, label, problems) if raw is not None else None
    if parsed is None:
        return RegionIndex()
    problems.extend(_check(parsed, label))
    return RegionIndex(
        areas={
            code: Area(code, a.name, a.slug, a.parent, tuple(a.aliases))
            for code, a in parsed.areas.items()
        },
        countries={
            code: CountryInfo(code, c.name, c.area, tuple(c.aliases))
            for code, c in parsed.countries.items()
        },
        regions={
            name: RegionInfo(name, r.country, r.area, tuple(r.aliases))
            for name, r in parsed.regions.items()
        },
    )


def _countries(
    index: RegionIndex, names: tuple[str, ...], stated: tuple[str, ...]
) -> tuple[str, ...]:
    """Countries of ``names`` (regions.toml's), keeping those the provider file states first."""
    found = [r.country for n in names if (r := index.regions.get(n)) is not None and r.country]
    return tuple(dict.fromkeys((*stated, *found)))


def _places(index: RegionIndex, names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p for n in names for p in index.places_of(n)))


def place_provider(
    provider: Provider,
    stated: dict[str, str],
    index: RegionIndex,
    label: str,
    problems: list[Problem],
) -> Provider:
    """The provider with every region's country and each offer's places filled in.

    ``stated`` maps region names to the country the provider file gives them; each region
    must be in regions.toml with that country (a missing one is an error naming the key).
    """

    def check(names: tuple[str, ...], path: str) -> None:
        for i, name in enumerate(names):
            region = index.regions.get(name)
            if region is None:
                what = f"region {name!r} is not in {REGIONS_FILE}"
                problems.append(Problem(label, f"{path}[{i}]", what))
            elif name in stated and region.country != stated[name]:
                what = (
                    f"region {name!r} is in {stated[name]} here but in "
                    f"{region.country or 'no single country'} in {REGIONS_FILE}"
                )
                problems.append(Problem(label, f"{path}[{i}].country", what))

    check(provider.regions, "location.regions")
    offers: list[Offer] = []
    for o in provider.offers:
        check(o.regions, f"offers[{o.local_id}].regions")
        names = o.regions or provider.regions
        offers.append(
            replace(
                o,
                countries=_countries(index, o.regions, o.countries),
                places=_places(index, names),
            )
        )
    return replace(
        provider,
        countries=_countries(index, provider.regions, provider.countries),
        offers=tuple(offers),
    )
