"""What every page template gets: language, alternates, canonical URL, navigation state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Final

from fastapi import Path
from starlette.requests import Request
from starlette.responses import HTMLResponse

from clusterscout.web.api_error import ApiError
from clusterscout.web.i18n import KNOWN_LOCALES
from clusterscout.web.runtime import open_snapshot_of, snapshot_of, state_of
from clusterscout.web.seo import OG_LOCALES

Lang = Annotated[str, Path(pattern="^[a-z]{2}$")]

LANGUAGE_NAMES: Final = {
    "en": "English",
    "pt": "Português",
    "es": "Español",
    "fr": "Français",
    "de": "Deutsch",
}


@dataclass(frozen=True, slots=True)
class Alternate:
    """The same page in another language."""

    lang: str
    name: str
    href: str
    current: bool


def origin(request: Request) -> str:
    """``scheme://host`` of the site, for absolute canonical, hreflang and sitemap URLs.

    It comes from the configured public URL, never from the request: a Host or
    X-Forwarded-Host header must not change what a cached page links to.
    """
    return state_of(request).settings.site_url()


def base_context(
    request: Request, lang: str, tail: str | None, query: str = "", *, section: str = ""
) -> dict[str, Any]:
    """Context shared by all pages.

    Args:
        request: the request being answered.
        lang: the page language.
        tail: the path after ``/{lang}/`` (e.g. ``"multi-node/"``); None for pages with no
            language alternates (errors).
        query: the canonical query string, with its ``?``.
        section: the navigation item to mark as current.
    """
    st = state_of(request)
    base = origin(request)
    alternates = []
    if tail is not None:
        alternates = [
            Alternate(code, LANGUAGE_NAMES[code], f"/{code}/{tail}{query}", code == lang)
            for code in KNOWN_LOCALES
        ]
    # Pages read their snapshot (opened by the middleware); an error page shows what there is.
    snap = open_snapshot_of(request) if tail is None else snapshot_of(request)
    fmt = st.formatter(snap, lang) if snap else st.formatters[lang]
    built = snap.built_at[:10] if snap else ""
    return {
        "lang": lang,
        "origin": base,
        "canonical": f"{base}/{lang}/{tail}{query}" if tail is not None else None,
        "x_default": f"{base}/en/{tail}{query}" if tail is not None else None,
        "alternates": alternates,
        "section": section,
        "asset_version": st.asset_version,
        "data_version": snap.data_version if snap else "",
        "built_on": fmt.day(built) if built else "",
        "fmt": fmt,
        "og_locales": OG_LOCALES,
    }


def known_lang(lang: str) -> str:
    """``lang`` when it is a site language.

    Raises:
        ApiError: 404 for any other language code.
    """
    if lang not in KNOWN_LOCALES:
        raise ApiError(404, "not_found", "unknown language", "lang")
    return lang


def render_html(request: Request, lang: str, template: str, ctx: dict[str, Any]) -> HTMLResponse:
    """Render a page template in ``lang``."""
    return HTMLResponse(state_of(request).render(lang, template, ctx))
