"""HTML routes (DESIGN section 4): thin handlers that parse, query, shape and render."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any, Final

from fastapi import APIRouter, Path, Request
from starlette.responses import RedirectResponse, Response

from clusterscout.app import directory, offers, prices, quote_service, quotes
from clusterscout.app.insights import ReferenceWorkload
from clusterscout.catalog.directory import DirectorySort
from clusterscout.catalog.filters import OfferFilter
from clusterscout.catalog.rates import load_rates
from clusterscout.domain.errors import InputError
from clusterscout.model.planner.request import MAX_PLAN_NODES
from clusterscout.web import (
    compare_offers_view,
    compare_view,
    content,
    directory_view,
    fabric_view,
    launch_view,
    listing,
    params,
    price_history,
    ratings_view,
    reference,
    seo,
    viewmodels,
)
from clusterscout.web.api_error import ApiError
from clusterscout.web.cells import MULTI_NODE_LABELS
from clusterscout.web.i18n import Formatter, negotiate
from clusterscout.web.pages_common import Lang, base_context, known_lang, render_html
from clusterscout.web.runtime import reading, reads_local_db, snapshot_of, state_of
from clusterscout.web.scorecard import CompareSection, compare_sections, scorecard, thin_claim
from clusterscout.web.viewmodels import OfferRow, offer_rows

router = APIRouter(include_in_schema=False)
_lang = known_lang
_html = render_html


@router.get("/")
def root(request: Request) -> Response:
    """Send visitors to their language (``Accept-Language``, default English)."""
    lang = negotiate(request.headers.get("accept-language"))
    return RedirectResponse(f"/{lang}/", status_code=302, headers={"Vary": "Accept-Language"})


@router.get("/{lang}/")
@reads_local_db
def home(request: Request, lang: Lang) -> Response:
    """Entry points and catalog figures."""
    lang = _lang(lang)
    st = state_of(request)
    providers = st.providers(snapshot_of(request))
    with reading(request) as conn:
        total = offers.count_offers(conn, OfferFilter())
        multi = offers.count_offers(conn, OfferFilter(multi_node=True))
    fmt = st.formatter(snapshot_of(request), lang)
    ctx = base_context(request, lang, "", section="home")
    ctx["quote_href"] = f"/{lang}/quote/?gpus=64&months=6"
    ctx["stats"] = {
        "providers": fmt.number(len(providers)),
        "multi_node_providers": fmt.number(
            sum(1 for p in providers.values() if p["multi_node"] == "yes")
        ),
        "offers": fmt.number(total),
        "multi_node_offers": fmt.number(multi),
    }
    return _html(request, lang, "pages/home.html", ctx)


def _listing_page(request: Request, lang: str, *, all_offers: bool) -> Response:
    lang = _lang(lang)
    fmt = state_of(request).formatter(snapshot_of(request), lang)
    result = listing.build(request, fmt, all_offers=all_offers)
    tail = "offers/" if all_offers else "multi-node/"
    if listing.needs_redirect(request, result):
        return RedirectResponse(f"/{lang}/{tail}{result.canonical_query}", status_code=302)
    ctx = base_context(
        request, lang, tail, result.canonical_query, section="offers" if all_offers else "multi"
    )
    ctx.update(listing.context(result))
    ctx["all_offers"] = all_offers
    gpus = result.filter.gpu
    # One GPU chosen: the title names it, as a search for that GPU would.
    ctx["gpu_title"] = gpus[0] if len(gpus) == 1 else None
    ctx["form_action"] = f"/{lang}/{tail}"
    if request.headers.get("hx-request") and not request.headers.get("hx-history-restore-request"):
        response = _html(request, lang, "partials/results_oob.html", ctx)
        response.headers["HX-Push-Url"] = f"/{lang}/{tail}{result.canonical_query}"
        return response
    if not all_offers:
        guide = content.load("guides", "multi-node", lang)
        faq = content.load("faq", "multi-node", lang)
        ctx["guide"] = guide
        ctx["faq"] = faq
        ctx["faq_jsonld"] = seo.script_json(content.faq_jsonld(faq)) if faq else ""
    name = (
        fmt.gettext("All GPU cluster offers")
        if all_offers
        else fmt.gettext("Cloud GPU providers with multi-node GPU clusters")
    )
    ctx["list_jsonld"] = seo.script_json(
        seo.item_list(ctx["origin"], name, result.rows, ctx["canonical"])
    )
    template = "pages/offers.html" if all_offers else "pages/multi_node.html"
    return _html(request, lang, template, ctx)


@router.get("/{lang}/multi-node/")
@reads_local_db
def multi_node(request: Request, lang: Lang) -> Response:
    """The page of the brief: multi-node offers, facets, the guide and the FAQ."""
    return _listing_page(request, lang, all_offers=False)


@router.get("/{lang}/offers/")
@reads_local_db
def all_offers(request: Request, lang: Lang) -> Response:
    """Every offer, faceted."""
    return _listing_page(request, lang, all_offers=True)


@router.get("/{lang}/providers/")
@reads_local_db
def providers_directory(request: Request, lang: Lang) -> Response:
    """Every provider, filtered (multi-node yes/no/unknown, fabric, rating, region, checklist)."""
    lang = _lang(lang)
    fmt = state_of(request).formatter(snapshot_of(request), lang)
    asked: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        if value.strip():
            asked.setdefault(key, []).append(value)
    with reading(request) as conn:
        found = directory.directory(conn, asked)
    query = params.query_string(found.params())
    if "?" + request.url.query != query and request.url.query:
        return RedirectResponse(f"/{lang}/providers/{query}", status_code=302)
    ctx = base_context(request, lang, "providers/", query, section="directory")
    region = found.filter.region
    ctx.update(
        found=found,
        rows=directory_view.rows(fmt, found),
        groups=directory_view.groups(fmt, found),
        sorts=directory_view.sort_choices(fmt, found),
        sort_links={k.value: directory_view.sort_link(lang, found, k) for k in DirectorySort},
        region=region.key if region is not None else "",
        filtered=bool(found.params()),
        json_href="/api/v1/providers" + query,
    )
    return _html(request, lang, "pages/providers.html", ctx)


@router.get("/{lang}/providers/{slug}/")
@reads_local_db
def provider(request: Request, lang: Lang, slug: Annotated[str, Path(max_length=200)]) -> Response:
    """A provider's checklist scorecard, offers and prices."""
    lang = _lang(lang)
    st = state_of(request)
    nodes = _launch_nodes(request.query_params.getlist("nodes"))
    with reading(request) as conn:
        record = offers.provider(conn, slug)
        if record is None:
            raise ApiError(404, "not_found", "unknown provider", "slug")
        stale_after = st.settings.stale_after_days
        day = viewmodels.today()
        offers.mark_freshness([record], stale_after, day)
        views = [prices.history(conn, o["id"], day, stale_after) for o in record["offers"]]
        editions = offers.rating_editions(conn)
    fmt = st.formatter(snapshot_of(request), lang)
    record, views = fmt.catalog.localize(record), fmt.catalog.localize(views)
    ctx = base_context(request, lang, f"providers/{slug}/", section="providers")
    dimensions = scorecard(fmt, record)
    known = sum(d.known for d in dimensions)
    total = sum(len(d.facts) for d in dimensions)
    priced = [v is not None and bool(v["observations"]) for v in views]
    ctx.update(
        provider=record,
        multi_node_text=fmt.gettext(MULTI_NODE_LABELS.get(record["multi_node"], "unknown")),
        facts_known=fmt.gettext("Checklist facts known: %(known)s of %(total)s.")
        % {"known": fmt.number(known), "total": fmt.number(total)},
        thin_evidence=thin_claim(record["multi_node"], known, total),
        dimensions=dimensions,
        ratings=ratings_view.rating_rows(fmt, record, editions),
        rows=offer_rows(fmt, record["offers"], {slug: record}, stale_after),
        measured=fabric_view.measured_rows(fmt, record["offers"]),
        launch_offers=launch_view.provider_offers(
            fmt, st, snapshot_of(request), record["offers"], nodes
        ),
        launch_nodes=nodes,
        max_launch_nodes=MAX_PLAN_NODES,
        # No chart without an observation: an empty axis says nothing and reads as data.
        histories=[
            price_history.offer_history(fmt, slug, o, v)
            for o, v, p in zip(record["offers"], views, priced, strict=True)
            if v is not None and p
        ],
        unpriced=fmt.join(
            [
                str(o.get("name") or o["id"])
                for o, p in zip(record["offers"], priced, strict=True)
                if not p
            ]
        ),
        json_href=f"/api/v1/providers/{slug}",
        org_jsonld=seo.script_json(
            seo.organization(
                record,
                ctx["canonical"],
                fmt.gettext(
                    "%(name)s on the multi-node checklist: network, topology, orchestration, "
                    "provisioning, billing and storage, with sources."
                )
                % {"name": record["name"]},
            )
        ),
        history_intro=fmt.ngettext(
            "Every price we have observed for each offer. "
            "Prices older than %(num)s day are marked stale.",
            "Every price we have observed for each offer. "
            "Prices older than %(num)s days are marked stale.",
            stale_after,
        )
        % {"num": fmt.number(stale_after)},
    )
    return _html(request, lang, "pages/provider.html", ctx)


