"""``/{lang}/quote/``: N GPUs for M months, every provider ranked by total, as a GET form."""

from __future__ import annotations

from typing import Final

from fastapi import APIRouter, Request
from starlette.responses import Response

from clusterscout.app import quote_service
from clusterscout.domain.errors import InputError
from clusterscout.web import quote_view, viewmodels
from clusterscout.web.api_error import ApiError
from clusterscout.web.i18n import N_
from clusterscout.web.pages_common import Lang, base_context
from clusterscout.web.pages_common import known_lang as _lang
from clusterscout.web.pages_common import render_html as _html
from clusterscout.web.runtime import reading, reads_local_db, snapshot_of, state_of

router = APIRouter(include_in_schema=False)
DEFAULTS: Final = {"gpus": "64", "months": "6", "gpu": "H100-SXM-80GB"}
"""What the page asks before the reader does: 64 H100 GPUs for six months."""
ADVICE: Final = {
    "gpus": N_("Enter a whole number of GPUs from 1 to 100,000."),
    "months": N_("Enter a number of months above 0 and at most 60."),
    "start": N_("Enter a date between 2000-01-01 and 2100-12-31."),
    "gpu": N_("Choose a GPU model from the list."),
    "currency": N_("Choose USD, EUR or BRL."),
}


@router.get("/{lang}/quote/")
@reads_local_db
def quote_page(request: Request, lang: Lang) -> Response:
    """Every provider's total for the run, cheapest first, from the same service as the API.

    Bad input shows the form again with the problem next to the field (status 400).
    """
    lang = _lang(lang)
    st = state_of(request)
    fmt = st.formatter(snapshot_of(request), lang)
    unknown = sorted(set(request.query_params) - set(quote_service.PARAMS))
    if unknown:
        raise ApiError(400, "unknown_parameter", "unknown parameter", unknown[0])
    raw: dict[str, str | None] = {
        k: request.query_params.get(k, "").strip() for k in quote_service.PARAMS
    }
    asked_any = any(raw.values())
    for k, v in DEFAULTS.items():
        if not asked_any:
            raw[k] = v
    if not raw["currency"]:
        raw["currency"] = quote_view.READER_CURRENCY.get(lang, "USD")
    today = viewmodels.today()
    rates = quote_service.rates_of(st.settings.data_dir)
    body, problem, field = None, None, None
    with reading(request) as conn:
        gpu_choices = quote_service.gpu_choices(conn)
        try:
            asked = quote_service.parse_request(conn, raw, today)
            body = quote_service.quote(
                conn, asked, rates, today=today, stale_after_days=st.settings.stale_after_days
            )
        except InputError as exc:
            field = exc.field
            problem = fmt.gettext(ADVICE.get(exc.field, ADVICE["gpus"]))
    ctx = base_context(request, lang, "quote/", section="quote")
    ctx.update(
        form={
            **{k: v or "" for k, v in raw.items()},
            "gpu_choices": gpu_choices,
            "currencies": quote_service.CURRENCIES,
        },
        field=field,
        problem=problem,
        lines=quote_view.quote_lines(fmt, body, body["meta"]["currency"]) if body else [],
        meta=body["meta"] if body else None,
        start_day=fmt.day(body["meta"]["start"]) if body else "",
        end_day=fmt.day(body["meta"]["end"]) if body else "",
        rates=body["meta"]["exchange_rates"] if body else None,
        rates_day=fmt.day(body["meta"]["exchange_rates"]["date"])
        if body and body["meta"]["exchange_rates"]
        else "",
        api_url="/api/v1/quote?" + str(request.url.query) if request.url.query else "/api/v1/quote",
    )
    response = _html(request, lang, "pages/quote.html", ctx)
    if problem:
        response.status_code = 400
    return response
