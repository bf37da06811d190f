"""Query strings to filter parameters and back: one parser (app.offers.find_offers), one URL form.

The filters themselves are parsed by ``app.offers.find_offers`` (the one parser shared with the
CLI); this module only separates paging/sorting from filters and builds canonical URLs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlencode

from clusterscout.catalog.filters import OfferFilter, SortKey
from clusterscout.domain.errors import InputError

DEFAULT_SORT: Final = SortKey.PRICE
API_DEFAULT_LIMIT: Final = 100
API_MAX_LIMIT: Final = 1000
MAX_OFFSET: Final = 1_000_000
PAGE_SIZE: Final = 50
MAX_PAGE: Final = 10_000


@dataclass(frozen=True, slots=True)
class RawQuery:
    """Repeated query values split into filters (incl. sort) and paging parameters."""

    filters: dict[str, list[str]]
    paging: dict[str, list[str]]


def split(pairs: Iterable[tuple[str, str]], paging_names: Sequence[str]) -> RawQuery:
    """Group ``pairs`` by name; names in ``paging_names`` go to ``paging``."""
    filters: dict[str, list[str]] = {}
    paging: dict[str, list[str]] = {}
    for key, value in pairs:
        target = paging if key in paging_names else filters
        target.setdefault(key, []).append(value)
    return RawQuery(filters, paging)


def int_param(
    paging: Mapping[str, Sequence[str]], name: str, default: int, low: int, high: int
) -> int:
    """One integer parameter within ``[low, high]``.

    Raises:
        InputError: naming the parameter when it is repeated, not an integer or out of range.
    """
    values = [v for v in paging.get(name, []) if v.strip()]
    if not values:
        return default
    if len(values) > 1:
        raise InputError(name, "may be given only once")
    raw = values[0].strip()
    if not raw.isascii() or not raw.lstrip("-").isdigit() or len(raw) > 12:
        raise InputError(name, f"{raw[:40]!r} is not a whole number")
    value = int(raw)
    if not low <= value <= high:
        raise InputError(name, f"must be between {low} and {high}")
    return value


def canonical_pairs(
    f: OfferFilter,
    sort: SortKey,
    *,
    page: int = 1,
    drop: Sequence[str] = (),
) -> list[tuple[str, str]]:
    """Sorted, normalised parameters that reproduce this view; defaults are left out."""
    pairs = [(k, v) for k, v in f.to_params() if k not in drop]
    if sort is not DEFAULT_SORT:
        pairs.append(("sort", sort.value))
    if page > 1:
        pairs.append(("page", str(page)))
    return sorted(pairs)


def query_string(pairs: Sequence[tuple[str, str]]) -> str:
    """``?a=1&b=2``, or the empty string when there is nothing to encode."""
    return "?" + urlencode(list(pairs)) if pairs else ""
