"""The web application factory: pages, JSON API, static files, error shapes and headers."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator
from typing import Final
from xml.sax.saxutils import escape

from fastapi import FastAPI, Request
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import PlainTextResponse, Response

from clusterscout.app.database import THREADS_PER_PROCESS, open_engine
from clusterscout.settings import Settings
from clusterscout.version import __version__
from clusterscout.web import (
    api,
    errors,
    launch_api,
    model_api,
    pages,
    plan_pages,
    price_history,
    quote_pages,
    site_pages,
)
from clusterscout.web.i18n import KNOWN_LOCALES, compile_catalogs
from clusterscout.web.middleware import (
    HeadAsGetMiddleware,
    HeadersMiddleware,
    RequestBodyMiddleware,
)
from clusterscout.web.pages_common import origin
from clusterscout.web.runtime import STATIC_DIR, AppState, close_view, snapshot_of, state_of

BODY_TIMEOUT_S: Final = 10.0
MAX_BODY_BYTES: Final = 1_000_000
SITEMAP_PAGES: Final = (
    "",
    "multi-node/",
    "offers/",
    "compare/",
    "plan/",
    "quote/",
    "downloads/",
    "changes/",
)
API_DESCRIPTION: Final = (
    "Multi-node GPU cluster offers and providers, every fact with its sources. "
    'Unknown values are null. Errors are `{"error": {"code", "message", "field"}}`.'
)


def _robots(request: Request) -> Response:
    body = f"User-agent: *\nAllow: /\nDisallow: /api/\nSitemap: {origin(request)}/sitemap.xml\n"
    return PlainTextResponse(body)


def _sitemap(request: Request) -> Response:
    base = origin(request)
    tails = [
        *SITEMAP_PAGES,
        *(f"providers/{s}/" for s in sorted(state_of(request).providers(snapshot_of(request)))),
    ]
    urls: list[str] = []
    for tail in tails:
        # Every language and x-default (English), the same set on each <url>: reciprocal.
        hrefs = [(code, f"{base}/{code}/{tail}") for code in KNOWN_LOCALES]
        hrefs.append(("x-default", f"{base}/en/{tail}"))
        links = "".join(
            f'<xhtml:link rel="alternate" hreflang="{code}" href="{escape(href)}"/>'
            for code, href in hrefs
        )
        urls.extend(
            f"<url><loc>{escape(f'{base}/{lang}/{tail}')}</loc>{links}</url>"
            for lang in KNOWN_LOCALES
        )
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">' + "".join(urls) + "</urlset>\n"
    )
    return Response(body, media_type="application/xml")


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    runner = app.state.cs.plan_runner
    if runner is not None:
        runner.close()


def create_app(settings: Settings) -> FastAPI:
    """Build the app over the database configured in ``settings`` (built first if empty)."""
    # A read-only install compiles translations in memory instead (i18n.load_translations).
    with contextlib.suppress(OSError):
        compile_catalogs()
    engine = open_engine(settings)
    app = FastAPI(
        title="clusterscout API",
        version=__version__,
        description=API_DESCRIPTION,
        openapi_url="/api/v1/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=_lifespan,
        # Starlette's redirect takes its host from the request; errors.py redirects instead.
        redirect_slashes=False,
    )
    app.state.cs = AppState.create(settings, engine)
    errors.install(app)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(api.health_router)
    app.include_router(api.router)
    app.include_router(model_api.router)
    app.include_router(launch_api.router)
    app.add_api_route("/robots.txt", _robots, include_in_schema=False)
    app.add_api_route("/sitemap.xml", _sitemap, include_in_schema=False)
    app.include_router(plan_pages.router)
    app.include_router(quote_pages.router)
    app.include_router(price_history.router)
    # Before pages: its fixed paths (/downloads/...) must not reach the /{lang}/ routes.
    app.include_router(site_pages.router)
    app.include_router(pages.router)
    cache_bytes = int(settings.response_cache_mb * 1024 * 1024)
    app.add_middleware(
        HeadersMiddleware,
        open_view=app.state.cs.open_view,
        close_view=close_view,
        cache_bytes=cache_bytes,
        slots=THREADS_PER_PROCESS,
        inline_open=engine.dialect.name == "sqlite",
    )
    app.add_middleware(HeadAsGetMiddleware)  # the layers inside see a GET
    app.add_middleware(
        RequestBodyMiddleware,
        paths=lambda: _post_paths(app),
        timeout_s=BODY_TIMEOUT_S,
        max_bytes=MAX_BODY_BYTES,
    )
    # Outermost: a request for a host we do not serve is refused before any cache sees it.
    app.add_middleware(
        TrustedHostMiddleware, allowed_hosts=settings.trusted_hosts(), www_redirect=False
    )
    return app


def _post_paths(app: FastAPI) -> set[str]:
    """Paths that read a POST body, from the app's own OpenAPI document (computed once)."""
    cached: set[str] | None = getattr(app.state, "post_paths", None)
    if cached is None:
        cached = {path for path, ops in app.openapi()["paths"].items() if "post" in ops}
        app.state.post_paths = cached
    return cached


def app_from_env() -> FastAPI:
    """Factory used by ``clusterscout serve`` (uvicorn ``--factory``): settings from env."""
    app = create_app(Settings())
    freeze_startup_heap()
    return app


def freeze_startup_heap() -> None:
    """Hide the objects built at start-up from the cyclic garbage collector (``gc.freeze``).

    Why: a full collection walks every tracked object, and the start-up heap (libraries,
    templates, translations) is most of them. Under load one ran about once a second and held
    the event loop for about 70 ms, which alone made the uncached p99 (``make bench``); with
    the start-up heap frozen it takes about 2 ms. Frozen objects are still freed by reference
    counting; only a reference cycle among them would stay, and they live as long as the
    process anyway. Called once per worker process, after the app is built.
    """
    gc.collect()
    gc.freeze()