@router.get("/{lang}/compare/offers/")
@reads_local_db
def compare_offers(request: Request, lang: Lang) -> Response:
    """Up to six offers side by side (``o=ID``, repeatable), prices by tier with their dates;
    ``nodes`` carries a node count to the launch-file links."""
    lang = _lang(lang)
    st = state_of(request)
    fmt = st.formatter(snapshot_of(request), lang)
    unknown_params = sorted(set(request.query_params) - {"o", "nodes"})
    if unknown_params:
        raise InputError(unknown_params[0], "unknown parameter (known: o, nodes)")
    nodes = _launch_nodes(request.query_params.getlist("nodes"))
    ids = request.query_params.getlist("o")
    stale_after = st.settings.stale_after_days
    records: list[dict[str, Any]] = []
    if any(i.strip() for i in ids):
        with reading(request) as conn:
            records = offers.compare_offer_records(conn, ids)
        offers.mark_freshness(records, stale_after, viewmodels.today())
    records = fmt.catalog.localize(records)
    pairs = [("o", str(r["id"])) for r in records]
    if nodes and records:
        pairs.append(("nodes", str(nodes)))
    ctx = base_context(
        request, lang, "compare/offers/", params.query_string(pairs), section="compare"
    )
    providers = st.providers_in(snapshot_of(request), lang)
    cols = compare_offers_view.columns(fmt, records, providers, stale_after, nodes)
    ctx.update(
        columns=cols,
        lines=compare_offers_view.lines(fmt, records, cols, stale_after),
        max_offers=offers.MAX_COMPARED_OFFERS,
        nodes=nodes,
    )
    return _html(request, lang, "pages/compare_offers.html", ctx)


