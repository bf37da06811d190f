"""Active filters as removable chips, each with its count and the offers its unknowns hide."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from clusterscout.catalog.filters import OfferFilter, SortKey, Unknowable
from clusterscout.web import params
from clusterscout.web.facets import Group
from clusterscout.web.i18n import Formatter

Counter = Callable[[Sequence[OfferFilter]], list[int]]
"""How many offers match each filter, in order (one query for all)."""


@dataclass(frozen=True, slots=True)
class Chip:
    """One active filter: what it is, how to drop it and what unknowns it hides."""

    label: str
    value: str
    remove_href: str
    remove_text: str
    """Accessible text of the remove link, with the count it would give."""
    unknown_href: str | None = None
    """Adds the offers whose fact is unknown (None: none hidden, or already included)."""
    unknown_text: str | None = None
    included_href: str | None = None
    """Drops the offers with unknown facts again (None: they are not included)."""


@dataclass(frozen=True, slots=True)
class Unknowns:
    """The results header's line: how many offers unknowns hide in all, and the one click."""

    count: int
    text: str
    href: str


def _href(f: OfferFilter, sort: SortKey, drop: Sequence[str]) -> str:
    return params.query_string(params.canonical_pairs(f, sort, drop=drop)) or "?"


def _cleared(f: OfferFilter, name: str) -> OfferFilter:
    empty: Any = () if isinstance(getattr(f, name), tuple) else None
    return replace(f, **{name: empty})


def build(
    fmt: Formatter,
    f: OfferFilter,
    sort: SortKey,
    groups: Sequence[Group],
    count: int,
    counter: Counter,
    drop: Sequence[str] = (),
) -> tuple[list[Chip], Unknowns | None]:
    """Chips for the set filters shown in ``groups``, and the total that unknowns hide.

    ``count`` is the current result count; ``drop`` names filters fixed by the page (they get
    no chip and stay out of links). Every count the chips show is asked of ``counter`` at once.
    """
    unknowable = {u.value: u for u in Unknowable}
    shown = [
        g
        for g in groups
        if g.name not in drop and g.name in {*unknowable, *_NAMES} and f.active(g.name)
    ]
    # Per chip: the filter without it, and the one adding its unknowns (None: none to add).
    hidden = [
        u for g in shown if (u := unknowable.get(g.name)) is not None and not f.lets_unknown(u)
    ]
    looser = {u: replace(f, include_unknown=(*f.include_unknown, u)) for u in hidden}
    everything = replace(f, include_unknown=(*f.include_unknown, *hidden))
    asked = [
        *(_cleared(f, g.name) for g in shown),
        *looser.values(),
        *([everything] if hidden else []),
    ]
    counts = dict(zip(asked, counter(asked), strict=True))
    chips: list[Chip] = []
    for g in shown:
        # A grouped select (regions) keeps its choices in optgroups; chips name them in words.
        choices = [*g.options, *(o for _, members in g.optgroups for o in members)]
        picked = [o.name or o.label for o in choices if o.checked and o.value] or [g.value]
        without = counts[_cleared(f, g.name)]
        remove_text = fmt.ngettext(
            "Remove this filter: %(num)s offer", "Remove this filter: %(num)s offers", without
        ) % {"num": fmt.number(without)}
        chip = Chip(g.label, ", ".join(picked), _href(_cleared(f, g.name), sort, drop), remove_text)
        u = unknowable.get(g.name)
        if u is not None and f.lets_unknown(u):
            tighter = replace(f, include_unknown=tuple(x for x in f.include_unknown if x is not u))
            chip = replace(chip, included_href=_href(tighter, sort, drop))
        elif u is not None:
            extra = counts[looser[u]] - count
            if extra > 0:
                text = fmt.ngettext(
                    "+%(num)s where this is unknown", "+%(num)s where this is unknown", extra
                ) % {"num": fmt.number(extra)}
                chip = replace(chip, unknown_href=_href(looser[u], sort, drop), unknown_text=text)
        chips.append(chip)
    # Together the unknowns can add offers that no single filter's unknowns add (an offer
    # that hides behind two filters), so the header counts them all at once.
    extra = counts[everything] - count if hidden else 0
    if extra <= 0:
        return chips, None
    text = fmt.ngettext(
        "%(num)s more offer where a filtered fact is unknown",
        "%(num)s more offers where a filtered fact is unknown",
        extra,
    ) % {"num": fmt.number(extra)}
    return chips, Unknowns(extra, text, _href(everything, sort, drop))


_NAMES = frozenset({"gpu", "provider", "multi_node"})
"""Filters that are never unknown but still get a chip."""
