"""Regions as data: provider region -> country -> UN M49 area, and what a typed place means.

A *place* is a key an offer is in: ``r:<region>`` for a named provider region, an ISO 3166-1
alpha-2 code (``BR``) for its country, and three-digit UN M49 codes (``005``, ``419``, ``019``)
for the areas that country belongs to. The region filter resolves what someone typed
(``sao paulo``, ``brazil``, ``europe``, ``us-east``) to a set of places once; an offer matches
when it is in any of them. SQL (``store.queries``) and the pure predicate
(``catalog.filters.matches``) compare the same sets.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

REGION_PREFIX: Final = "r:"


def normalize(text: str) -> str:
    """Lower case, accents dropped, every run of other characters one dash.

    >>> normalize("São Paulo"), normalize("us-east (us-east-3)"), normalize("  Atlanta, GA ")
    ('sao-paulo', 'us-east-us-east-3', 'atlanta-ga')
    """
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in plain if not unicodedata.combining(c)).lower()
    return re.sub(r"[^a-z0-9]+", "-", plain).strip("-")


def region_place(name: str) -> str:
    """The place key of a provider region name."""
    return REGION_PREFIX + normalize(name)


@dataclass(frozen=True, slots=True)
class Area:
    """A UN M49 region or sub-region (``150`` Europe, ``155`` Western Europe)."""

    code: str
    name: str
    slug: str
    parent: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Country:
    """A country by ISO 3166-1 alpha-2 code, in the M49 area ``area`` (its smallest one)."""

    code: str
    name: str
    area: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Region:
    """A region name used in a provider file: its country, else only the area it is in."""

    name: str
    country: str | None = None
    area: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RegionScope:
    """What a ``region=`` value means: a canonical key and the places it covers."""

    key: str
    places: frozenset[str]

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True, slots=True)
class RegionIndex:
    """Areas, countries and provider regions, and the look-up of typed names."""

    areas: Mapping[str, Area] = field(default_factory=dict)
    countries: Mapping[str, Country] = field(default_factory=dict)
    regions: Mapping[str, Region] = field(default_factory=dict)

    def area_chain(self, code: str | None) -> tuple[str, ...]:
        """``code`` and every area above it (smallest first)."""
        out: list[str] = []
        while code is not None and code in self.areas and code not in out:
            out.append(code)
            code = self.areas[code].parent
        return tuple(out)

    def continent_of(self, country: str) -> str | None:
        """The top-level M49 area (continent) of a country, or None when it is not listed."""
        c = self.countries.get(country)
        chain = self.area_chain(c.area) if c else ()
        return chain[-1] if chain else None

    def places_of(self, name: str) -> tuple[str, ...]:
        """Place keys of a provider region: itself, its country, the areas above (else ())."""
        region = self.regions.get(name)
        if region is None:
            return ()
        out = [region_place(name)]
        if region.country is not None:
            out.append(region.country)
            country = self.countries.get(region.country)
            out.extend(self.area_chain(country.area if country else None))
        else:
            out.extend(self.area_chain(region.area))
        return tuple(dict.fromkeys(out))

    def names(self) -> dict[str, RegionScope]:
        """Every exact name that resolves, normalized, to its scope.

        Areas first, then countries, then provider regions: a country code wins over a region
        named like one (``CA`` is Canada, not California).
        """
        out: dict[str, RegionScope] = {}

        def put(names: Iterable[str], scope: RegionScope) -> None:
            for n in names:
                out.setdefault(normalize(n), scope)

        for a in self.areas.values():
            put((a.slug, a.code, a.name, *a.aliases), RegionScope(a.slug, frozenset({a.code})))
        for c in self.countries.values():
            put((c.code, c.name, *c.aliases), RegionScope(c.code, frozenset({c.code})))
        by_alias: dict[str, set[str]] = {}
        for r in self.regions.values():
            for n in (r.name, *r.aliases):
                by_alias.setdefault(normalize(n), set()).add(region_place(r.name))
        for key, places in sorted(by_alias.items()):
            out.setdefault(key, RegionScope(key, frozenset(places)))
        return out

    def resolve(self, text: str) -> RegionScope | None:
        """The scope ``text`` names, else the regions whose name contains it, else None.

        >>> idx = RegionIndex(
        ...     {"150": Area("150", "Europe", "europe")},
        ...     {"DE": Country("DE", "Germany", "150", ("deutschland",))},
        ...     {"eu-de-2": Region("eu-de-2", "DE", aliases=("frankfurt",))})
        >>> [str(idx.resolve(t)) for t in ("Europe", "Deutschland", "Frankfurt", "eu-de")]
        ['europe', 'DE', 'frankfurt', 'eu-de']
        >>> sorted(idx.resolve("europe").places), idx.resolve("asia")
        (['150'], None)
        """
        key = normalize(text)
        if not key:
            return None
        exact = self.names().get(key)
        if exact is not None:
            return exact
        # docs/design.md's region filter is a substring match: keep it for region names.
        places = {
            region_place(r.name)
            for r in self.regions.values()
            if any(key in normalize(n) for n in (r.name, *r.aliases))
        }
        return RegionScope(key, frozenset(places)) if places else None

    def examples(self) -> tuple[str, ...]:
        """A few values the filter accepts, for error messages and docs."""
        out = [a.slug for a in self.areas.values() if a.parent is None][:3]
        out += list(self.countries)[:2]
        out += [c.name.lower() for c in list(self.countries.values())[:1]]
        out += [a for r in self.regions.values() for a in r.aliases][:2]
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form, stored with the build so requests resolve names without data/."""
        return {
            "areas": [
                [a.code, a.name, a.slug, a.parent, list(a.aliases)] for a in self.areas.values()
            ],
            "countries": [
                [c.code, c.name, c.area, list(c.aliases)] for c in self.countries.values()
            ],
            "regions": [
                [r.name, r.country, r.area, list(r.aliases)] for r in self.regions.values()
            ],
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> RegionIndex:
        """The inverse of ``to_json``."""
        areas = {a[0]: Area(a[0], a[1], a[2], a[3], tuple(a[4])) for a in raw.get("areas", ())}
        countries = {c[0]: Country(c[0], c[1], c[2], tuple(c[3])) for c in raw.get("countries", ())}
        regions = {r[0]: Region(r[0], r[1], r[2], tuple(r[3])) for r in raw.get("regions", ())}
        return cls(areas, countries, regions)
