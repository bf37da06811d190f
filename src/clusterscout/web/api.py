"""JSON API under /api/v1 (DESIGN section 4); the same parser and query as the pages and CLI."""

from __future__ import annotations

from typing import Annotated, Any, Final

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from clusterscout.app import coverage, directory, offers, prices, quote_service
from clusterscout.catalog.directory import summary
from clusterscout.catalog.exports import OFFER_COLUMNS, offer_row, to_csv
from clusterscout.domain.errors import InputError
from clusterscout.web import api_docs, params, viewmodels
from clusterscout.web.api_error import ApiError, FastJSONResponse
from clusterscout.web.i18n import KNOWN_LOCALES, negotiate
from clusterscout.web.quote_schemas import QuoteOut
from clusterscout.web.runtime import reading, reads_local_db, snapshot_of, state_of
from clusterscout.web.schemas import (
    CoverageOut,
    HealthOut,
    OffersOut,
    PriceHistoryOut,
    ProviderDetailOut,
    ProvidersOut,
)

router = APIRouter(prefix="/api/v1", tags=["catalog"])
health_router = APIRouter(tags=["health"])


def _meta(request: Request) -> dict[str, Any]:
    snap = snapshot_of(request)
    return {"data_version": snap.data_version, "built_at": snap.built_at or None}


LANG: Final = "lang"


def _lang(request: Request) -> str:
    """The language of the free text: ``?lang=``, else ``Accept-Language``, else English.

    Raises:
        InputError: when ``lang`` is repeated or not a site language.
    """
    values = request.query_params.getlist(LANG)
    if not values:
        return negotiate(request.headers.get("accept-language"))
    if len(values) > 1:
        raise InputError(LANG, "may be given only once")
    lang = values[0].strip().lower()
    if lang not in KNOWN_LOCALES:
        known = ", ".join(KNOWN_LOCALES)
        raise InputError(LANG, f"{values[0][:20]!r} is not a site language ({known})")
    return lang


def _localized(request: Request, body: Any, lang: str) -> Response:
    """``body`` with the catalog's free text in ``lang``, saying which language it is in."""
    catalog = state_of(request).formatter(snapshot_of(request), lang).catalog
    return FastJSONResponse(catalog.localize(body), headers={"Content-Language": lang})


def _offers_query(request: Request, *, paged: bool) -> tuple[dict[str, Any], offers.Page]:
    # The CSV has no free text, so it takes no ``lang``.
    names = ("limit", "offset", LANG) if paged else ()
    raw = params.split(request.query_params.multi_items(), names)
    limit = params.int_param(raw.paging, "limit", params.API_DEFAULT_LIMIT, 1, params.API_MAX_LIMIT)
    offset = params.int_param(raw.paging, "offset", 0, 0, params.MAX_OFFSET)
    with reading(request) as conn:
        f, sort, page = offers.find_offers(
            conn, raw.filters, limit if paged else None, offset if paged else 0
        )
    filters: dict[str, list[str]] = {}
    for key, value in f.to_params():
        filters.setdefault(key, []).append(value)
    meta = {**_meta(request), "filters": filters, "sort": sort.value}
    meta.update(limit=limit, offset=offset)
    return meta, page


@router.get(
    "/offers",
    response_model=OffersOut,
    responses=api_docs.BAD_INPUT,
    openapi_extra={"parameters": api_docs.offer_parameters()},
    summary="List offers with filters, sorting and paging",
)
@reads_local_db
def list_offers(request: Request) -> Response:
    """Offers matching every filter; ``count`` is the total before ``limit``/``offset``."""
    lang = _lang(request)
    meta, page = _offers_query(request, paged=True)
    records = offers.mark_freshness(page.records, _stale_after(request), viewmodels.today())
    return _localized(request, {"data": records, "count": page.count, "meta": meta}, lang)


@router.get(
    "/offers.csv",
    response_class=Response,
    responses={**api_docs.CSV_RESPONSE, **api_docs.BAD_INPUT},
    openapi_extra={"parameters": api_docs.offer_parameters(paged=False)},
    summary="Offers as CSV (same filters, no paging)",
)
@reads_local_db
def offers_csv(request: Request) -> Response:
    """Every matching offer as CSV; unknown values are empty cells."""
    _, page = _offers_query(request, paged=False)
    records = offers.mark_freshness(page.records, _stale_after(request), viewmodels.today())
    body = to_csv((offer_row(r) for r in records), OFFER_COLUMNS)
    return Response(
        body,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'inline; filename="offers.csv"'},
    )


@router.get(
    "/coverage",
    response_model=CoverageOut,
    responses=api_docs.BAD_INPUT,
    summary="What the catalog knows, per multi-node offer fact and per provider",
)
@reads_local_db
def get_coverage(request: Request) -> Response:
    """Providers by multi-node status; per offer fact the share known; primary-sourced facts and
    stale prices; overall and per provider."""
    if request.query_params:
        raise InputError(sorted(request.query_params)[0], "unknown parameter (none are accepted)")
    with reading(request) as conn:
        report = coverage.coverage(conn, viewmodels.today(), _stale_after(request))
    return FastJSONResponse({**report.to_dict(), "meta": _meta(request)})


