"""The faceted offer list behind ``/{lang}/multi-node/`` and ``/{lang}/offers/``."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from markupsafe import Markup
from starlette.requests import Request

from clusterscout.app import offers
from clusterscout.app.insights import ReferenceWorkload
from clusterscout.app.offers import Tally
from clusterscout.catalog.filters import OfferFilter, SortKey
from clusterscout.web import chips, facets, params, reference, viewmodels
from clusterscout.web.chips import Chip, Unknowns
from clusterscout.web.i18n import Formatter
from clusterscout.web.runtime import AppState, reading, snapshot_of, state_of
from clusterscout.web.viewmodels import OfferRow, offer_row


@dataclass(frozen=True, slots=True)
class SortLink:
    """A column header that re-sorts the table."""

    href: str
    active: bool


@dataclass(frozen=True, slots=True)
class Listing:
    """Everything the results region shows."""

    filter: OfferFilter
    sort: SortKey
    page: int
    count: int
    count_text: str
    show_text: str
    """The filter drawer's button: "Show 12 results"."""
    rows: list[OfferRow]
    groups: list[facets.Group]
    active: list[Chip]
    unknowns: Unknowns | None
    canonical_query: str
    reset_href: str
    prev_href: str | None
    next_href: str | None
    page_text: str
    csv_href: str
    json_href: str
    sort_links: dict[str, SortLink]
    ref_label: str | None = None
    rows_html: list[Markup] | None = None
    """``rows`` already rendered, in order (None: the template renders them)."""
    compare_top_href: str | None = None
    """The first three offers of this view on the offer comparison (None: fewer than two)."""


def _page_href(pairs: list[tuple[str, str]], page: int) -> str:
    base = [(k, v) for k, v in pairs if k != "page"]
    if page > 1:
        base.append(("page", str(page)))
    return params.query_string(sorted(base))


def _sort_links(pairs: list[tuple[str, str]], sort: SortKey) -> dict[str, SortLink]:
    base = [(k, v) for k, v in pairs if k not in {"sort", "page"}]
    out = {}
    for key in SortKey:
        extra = [] if key is params.DEFAULT_SORT else [("sort", key.value)]
        out[key.value] = SortLink(params.query_string(sorted(base + extra)), key is sort)
    return out