def _launch_nodes(values: list[str]) -> int | None:
    """The provider page's ``nodes`` (launch files for that many nodes), or None: the default.

    Raises:
        InputError: when it is repeated or not a whole number from 1 to ``MAX_PLAN_NODES``.
    """
    values = [v.strip() for v in values if v.strip()]
    if not values:
        return None
    if len(values) > 1:
        raise InputError("nodes", "may be given only once")
    if not values[0].isdigit() or not 1 <= int(values[0]) <= MAX_PLAN_NODES:
        raise InputError("nodes", f"must be a whole number from 1 to {MAX_PLAN_NODES}")
    return int(values[0])


@router.get("/{lang}/compare/")
@reads_local_db
def compare(request: Request, lang: Lang) -> Response:
    """Two to four providers side by side on the checklist; a picker when none are given.

    With ``ref=...`` their offers are listed with the reference workload's predicted scaling
    efficiency and effective price.
    """
    lang = _lang(lang)
    st = state_of(request)
    fmt = st.formatter(snapshot_of(request), lang)
    unknown_params = sorted(set(request.query_params) - {"p", reference.PARAM, *QUOTE_PARAMS})
    if unknown_params:
        raise ApiError(400, "unknown_parameter", "unknown parameter", unknown_params[0])
    ref = reference.parse(request.query_params.getlist(reference.PARAM))
    slugs = request.query_params.getlist("p")
    wanted = sorted(dict.fromkeys(s.strip().lower() for s in slugs if s.strip()))
    pairs = [("p", s) for s in wanted]
    if ref is not None:
        pairs.append((reference.PARAM, ref.key))
    asked = {k: request.query_params.get(k, "").strip() for k in QUOTE_PARAMS}
    gpus, months = quotes.parse_request(asked["gpus"] or None, asked["months"] or None)
    start = quote_service.parse_start(asked["start"], viewmodels.today())
    pairs += sorted((k, v) for k, v in asked.items() if v)
    query = params.query_string(pairs)
    records: list[dict[str, Any]] = []
    editions: list[dict[str, Any]] = []
    error = None
    if len(wanted) == 1 and wanted[0] not in st.providers(snapshot_of(request)):
        error = fmt.gettext("Choose two to four providers from the list.")
    elif len(wanted) > 1:
        with reading(request) as conn:
            try:
                records = offers.compare_records(conn, wanted)
                editions = offers.rating_editions(conn)
            except ValueError:
                error = fmt.gettext("Choose two to four providers from the list.")
    if records and "?" + request.url.query != query:
        return RedirectResponse(f"/{lang}/compare/{query}", status_code=302)
    records = fmt.catalog.localize(records)
    ctx = base_context(request, lang, "compare/", query if records else "", section="compare")
    providers = sorted(
        st.providers(snapshot_of(request)).values(), key=lambda p: str(p["name"]).lower()
    )
    ctx.update(
        records=records,
        sections=_compare_sections(fmt, records, editions) if records else [],
        picker=[(p["slug"], p["name"], p["slug"] in wanted) for p in providers],
        error=error,
        ref_choices=[(v, t, ref is not None and ref.key == v) for v, t in reference.choices(fmt)],
        ref_label=reference.label(fmt, ref) if ref is not None else None,
        ref_rows=_reference_rows(request, fmt, records, ref) if records and ref else [],
    )
    if records:
        rates = load_rates(st.settings.data_dir)
        gpu = asked["gpu"] or None
        hours = quotes.run_hours(start, months)
        found = quotes.quote(records, gpus, hours, gpu)
        ctx.update(
            price_block=compare_view.price_section(fmt, records),
            quote=compare_view.quote_rows(
                fmt,
                found,
                rates,
                hours,
                today=viewmodels.today(),
                stale_after_days=st.settings.stale_after_days,
            ),
            quote_form={
                "gpus": gpus,
                "months": f"{months:g}",
                "start": start.isoformat(),
                "gpu": gpu or "",
                "end": fmt.day(compare_view.end_date(start, hours).isoformat()),
                "gpus_choices": sorted({o["gpu"] for r in records for o in r.get("offers") or ()}),
            },
            currencies=compare_view.currencies(lang),
            rates=rates,
            rates_day=fmt.day(rates.on.isoformat()) if rates else None,
        )
    response = _html(request, lang, "pages/compare.html", ctx)
    if error:
        response.status_code = 400
    return response