@router.get(
    "/providers",
    response_model=ProvidersOut,
    responses=api_docs.BAD_INPUT,
    openapi_extra={"parameters": api_docs.provider_parameters()},
    summary="List providers",
)
@reads_local_db
def list_providers(request: Request) -> Response:
    """The provider directory: providers by its filters (the page's), by name unless sorted."""
    lang = _lang(request)
    asked: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        if key != LANG:
            asked.setdefault(key, []).append(value)
    with reading(request) as conn:
        found = directory.directory(conn, asked)
    body = {"data": found.rows, "count": len(found.rows), "meta": _meta(request)}
    return _localized(request, body, lang)


@router.get(
    "/providers/{slug}",
    response_model=ProviderDetailOut,
    responses={**api_docs.NOT_FOUND, **api_docs.BAD_INPUT},
    openapi_extra={"parameters": [api_docs.lang_parameter()]},
    summary="One provider with its offers",
)
@reads_local_db
def get_provider(request: Request, slug: Annotated[str, Path(max_length=200)]) -> Response:
    """A provider record plus ``offers``."""
    _only_lang(request)
    lang = _lang(request)
    with reading(request) as conn:
        record = offers.provider(conn, slug)
        editions = offers.rating_editions(conn)
    if record is None:
        raise ApiError(404, "not_found", f"unknown provider {slug[:80]!r}", "slug")
    record.update(summary(record, record["offers"], editions))
    offers.mark_freshness([record], _stale_after(request), viewmodels.today())
    return _localized(request, record, lang)


@router.get(
    "/offers/{offer_id}/prices",
    response_model=PriceHistoryOut,
    responses={**api_docs.NOT_FOUND, **api_docs.BAD_INPUT},
    openapi_extra={"parameters": [api_docs.lang_parameter()]},
    summary="Price history of one offer",
)
@reads_local_db
def offer_prices(request: Request, offer_id: Annotated[str, Path(max_length=200)]) -> Response:
    """Every price observation of an offer, newest first, with ``age_days`` and ``stale``;
    ``current`` is the newest per tier and term and ``series`` the same data per line."""
    _only_lang(request)
    lang = _lang(request)
    stale_after = _stale_after(request)
    with reading(request) as conn:
        view = prices.history(conn, offer_id, viewmodels.today(), stale_after)
    if view is None:
        raise ApiError(404, "not_found", f"unknown offer {offer_id[:80]!r}", "offer_id")
    meta = {**_meta(request), "offer_id": offer_id, "stale_after_days": stale_after}
    body = {
        "data": view["observations"],
        "count": len(view["observations"]),
        "current": view["current"],
        "series": view["series"],
        "meta": meta,
    }
    return _localized(request, body, lang)


@router.get(
    "/quote",
    response_model=QuoteOut,
    responses=api_docs.BAD_INPUT,
    openapi_extra={"parameters": api_docs.quote_parameters()},
    summary="Commitment quote: N GPUs for M months, totalled per provider",
)
@reads_local_db
def get_quote(request: Request) -> Response:
    """Per provider the total for each published term (on-demand, reserved, capacity block,
    commitment discounts), the minimum term and prepayment it implies, a range where only
    "up to X% off" is published, or why there is none; in USD, EUR and BRL."""
    unknown = sorted(set(request.query_params) - set(quote_service.PARAMS))
    if unknown:
        known = ", ".join(quote_service.PARAMS)
        raise InputError(unknown[0], f"unknown parameter (known: {known})")
    raw: dict[str, str | None] = {}
    for name in quote_service.PARAMS:
        values = request.query_params.getlist(name)
        if len(values) > 1:
            raise InputError(name, "may be given only once")
        raw[name] = values[0] if values else None
    rates = quote_service.rates_of(state_of(request).settings.data_dir)
    with reading(request) as conn:
        asked = quote_service.parse_request(conn, raw, viewmodels.today())
        body = quote_service.quote(
            conn, asked, rates, today=viewmodels.today(), stale_after_days=_stale_after(request)
        )
    body["meta"] = {**_meta(request), **body["meta"]}
    return FastJSONResponse(body)


def _only_lang(request: Request) -> None:
    unknown = sorted(set(request.query_params) - {LANG})
    if unknown:
        raise InputError(unknown[0], "unknown parameter (known: lang)")


def _stale_after(request: Request) -> int:
    return state_of(request).settings.stale_after_days


@health_router.get("/healthz", response_model=HealthOut, include_in_schema=False)
@reads_local_db
def healthz(request: Request) -> Response:
    """Liveness plus the data version served."""
    return FastJSONResponse({"status": "ok", "data_version": snapshot_of(request).data_version})