def build(request: Request, fmt: Formatter, *, all_offers: bool) -> Listing:
    """Parse the query through the one filter parser, run the query, shape the results.

    Raises:
        InputError: for any filter, sort or page value that cannot be understood.
    """
    st = state_of(request)
    raw = params.split(request.query_params.multi_items(), ("page", reference.PARAM))
    page = params.int_param(raw.paging, "page", 1, 1, params.MAX_PAGE)
    ref = reference.parse(raw.paging.get(reference.PARAM, []))
    filters = raw.filters
    if not all_offers:
        filters = {**filters, "multi_node": ["true"]}
    size = params.PAGE_SIZE
    providers = st.providers_in(snapshot_of(request), fmt.lang)
    with reading(request) as conn:
        f, sort, result = offers.find_offers(conn, filters, size, (page - 1) * size)
        groups = facets.build_groups(conn, fmt, f, sort, providers, all_offers=all_offers)
        drop = () if all_offers else ("multi_node",)
        active, unknowns = chips.build(
            fmt,
            f,
            sort,
            groups,
            result.count,
            lambda fs: [t.get(None, 0) for t in offers.tallies(conn, [Tally(x) for x in fs])],
            drop,
        )
    pairs = params.canonical_pairs(f, sort, page=page, drop=drop)
    if ref is not None:
        pairs = sorted([*pairs, (reference.PARAM, ref.key)])
    tier = f.price_tier.value if f.price_tier else None
    rows, rows_html = _kept_rows(st, request, fmt, result.records, providers, tier, ref)
    groups.append(
        facets.Group(
            reference.PARAM,
            fmt.gettext("Reference workload"),
            "select",
            tuple(
                facets.Option(v, text, None, ref is not None and ref.key == v, f"f-ref-{v}")
                for v, text in reference.choices(fmt)
            ),
            hint=fmt.gettext("Adds predicted scaling efficiency and effective price."),
        )
    )
    api_pairs = params.canonical_pairs(f, sort)
    last_page = max(1, -(-result.count // size))
    return Listing(
        filter=f,
        sort=sort,
        page=page,
        count=result.count,
        count_text=fmt.ngettext("%(num)s offer", "%(num)s offers", result.count)
        % {"num": fmt.number(result.count)},
        show_text=fmt.ngettext("Show %(num)s result", "Show %(num)s results", result.count)
        % {"num": fmt.number(result.count)},
        rows=rows,
        groups=groups,
        active=active,
        unknowns=unknowns,
        canonical_query=params.query_string(pairs),
        reset_href="?",
        prev_href=_page_href(pairs, page - 1) or "?" if page > 1 else None,
        next_href=_page_href(pairs, page + 1) if page < last_page else None,
        page_text=fmt.gettext("Page %(page)s of %(pages)s")
        % {"page": fmt.number(page), "pages": fmt.number(last_page)},
        csv_href="/api/v1/offers.csv" + params.query_string(api_pairs),
        json_href="/api/v1/offers" + params.query_string(api_pairs),
        sort_links=_sort_links(pairs, sort),
        ref_label=reference.label(fmt, ref) if ref is not None else None,
        rows_html=rows_html,
        compare_top_href=_compare_top(fmt.lang, result.records, f.min_nodes),
    )


COMPARE_TOP = 3
"""How many of a list's first offers its "compare the top" link takes."""


def _compare_top(lang: str, records: Sequence[Mapping[str, Any]], nodes: int | None) -> str | None:
    """A link comparing the view's first offers; a ``min_nodes`` filter carries on as the
    launch files' node count (the cluster the buyer asked for)."""
    if len(records) < 2:
        return None
    pairs = [("o", str(r["id"])) for r in records[:COMPARE_TOP]]
    if nodes:
        pairs.append(("nodes", str(nodes)))
    return f"/{lang}/compare/offers/" + params.query_string(pairs)


def _kept_rows(
    st: AppState,
    request: Request,
    fmt: Formatter,
    records: Sequence[Mapping[str, Any]],
    providers: Mapping[str, Mapping[str, Any]],
    tier: str | None,
    ref: ReferenceWorkload | None,
) -> tuple[list[OfferRow], list[Markup]]:
    """Each record's table row and its HTML, built once per data version, language, price
    tier, day (staleness badges count days) and reference workload, then kept.

    Why: filters change which rows a listing shows, not what a row says, and building and
    rendering about fifty rows with every fact's sources was most of an uncached page's time
    (about 35 ms with a reference workload's columns).
    """
    snap = snapshot_of(request)
    day = viewmodels.today().isoformat()
    row_macro = st.envs[fmt.lang].get_template("_macros.html").module.offer_row  # type: ignore[attr-defined]
    ref_label = reference.label(fmt, ref) if ref is not None else None

    def build(record: Mapping[str, Any]) -> tuple[OfferRow, Markup]:
        localized = fmt.catalog.localize(record)
        row = offer_row(
            fmt, localized, providers.get(record["provider"]), st.settings.stale_after_days, tier
        )
        if ref is not None:
            found = reference.estimate(st, snap, ref, record, tier)
            row = replace(
                row,
                efficiency=reference.efficiency_cell(fmt, found),
                effective=reference.effective_cell(fmt, found),
            )
        # A macro of an autoescaping environment returns Markup: escaped once, when rendered.
        html: Markup = row_macro(row, True, ref_label)
        return row, html

    ref_key = ref.key if ref is not None else None
    kept = [
        st.rows.get(
            (snap.data_version, fmt.lang, record["id"], tier, day, ref_key),
            functools.partial(build, record),
        )
        for record in records
    ]
    return [row for row, _html in kept], [html for _row, html in kept]


def needs_redirect(request: Request, listing: Listing) -> bool:
    """True when a plain (non-htmx) request's query string is not the canonical one."""
    if request.headers.get("hx-request"):
        return False
    current = request.url.query
    return ("?" + current if current else "") != listing.canonical_query


def context(listing: Listing) -> dict[str, Any]:
    """Template variables for the results region and the filter form."""
    return {"listing": listing}
