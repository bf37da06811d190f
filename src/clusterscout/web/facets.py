"""The filter sidebar: one group per offer filter of the fields table, with counts.

Groups, their order, labels and controls come from ``app.fields``; counts hold the other
filters fixed (a checkbox shows how many offers ticking it would leave).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.app import offers
from clusterscout.app.fields import OFFER_FILTERS, Field, Kind, Widget
from clusterscout.app.offers import Tally
from clusterscout.catalog.filters import OfferFilter, SortKey
from clusterscout.domain.messages import N_
from clusterscout.domain.regions import normalize
from clusterscout.web.cells import VALUE_LABELS
from clusterscout.web.i18n import Formatter

Counts = Mapping[Tally, Mapping[str | None, int]]
"""The listing's counts from the fact index (``offers.tallies``), by ask."""

SORT_LABELS: Final = {
    SortKey.PRICE: N_("Price (lowest first)"),
    SortKey.GBPS: N_("Bandwidth per node (highest first)"),
    SortKey.NODES: N_("Cluster size (largest first)"),
    SortKey.PROVIDER: N_("Provider (A–Z)"),
}
_KIND: Final = {
    Widget.SELECT: "select",
    Widget.CHECKBOXES: "checkbox",
    Widget.CHECKBOX: "checkbox",
    Widget.NUMBER: "number",
    Widget.TEXT: "text",
}


@dataclass(frozen=True, slots=True)
class Option:
    """One choice in a facet group."""

    value: str
    label: str
    count: int | None
    checked: bool
    input_id: str
    name: str | None = None
    """The choice without its count, where ``label`` carries one (what a chip shows)."""


@dataclass(frozen=True, slots=True)
class Group:
    """A facet group; ``kind`` is checkbox, select, number or text."""

    name: str
    label: str
    kind: str
    options: tuple[Option, ...] = ()
    value: str = ""
    step: str = "any"
    placeholder: str = ""
    hint: str = ""
    optgroups: tuple[tuple[str, tuple[Option, ...]], ...] = ()
    """Grouped choices of a select (the region select: continent, then its countries)."""


def _opt(name: str, value: str, label: str, count: int | None, checked: bool) -> Option:
    return Option(value, label, count, checked, f"f-{name}-{value}".replace(".", "-"))


def _with(f: OfferFilter, name: str, value: Any) -> OfferFilter:
    """``f`` with one filter set by name (the table's names are OfferFilter's attributes)."""
    changes: dict[str, Any] = {name: value}
    return replace(f, **changes)


def _text(value: Any) -> str:
    """A filter value as the form sends it back."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _choices(
    conn: Connection, fmt: Formatter, field: Field, providers: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """(value, label) pairs of a filter with several values."""
    if field.kind is Kind.GPU:
        return [(g, g) for g in offers.gpu_names(conn)]
    if field.kind is Kind.PROVIDER:
        pairs = ((s, str(p["name"])) for s, p in providers.items())
        return sorted(pairs, key=lambda c: c[1].lower())
    labels = VALUE_LABELS[field.enum] if field.enum else {}
    return [(v, fmt.gettext(labels.get(v, v))) for v in field.values]


def _member_filter(f: OfferFilter, field: Field, member: Any) -> OfferFilter:
    """``f`` with one value of a multi-value filter ticked: alone (any-of) or added (all-of)."""
    current: tuple[Any, ...] = getattr(f, field.name)
    wanted = tuple(dict.fromkeys((*current, member))) if field.all_of else (member,)
    return _with(f, field.name, wanted)


def _asks(f: OfferFilter, field: Field) -> list[Tally]:
    """The counts a field's group shows, named first so one call answers every group."""
    facet = field.facet
    if facet is None:  # pragma: no cover - build_groups passes only rows with a facet
        return []
    if facet.widget is Widget.CHECKBOXES:
        if field.name in offers.COUNTED_COLUMNS:
            return [Tally(_with(f, field.name, ()), field.name)]
        return [Tally(_member_filter(f, field, m)) for m in field.enum or ()]
    if facet.widget is Widget.CHECKBOX:
        return [Tally(_with(f, field.name, True))]
    if field.kind is Kind.REGION:
        return [Tally(_with(f, field.name, None), "place")]
    return []


def _counts(f: OfferFilter, field: Field, values: Sequence[str], counts: Counts) -> dict[str, int]:
    """Offers each value would leave, the field's other values aside (any-of) or added (all-of)."""
    if field.name in offers.COUNTED_COLUMNS:
        found = counts[Tally(_with(f, field.name, ()), field.name)]
        return {v: found.get(v, 0) for v in values}
    out = {
        m.value: counts[Tally(_member_filter(f, field, m))].get(None, 0) for m in field.enum or ()
    }
    return {v: out.get(v, 0) for v in values}


