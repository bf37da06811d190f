"""ASGI middleware: security headers on every response; ETag + Cache-Control keyed on data_version.

A GET whose ``If-None-Match`` carries the current ETag is answered 304 without running the
handler: the ETag is a hash of the catalog build id, the static asset version and the URL, so it
changes exactly when the data, the code's assets or the request change.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: Final = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
)
PAGE_CACHE: Final = b"public, max-age=60, stale-while-revalidate=300"
STATIC_CACHE: Final = b"public, max-age=31536000, immutable"
_NO_ETAG_PATHS: Final = frozenset({"/", "/healthz"})
CACHE_ENTRIES: Final = 512
CACHE_MAX_BODY: Final = 2_000_000


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return ""


class HeadersMiddleware:
    """Adds security headers, and caching headers with conditional GET, to every response."""

    def __init__(self, app: ASGIApp, version: Callable[[], str]) -> None:
        self.app = app
        self.version = version
        # Rendered 200 answers by ETag. The ETag covers the data build, the assets, the day
        # (stale badges) and the request, so an entry can never be served for other content.
        self.cache: OrderedDict[str, tuple[list[tuple[bytes, bytes]], bytes]] = OrderedDict()

    def _etag(self, scope: Scope) -> str:
        path = scope.get("path", "")
        key = "|".join(
            (
                self.version(),
                datetime.now(UTC).date().isoformat(),
                path,
                scope.get("query_string", b"").decode("latin-1"),
                # The API's free text follows Accept-Language (pages carry the language in
                # their path and ignore it).
                _header(scope, b"accept-language") if path.startswith("/api/") else "",
                _header(scope, b"hx-request"),
                _header(scope, b"hx-history-restore-request"),
            )
        )
        return 'W/"' + hashlib.sha256(key.encode()).hexdigest()[:24] + '"'

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        is_static = path.startswith("/static/")
        etag = None
        if scope["method"] in {"GET", "HEAD"} and not is_static and path not in _NO_ETAG_PATHS:
            etag = self._etag(scope)
            match = _header(scope, b"if-none-match")
            if match and etag in {m.strip() for m in match.split(",")}:
                await self._not_modified(send, etag)
                return
            hit = self.cache.get(etag) if scope["method"] == "GET" else None
            if hit is not None:
                self.cache.move_to_end(etag)
                await send({"type": "http.response.start", "status": 200, "headers": hit[0]})
                await send({"type": "http.response.body", "body": hit[1]})
                return
        captured: dict[str, object] = {}
        chunks: list[bytes] = []

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                headers.extend(h for h in SECURITY_HEADERS if h[0] not in names)
                status = message["status"]
                if is_static and status == 200:
                    headers.append((b"cache-control", STATIC_CACHE))
                elif etag is not None and status == 200 and b"cache-control" not in names:
                    headers.append((b"etag", etag.encode()))
                    headers.append((b"cache-control", PAGE_CACHE))
                    vary = b"HX-Request, Accept-Encoding"
                    if path.startswith("/api/"):
                        vary += b", Accept-Language"
                    headers.append((b"vary", vary))
                elif b"cache-control" not in names:
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
                cacheable = etag is not None and scope["method"] == "GET"
                if cacheable and status == 200 and b"set-cookie" not in names:
                    captured["headers"] = headers
            elif message["type"] == "http.response.body" and "headers" in captured:
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    self._store(etag, captured, chunks)
            await send(message)

        await self.app(scope, receive, send_wrapper)

    def _store(self, etag: str | None, captured: dict[str, object], chunks: list[bytes]) -> None:
        body = b"".join(chunks)
        if etag is None or len(body) > CACHE_MAX_BODY:
            return
        headers = captured["headers"]
        if not isinstance(headers, list):  # pragma: no cover - ASGI start messages carry a list
            return
        self.cache[etag] = (headers, body)
        while len(self.cache) > CACHE_ENTRIES:
            self.cache.popitem(last=False)

    async def _not_modified(self, send: Send, etag: str) -> None:
        headers = [
            (b"etag", etag.encode()),
            (b"cache-control", PAGE_CACHE),
            (b"vary", b"HX-Request, Accept-Encoding"),
            *SECURITY_HEADERS,
        ]
        await send({"type": "http.response.start", "status": 304, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


class HeadAsGetMiddleware:
    """Answers ``HEAD`` as ``GET`` without the body (HTTP requires HEAD wherever GET works).

    FastAPI routes declare GET only, so without this every page, ``/healthz`` and the API
    answered HEAD (``curl -I``, uptime checks) with 405. Headers, including the length, are
    those of the GET answer.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_without_body)