def _compare_sections(
    fmt: Formatter, records: list[dict[str, Any]], editions: list[dict[str, Any]]
) -> list[CompareSection]:
    """The checklist sections, then the independent ratings when the catalog has any."""
    ratings = ratings_view.ratings_section(fmt, records, editions)
    return [*compare_sections(fmt, records), *([ratings] if ratings.rows else [])]


QUOTE_PARAMS: Final = ("gpus", "months", "start", "gpu")
"""The compare page's quote: GPUs, months, start date and GPU model."""


def _reference_rows(
    request: Request,
    fmt: Formatter,
    records: list[dict[str, Any]],
    ref: ReferenceWorkload,
) -> list[OfferRow]:
    """The compared providers' offers with the reference workload's columns."""
    st = state_of(request)
    by_slug = {r["slug"]: r for r in records}
    offers = [
        {**o, "provider_name": r["name"]} if "provider_name" not in o else o
        for r in records
        for o in r["offers"]
    ]
    found = reference.estimates(st, snapshot_of(request), ref, offers)
    return [
        replace(
            row,
            efficiency=reference.efficiency_cell(fmt, found.get(row.id)),
            effective=reference.effective_cell(fmt, found.get(row.id)),
        )
        for row in offer_rows(fmt, offers, by_slug, st.settings.stale_after_days)
    ]