def _region_group(
    conn: Connection, fmt: Formatter, f: OfferFilter, field: Field, tallied: Counts
) -> Group:
    """Continents with offers, each with "all of it" and its countries, with offer counts."""
    _ = fmt.gettext
    index = offers.region_index(conn)
    counts = tallied[Tally(_with(f, field.name, None), "place")]
    current = _text(f.region)
    names = fmt.locale.territories

    def opt(value: str, label: str, count: int) -> Option:
        text = f"{label} ({fmt.number(count)})"
        return replace(_opt(field.name, value, text, count, value == current), name=label)

    groups: list[tuple[str, tuple[Option, ...]]] = []
    seen = {""}
    for code, area in index.areas.items():
        if area.parent is not None or not counts.get(code):
            continue
        title = str(names.get(code, area.name))
        members = [opt(area.slug, _("%(area)s: all countries") % {"area": title}, counts[code])]
        countries = [
            (str(names.get(c, c)), c)
            for c in index.countries
            if counts.get(c) and index.continent_of(c) == code
        ]
        # Sorted without accents, so "Índia" sits with the I's.
        countries.sort(key=lambda pair: normalize(pair[0]))
        members += [opt(c, label, counts[c]) for label, c in countries]
        seen.update(o.value for o in members)
        groups.append((title, tuple(members)))
    first = [_opt(field.name, "", _(field.facet.empty if field.facet else ""), None, not current)]
    if current not in seen:
        # A value typed in the URL or the API (a city, part of a region name) stays selected.
        first.append(_opt(field.name, current, current, None, True))
    return Group(field.name, _(field.label), "select", tuple(first), optgroups=tuple(groups))


def _group(
    conn: Connection,
    fmt: Formatter,
    f: OfferFilter,
    field: Field,
    providers: Mapping[str, Mapping[str, Any]],
    counts: Counts,
) -> Group:
    facet = field.facet
    if facet is None:  # pragma: no cover - build_groups passes only rows with a facet
        msg = f"{field.name} has no facet"
        raise ValueError(msg)
    _ = fmt.gettext
    name, label, value = field.name, _(field.label), getattr(f, field.name)
    hint = _(facet.hint) if facet.hint else ""
    if facet.widget is Widget.CHECKBOXES:
        choices = _choices(conn, fmt, field, providers)
        shown = _counts(f, field, [v for v, _t in choices], counts)
        selected = {_text(v) for v in value}
        options = tuple(_opt(name, v, t, shown.get(v, 0), v in selected) for v, t in choices)
        return Group(name, label, "checkbox", options, hint=hint)
    if facet.widget is Widget.CHECKBOX:
        count = counts[Tally(_with(f, name, True))].get(None, 0)
        option = _opt(name, "true", _(facet.option_label), count, value is True)
        return Group(name, label, "checkbox", (option,), hint=hint)
    if field.kind is Kind.REGION:
        return _region_group(conn, fmt, f, field, counts)
    if facet.widget is Widget.SELECT:
        # Select options carry no count: a <select> cannot show one (checkbox groups do), so
        # counting would cost a query per option on every page for nothing.
        current = _text(value)
        pairs: list[tuple[str, str]] = [("", _(facet.empty))]
        if field.kind is Kind.BOOL:
            pairs += [("true", _("yes")), ("false", _("no"))]
        elif facet.suggestions:
            numbers = list(facet.suggestions)
            if value is not None and value not in numbers:
                numbers.append(value)
            pairs += [
                (_text(float(n)), _(facet.option_label) % {"num": fmt.number(n)}) for n in numbers
            ]
        else:
            pairs += _choices(conn, fmt, field, providers)
        options = tuple(_opt(name, v, t, None, v == current) for v, t in pairs)
        return Group(name, label, "select", options, hint=hint)
    placeholder = _(facet.placeholder) if facet.placeholder else ""
    return Group(
        name,
        label,
        _KIND[facet.widget],
        value=_text(value),
        step=facet.step,
        placeholder=placeholder,
        hint=hint,
    )


def build_groups(
    conn: Connection,
    fmt: Formatter,
    f: OfferFilter,
    sort: SortKey,
    providers: Mapping[str, Mapping[str, Any]],
    *,
    all_offers: bool,
) -> list[Group]:
    """Facet groups for the current filter ``f``, in the table's order, then the sort."""
    fields = [
        field
        for field in OFFER_FILTERS
        if field.facet is not None and (all_offers or not field.facet.all_offers_only)
    ]
    asks = [ask for field in fields for ask in _asks(f, field)]
    counts = dict(zip(asks, offers.tallies(conn, asks), strict=True))
    groups = [_group(conn, fmt, f, field, providers, counts) for field in fields]
    sort_options = tuple(
        _opt("sort", k.value, fmt.gettext(SORT_LABELS[k]), None, k is sort) for k in SORT_LABELS
    )
    groups.append(Group("sort", fmt.gettext("Sort by"), "select", sort_options))
    return groups
