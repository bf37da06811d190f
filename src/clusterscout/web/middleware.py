"""ASGI middleware: security headers, ETags from the data version, compression, response cache.

A GET whose ``If-None-Match`` carries the current ETag is answered 304 without running the
handler. The ETag is a hash of the data version the request reads (from its own database
snapshot, so it always matches the data in the body), the asset version, the day, the path,
the query and the headers the answer depends on; nothing else from the request can reach it.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import anyio
import anyio.to_thread
import brotli
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clusterscout.web.api_error import error_json
from clusterscout.web.i18n import negotiate

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
VARY: Final = b"HX-Request, Accept-Encoding"
API: Final = "/api/"
API_VARY: Final = b"HX-Request, Accept-Encoding, Accept-Language"
# The only request headers an answer depends on (besides path and query): part of the key.
KEY_HEADERS: Final = (b"hx-request", b"hx-history-restore-request")
COMPRESSIBLE: Final = (
    "text/",
    "application/json",
    "application/xml",
    "application/javascript",
    "image/svg+xml",
)
MIN_COMPRESS_BYTES: Final = 512
BROTLI_QUALITY: Final = 3  # ~1 ms for a 200 KB answer, smaller than gzip -6; 11: ~100x slower
GZIP_LEVEL: Final = 1  # nginx's default: -6 costs 3x the time for 25% fewer bytes


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return ""


def accepted_encoding(accept: str) -> str | None:
    """The best encoding we offer that ``Accept-Encoding`` allows: br, gzip or None."""
    allowed: dict[str, float] = {}
    for part in accept.lower().split(","):
        token, _, params = part.strip().partition(";")
        q = 1.0
        name, _, value = params.strip().partition("=")
        if name.strip() == "q":
            try:
                q = float(value)
            except ValueError:
                q = 0.0
        allowed[token.strip()] = q
    star = allowed.get("*", 0.0)
    for encoding in ("br", "gzip"):
        if allowed.get(encoding, star) > 0:
            return encoding
    return None


def compress(body: bytes, encoding: str) -> bytes:
    """``body`` in ``encoding`` (``br`` or ``gzip``)."""
    if encoding == "br":
        return bytes(brotli.compress(body, quality=BROTLI_QUALITY))
    return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)


@dataclass
class Entry:
    """One cached answer: headers, plain body, and the compressed bodies made so far."""

    headers: list[tuple[bytes, bytes]]
    body: bytes
    encoded: dict[str, bytes] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Bytes held (bodies only; headers are small and bounded)."""
        return len(self.body) + sum(len(b) for b in self.encoded.values())


