"""HTML routes (DESIGN section 4): thin handlers that parse, query, shape and render."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from clusterscout import services
from clusterscout.catalog.filters import OfferFilter
from clusterscout.store import queries
from clusterscout.web import content, listing, params
from clusterscout.web.cells import MULTI_NODE_LABELS
from clusterscout.web.errors import ApiError
from clusterscout.web.i18n import KNOWN_LOCALES, negotiate
from clusterscout.web.pages_common import base_context
from clusterscout.web.runtime import state_of
from clusterscout.web.scorecard import compare_sections, scorecard
from clusterscout.web.viewmodels import offer_rows

router = APIRouter(include_in_schema=False)
Lang = Annotated[str, Path(pattern="^[a-z]{2}$")]


def _lang(lang: str) -> str:
    if lang not in KNOWN_LOCALES:
        raise ApiError(404, "not_found", "unknown language", "lang")
    return lang


def _html(request: Request, lang: str, template: str, ctx: dict[str, Any]) -> HTMLResponse:
    return HTMLResponse(state_of(request).render(lang, template, ctx))


@router.get("/")
def root(request: Request) -> Response:
    """Send visitors to their language (``Accept-Language``, default English)."""
    lang = negotiate(request.headers.get("accept-language"))
    return RedirectResponse(f"/{lang}/", status_code=302, headers={"Vary": "Accept-Language"})


@router.get("/{lang}/")
def home(request: Request, lang: Lang) -> Response:
    """Entry points and catalog figures."""
    lang = _lang(lang)
    st = state_of(request)
    providers = st.providers()
    with st.engine.connect() as conn:
        total = queries.count_offers(conn, OfferFilter())
        multi = queries.count_offers(conn, OfferFilter(multi_node=True))
    fmt = st.formatters[lang]
    ctx = base_context(request, lang, "", section="home")
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
    fmt = state_of(request).formatters[lang]
    result = listing.build(request, fmt, all_offers=all_offers)
    tail = "offers/" if all_offers else "multi-node/"
    if listing.needs_redirect(request, result):
        return RedirectResponse(f"/{lang}/{tail}{result.canonical_query}", status_code=302)
    ctx = base_context(
        request, lang, tail, result.canonical_query, section="offers" if all_offers else "multi"
    )
    ctx.update(listing.context(result))
    ctx["all_offers"] = all_offers
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
        ctx["faq_jsonld"] = json.dumps(content.faq_jsonld(faq), ensure_ascii=False) if faq else ""
    template = "pages/offers.html" if all_offers else "pages/multi_node.html"
    return _html(request, lang, template, ctx)


@router.get("/{lang}/multi-node/")
def multi_node(request: Request, lang: Lang) -> Response:
    """The page of the brief: multi-node offers, facets, the guide and the FAQ."""
    return _listing_page(request, lang, all_offers=False)


@router.get("/{lang}/offers/")
def all_offers(request: Request, lang: Lang) -> Response:
    """Every offer, faceted."""
    return _listing_page(request, lang, all_offers=True)


@router.get("/{lang}/providers/{slug}/")
def provider(request: Request, lang: Lang, slug: Annotated[str, Path(max_length=200)]) -> Response:
    """A provider's checklist scorecard, offers and prices."""
    lang = _lang(lang)
    st = state_of(request)
    with st.engine.connect() as conn:
        record = queries.get_provider(conn, slug)
    if record is None:
        raise ApiError(404, "not_found", "unknown provider", "slug")
    fmt = st.formatters[lang]
    ctx = base_context(request, lang, f"providers/{slug}/", section="providers")
    ctx.update(
        provider=record,
        multi_node_text=fmt.gettext(MULTI_NODE_LABELS.get(record["multi_node"], "unknown")),
        dimensions=scorecard(fmt, record),
        rows=offer_rows(fmt, record["offers"], {slug: record}, st.settings.stale_after_days),
        json_href=f"/api/v1/providers/{slug}",
    )
    return _html(request, lang, "pages/provider.html", ctx)


@router.get("/{lang}/compare/")
def compare(request: Request, lang: Lang) -> Response:
    """Two to four providers side by side on the checklist; a picker when none are given."""
    lang = _lang(lang)
    st = state_of(request)
    fmt = st.formatters[lang]
    unknown_params = sorted(set(request.query_params) - {"p"})
    if unknown_params:
        raise ApiError(400, "unknown_parameter", "unknown parameter", unknown_params[0])
    slugs = request.query_params.getlist("p")
    wanted = sorted(dict.fromkeys(s.strip().lower() for s in slugs if s.strip()))
    query = params.query_string([("p", s) for s in wanted])
    records: list[dict[str, Any]] = []
    error = None
    if len(wanted) == 1 and wanted[0] not in st.providers():
        error = fmt.gettext("Choose two to four providers from the list.")
    elif len(wanted) > 1:
        with st.engine.connect() as conn:
            try:
                records = services.compare_records(conn, wanted)
            except ValueError:
                error = fmt.gettext("Choose two to four providers from the list.")
    if records and "?" + request.url.query != query:
        return RedirectResponse(f"/{lang}/compare/{query}", status_code=302)
    ctx = base_context(request, lang, "compare/", query if records else "", section="compare")
    providers = sorted(st.providers().values(), key=lambda p: str(p["name"]).lower())
    ctx.update(
        records=records,
        sections=compare_sections(fmt, records) if records else [],
        picker=[(p["slug"], p["name"], p["slug"] in wanted) for p in providers],
        error=error,
    )
    response = _html(request, lang, "pages/compare.html", ctx)
    if error:
        response.status_code = 400
    return response
