"""Error answers: ``{"error": {code, message, field}}`` under /api, a localized page elsewhere."""

from __future__ import annotations

import logging
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import HTMLResponse, RedirectResponse, Response

from clusterscout.app.errors import Operation, failure_of
from clusterscout.domain.errors import InputError
from clusterscout.web.api_error import ApiError, error_json
from clusterscout.web.i18n import DEFAULT_LOCALE, KNOWN_LOCALES
from clusterscout.web.pages_common import base_context
from clusterscout.web.runtime import state_of
from clusterscout.web.slashes import slash_location

log = logging.getLogger(__name__)

API_PREFIX: Final = "/api/"
_STATUS_CODES: Final = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def _lang_of(request: Request) -> str:
    first = request.url.path.strip("/").split("/", 1)[0]
    return first if first in KNOWN_LOCALES else DEFAULT_LOCALE


def error_page(request: Request, status: int, message: str | None = None) -> HTMLResponse:
    """A localized error page."""
    lang = _lang_of(request)
    context: dict[str, Any] = base_context(request, lang, None)
    context.update(status=status, message=message)
    html = state_of(request).render(lang, "pages/error.html", context)
    return HTMLResponse(html, status_code=status)


def _is_api(request: Request) -> bool:
    return request.url.path.startswith(API_PREFIX)


def _location(loc: tuple[Any, ...] | list[Any]) -> str | None:
    parts = [str(p) for p in loc if p not in {"body", "query", "path", "header"}]
    return ".".join(parts) or None


def install(app: FastAPI) -> None:
    """Register the handlers that give every error its contract shape."""

    async def on_api_error(request: Request, exc: Exception) -> Response:
        if not isinstance(exc, ApiError):  # pragma: no cover - registered for ApiError only
            raise exc
        response: Response
        if not _is_api(request):
            response = error_page(request, exc.status, exc.message)
        else:
            response = error_json(exc.status, exc.code, exc.message, exc.field)
        response.headers.update(exc.headers)  # Retry-After on a 503 or 429
        return response

    async def on_input_error(request: Request, exc: Exception) -> Response:
        # Routes of the listings let bad filters through to here; the model routes classify
        # their own (their code is invalid_scenario), both through app.errors.
        failure = failure_of(exc, Operation.LISTING)
        if failure is None:  # pragma: no cover - registered for InputError only
            raise exc
        if not _is_api(request):
            return error_page(request, failure.http_status, failure.message)
        return error_json(failure.http_status, failure.code, failure.message, failure.field)

    async def on_validation(request: Request, exc: Exception) -> Response:
        errors = exc.errors() if isinstance(exc, RequestValidationError) else []
        first = errors[0] if errors else {}
        loc = tuple(first.get("loc", ()))
        field = _location(loc)
        message = str(first.get("msg", "invalid input"))
        code = "invalid_input"
        if first.get("type") == "json_invalid":
            code, field, message = "invalid_json", "body", "the request body is not valid JSON"
        elif loc[:1] == ("body",) and field is None:
            field = "body"
        if not _is_api(request):
            return error_page(request, 400, message)
        return error_json(400, code, f"{field}: {message}" if field else message, field)

    async def on_http(request: Request, exc: Exception) -> Response:
        if not isinstance(exc, StarletteHTTPException):  # pragma: no cover - registered for it
            raise exc
        status = exc.status_code if 400 <= exc.status_code < 500 else 400
        location = slash_location(request.app.router, request.scope) if status == 404 else None
        if location is not None:
            return RedirectResponse(location, status_code=307)
        response: Response
        if not _is_api(request):
            response = error_page(request, status)
        elif isinstance(exc.__cause__, RecursionError | UnicodeDecodeError):
            # FastAPI turns a body json.loads cannot read (nested past Python's recursion
            # limit, or not UTF-8) into a bare 400; it is still a body that is not usable JSON.
            why = "nested too deeply" if isinstance(exc.__cause__, RecursionError) else "not UTF-8"
            message = f"body: the request body is not valid JSON ({why})"
            response = error_json(400, "invalid_json", message, "body")
        else:
            code = _STATUS_CODES.get(status, "bad_request")
            response = error_json(status, code, str(exc.detail), None)
        for key, value in (exc.headers or {}).items():
            response.headers[key] = value
        return response

    async def on_unexpected(request: Request, exc: Exception) -> Response:
        # A bug, not bad input; logged with its traceback. Contract shape even so.
        log.exception("unhandled error on %s", request.url.path, exc_info=exc)
        if not _is_api(request):
            return error_page(request, 500)
        return error_json(500, "internal_error", "internal error", None)

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(InputError, on_input_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_unexpected)