class ResponseCache:
    """Rendered 200 answers by ETag, least recently used first out, bounded in bytes.

    A bound on entries alone let any client fill memory with 1000-row answers; the bound is
    on the bytes of bodies (plain and compressed), so memory stays flat whatever is asked.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._items: OrderedDict[str, Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Entry | None:
        """The entry for ``key`` (now most recently used), or None."""
        with self._lock:
            entry = self._items.get(key)
            if entry is not None:
                self._items.move_to_end(key)
            return entry

    def put(self, key: str, entry: Entry) -> None:
        """Store ``entry``, evicting the least recently used until within the bound."""
        if entry.size > self.max_bytes // 8:  # one answer never takes most of the cache
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old.size
            self._items[key] = entry
            self.bytes += entry.size
            self._evict()

    def grow(self, entry: Entry, encoding: str, body: bytes) -> None:
        """Keep a compressed body of a cached entry."""
        with self._lock:
            if encoding in entry.encoded:
                return
            entry.encoded[encoding] = body
            if any(e is entry for e in self._items.values()):
                self.bytes += len(body)
            self._evict()

    def _evict(self) -> None:
        while self.bytes > self.max_bytes and self._items:
            _, gone = self._items.popitem(last=False)
            self.bytes -= gone.size

    def __len__(self) -> int:
        return len(self._items)


def _with_body(
    headers: list[tuple[bytes, bytes]], body: bytes, encoding: str | None
) -> list[tuple[bytes, bytes]]:
    out = [(k, v) for k, v in headers if k != b"content-length"]
    if encoding is not None:
        out.append((b"content-encoding", encoding.encode()))
    out.append((b"content-length", str(len(body)).encode()))
    return out


def _compressible(headers: list[tuple[bytes, bytes]]) -> bool:
    values = dict(headers)
    kind = values.get(b"content-type", b"").decode("latin-1").lower()
    return b"content-encoding" not in values and kind.startswith(COMPRESSIBLE)


def _allow_head(allow: bytes) -> bytes:
    """HEAD is answered wherever GET is (HeadAsGetMiddleware), so ``Allow`` says so."""
    methods = [m.strip() for m in allow.decode("latin-1").split(",") if m.strip()]
    if "GET" in methods and "HEAD" not in methods:
        methods.insert(methods.index("GET") + 1, "HEAD")
    return ", ".join(methods).encode()


class HeadersMiddleware:
    """Security headers, caching headers with conditional GET, compression and the cache.

    ``open_view(scope)`` opens the request's read snapshot (kept in the scope for the handler)
    and returns the version string that goes into the ETag; ``close_view(scope)`` ends it.
    At most ``slots`` requests hold a snapshot at once (the pool never runs dry), so with
    ``inline_open`` (SQLite: a local read of a few microseconds) opening never waits and
    runs on the event loop; otherwise (a database over the network) in a worker thread.
    """

    def __init__(
        self,
        app: ASGIApp,
        open_view: Callable[[Scope], str],
        close_view: Callable[[Scope], None],
        cache_bytes: int,
        *,
        slots: int,
        inline_open: bool,
    ) -> None:
        self.app = app
        self.open_view = open_view
        self.close_view = close_view
        self.cache = ResponseCache(cache_bytes)
        self.slots = anyio.Semaphore(slots)
        self.inline_open = inline_open

    @staticmethod
    def _etag(scope: Scope, version: str) -> str:
        path = scope.get("path", "")
        parts = [
            version,
            datetime.now(UTC).date().isoformat(),  # stale badges change with the day
            path,
            scope.get("query_string", b"").decode("latin-1"),
            # The API's free text follows Accept-Language; the key holds the language it
            # picks (one of five), not the raw header, which a client could vary at will.
            negotiate(_header(scope, b"accept-language")) if path.startswith(API) else "",
            *(_header(scope, name) for name in KEY_HEADERS),
        ]
        digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogateescape"))
        return 'W/"' + digest.hexdigest()[:24] + '"'

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope = {**scope, "state": dict(scope.get("state") or {})}
        try:
            await self._handle(scope, receive, send)
        finally:
            # Inline: ending a read and returning the connection never waits on the pool
            # (opening one may, so that runs in a worker thread).
            self.close_view(scope)

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        is_static = path.startswith("/static/")
        vary = API_VARY if path.startswith(API) else VARY
        encoding = accepted_encoding(_header(scope, b"accept-encoding"))
        if scope["method"] == "GET" and not is_static and path not in _NO_ETAG_PATHS:
            async with self.slots:
                await self._handle_versioned(scope, receive, send, vary, encoding)
            return
        await self._run(scope, receive, send, is_static, None, encoding, vary)

    async def _handle_versioned(
        self, scope: Scope, receive: Receive, send: Send, vary: bytes, encoding: str | None
    ) -> None:
        if self.inline_open:
            version = self.open_view(scope)
        else:
            version = await anyio.to_thread.run_sync(self.open_view, scope)
        etag = self._etag(scope, version)
        match = _header(scope, b"if-none-match")
        if match and etag in {m.strip() for m in match.split(",")}:
            await self._not_modified(send, etag, vary)
            return
        hit = self.cache.get(etag)
        if hit is not None:
            await self._send_entry(send, hit, encoding)
            return
        await self._run(scope, receive, send, False, etag, encoding, vary)

    async def _run(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        is_static: bool,
        etag: str | None,
        encoding: str | None,
        vary: bytes,
    ) -> None:
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message, headers=self._headers(message, is_static, etag, vary))
                return
            if message["type"] != "http.response.body":  # pragma: no cover - ASGI extensions
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            await self._finish(send, start, b"".join(chunks), etag, encoding)

        await self.app(scope, receive, send_wrapper)

    @staticmethod
    def _headers(
        message: Message, is_static: bool, etag: str | None, vary: bytes
    ) -> list[tuple[bytes, bytes]]:
        headers = list(message.get("headers", []))
        names = {k.lower() for k, _ in headers}
        headers.extend(h for h in SECURITY_HEADERS if h[0] not in names)
        status = message["status"]
        if status == 405:
            headers = [(k, _allow_head(v) if k == b"allow" else v) for k, v in headers]
        if is_static and status == 200:
            headers.append((b"cache-control", STATIC_CACHE))
        elif etag is not None and status == 200 and b"cache-control" not in names:
            headers.append((b"etag", etag.encode()))
            headers.append((b"cache-control", PAGE_CACHE))
        elif b"cache-control" not in names:
            headers.append((b"cache-control", b"no-store"))
        if _compressible(headers) and b"vary" not in names:
            headers.append((b"vary", vary if etag is not None else b"Accept-Encoding"))
        return headers

    async def _finish(
        self,
        send: Send,
        start: dict[str, Any],
        body: bytes,
        etag: str | None,
        encoding: str | None,
    ) -> None:
        headers: list[tuple[bytes, bytes]] = start["headers"]
        names = {k for k, _ in headers}
        if etag is not None and start["status"] == 200 and b"set-cookie" not in names:
            entry = Entry(headers, body)
            self.cache.put(etag, entry)
            await self._send_entry(send, entry, encoding)
            return
        if encoding is not None and len(body) >= MIN_COMPRESS_BYTES and _compressible(headers):
            body = compress(body, encoding)
            headers = _with_body(headers, body, encoding)
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _send_entry(self, send: Send, entry: Entry, encoding: str | None) -> None:
        body = entry.body
        chosen = None
        if (
            encoding is not None
            and len(body) >= MIN_COMPRESS_BYTES
            and _compressible(entry.headers)
        ):
            packed = entry.encoded.get(encoding)
            if packed is None:
                packed = compress(body, encoding)
                self.cache.grow(entry, encoding, packed)
            body, chosen = packed, encoding
        headers = _with_body(entry.headers, body, chosen)
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _not_modified(self, send: Send, etag: str, vary: bytes) -> None:
        headers = [
            (b"etag", etag.encode()),
            (b"cache-control", PAGE_CACHE),
            (b"vary", vary),
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


class RequestBodyMiddleware:
    """Reads a POST body whole before the app sees it: on time, bounded, and of JSON type.

    A client that declares a body and never sends it held a worker until the socket died;
    now it gets 408 after ``timeout_s``. A body past ``max_bytes`` gets 413, and a body of
    another type than JSON gets 415 (the API only reads JSON), before any parsing.
    """

    def __init__(
        self, app: ASGIApp, *, paths: Callable[[], set[str]], timeout_s: float, max_bytes: int
    ) -> None:
        self.app = app
        self.paths = paths
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Only routes that take a POST body; elsewhere the router answers 405 as it should.
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"] not in self.paths()
        ):
            await self.app(scope, receive, send)
            return
        kind = _header(scope, b"content-type").split(";", 1)[0].strip().lower()
        if kind != "application/json" and not kind.endswith("+json"):
            shown = kind[:60] or "none"
            msg = f"the body must be application/json (got {shown})"
            await error_json(415, "unsupported_media_type", msg, "body")(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        try:
            with anyio.fail_after(self.timeout_s):
                more = True
                while more:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_bytes:
                        msg = f"the body is larger than {self.max_bytes} bytes"
                        answer = error_json(413, "payload_too_large", msg, "body")
                        await answer(scope, receive, send)
                        return
                    chunks.append(chunk)
                    more = message.get("more_body", False)
        except TimeoutError:
            msg = f"the body did not arrive within {self.timeout_s:g} s"
            answer = error_json(408, "request_timeout", msg, "body")
            answer.headers["connection"] = "close"
            await answer(scope, receive, send)
            return
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
