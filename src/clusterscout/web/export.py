"""The read side as static files: every page in every language, assets, and the API's GET answers.

Pages are found the way a crawler finds them, from the app itself: every ``<loc>`` of
``sitemap.xml`` (each page in each language), then every same-site link of every exported
page, so a page added later is exported as soon as the sitemap or a page links to it. The
API's GET answers come from its own OpenAPI document. Links that start with ``/`` are made
relative, so the folder can be served from any static host, at its root or under a prefix.
"""

from __future__ import annotations

import asyncio
import json
import posixpath
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit
from xml.etree import ElementTree

import httpx

from clusterscout.settings import Settings
from clusterscout.web.app import create_app

_LINK: Final = re.compile(r'\b(href|src|action)="(/(?!/)[^"]*)"')
# On a static host a filter form cannot ask the server for a fragment; it reloads the page.
_HTMX: Final = re.compile(r'\s(hx-[a-z-]+)="[^"]*"')
_SITEMAP_NS: Final = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
API_PREFIX: Final = "/api/"
LIVE_ONLY: Final = ("/api/v1/launch/",)
"""Paths answered per request (launch files for any node count and layout): not exported."""
ROOT_PAGE: Final = (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
    "<title>clusterscout</title></head>"
    '<body><p><a href="en/">English</a> · <a href="pt/">Português</a> · '
    '<a href="es/">Español</a> · <a href="fr/">Français</a> · <a href="de/">Deutsch</a>'
    "</p></body></html>\n"
)
MAX_FILES: Final = 20_000


class ExportError(Exception):
    """The export could not be completed; the message says which page or answer failed."""


@dataclass
class ExportReport:
    """What was written."""

    pages: int = 0
    api_answers: int = 0
    other_files: int = 0
    pages_by_language: dict[str, int] = field(default_factory=dict)


def file_for(path: str) -> str:
    """The file (relative to the export folder) that answers ``path``.

    ``/en/offers/`` -> ``en/offers/index.html``; an API answer gets ``.json`` (its path is
    also a folder: ``/api/v1/offers`` and ``/api/v1/offers/{id}/prices``); others are as is.

    >>> file_for("/en/offers/"), file_for("/api/v1/offers"), file_for("/static/app.css")
    ('en/offers/index.html', 'api/v1/offers.json', 'static/app.css')
    """
    rel = path.lstrip("/")
    if path.endswith("/"):
        return rel + "index.html"
    if path.startswith(API_PREFIX) and "." not in rel.rsplit("/", 1)[-1]:
        return rel + ".json"
    return rel


def relative_link(target: str, page: str) -> str:
    """``target`` (a path with an optional query) as seen from the page at ``page``.

    >>> relative_link("/static/app.css?v=1", "/en/offers/")
    '../../static/app.css?v=1'
    >>> relative_link("/en/", "/en/offers/"), relative_link("/api/v1/offers?gpu=x", "/en/")
    ('../', '../api/v1/offers.json?gpu=x')
    """
    parts = urlsplit(target)
    path = parts.path
    if path.startswith(API_PREFIX):
        path = "/" + file_for(path)
    base = page if page.endswith("/") else posixpath.dirname(page) + "/"
    rel = posixpath.relpath(path, base.rstrip("/") or "/")
    if path.endswith("/"):
        rel = "./" if rel == "." else rel + "/"
    query = f"?{parts.query}" if parts.query else ""
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    return rel + query + fragment


def rewrite(html: str, page: str, live: str = "") -> str:
    """Site-absolute links made relative to ``page``; htmx attributes dropped.

    Links to answers a static host cannot give (``LIVE_ONLY``: files made per request, such as
    launch files) point at the live site ``live`` instead.

    >>> rewrite('<a href="/api/v1/launch/x/slurm?nodes=2">', "/en/", "https://cs.example")
    '<a href="https://cs.example/api/v1/launch/x/slurm?nodes=2">'
    """

    def link(m: re.Match[str]) -> str:
        target = m.group(2)
        if live and target.startswith(LIVE_ONLY):
            return f'{m.group(1)}="{live}{target}"'
        return f'{m.group(1)}="{relative_link(target, page)}"'

    return _HTMX.sub("", _LINK.sub(link, html))


def links(html: str) -> set[str]:
    """Same-site paths an HTML page links to (without query or fragment)."""
    return {urlsplit(m.group(2)).path for m in _LINK.finditer(html)}


class _Exporter:
    def __init__(self, client: httpx.AsyncClient, out: Path, live: str = "") -> None:
        self.client = client
        self.out = out
        self.live = live
        self.done: set[str] = set()
        self.report = ExportReport()

    async def get(self, path: str) -> httpx.Response:
        r = await self.client.get(path, headers={"Accept-Encoding": "identity"})
        if r.status_code != 200:
            msg = f"GET {path} answered {r.status_code}; nothing more was exported"
            raise ExportError(msg)
        return r

    def write(self, path: str, body: bytes) -> None:
        target = self.out / file_for(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)

    async def crawl(self, start: list[str]) -> None:
        queue = list(dict.fromkeys(start))
        while queue:
            path = queue.pop(0)
            if path in self.done or path.startswith(API_PREFIX):
                continue
            if len(self.done) >= MAX_FILES:
                msg = f"more than {MAX_FILES} files: the site links to itself without end?"
                raise ExportError(msg)
            self.done.add(path)
            r = await self.get(path)
            if r.headers.get("content-type", "").startswith("text/html"):
                html = r.text
                self.write(path, rewrite(html, path, self.live).encode())
                self.report.pages += 1
                lang = path.strip("/").split("/", 1)[0]
                by_lang = self.report.pages_by_language
                by_lang[lang] = by_lang.get(lang, 0) + 1
                queue.extend(p for p in sorted(links(html)) if p not in self.done)
            else:
                self.write(path, r.content)
                self.report.other_files += 1

    async def api(self) -> None:
        spec = (await self.get("/api/v1/openapi.json")).json()
        self.write("/api/v1/openapi.json", json.dumps(spec).encode())
        self.report.api_answers += 1
        values = await self._path_values()
        for path, ops in spec["paths"].items():
            if "get" not in ops or path.startswith(LIVE_ONLY):
                continue
            for concrete in _expand(path, values):
                r = await self.get(concrete)
                self.write(concrete, r.content)
                self.report.api_answers += 1

    async def _path_values(self) -> dict[str, list[str]]:
        providers = (await self.get("/api/v1/providers")).json()["data"]
        ids: list[str] = []
        offset = 0
        while True:
            page = (await self.get(f"/api/v1/offers?limit=1000&offset={offset}")).json()
            ids += [o["id"] for o in page["data"]]
            offset += len(page["data"])
            if not page["data"] or offset >= page["count"]:
                break
        return {"slug": [p["slug"] for p in providers], "offer_id": ids}


def _expand(path: str, values: dict[str, Any]) -> list[str]:
    names = re.findall(r"\{(\w+)\}", path)
    if not names:
        return [path]
    if len(names) != 1 or names[0] not in values:
        msg = f"cannot export {path}: no list of values for {names}"
        raise ExportError(msg)
    return [path.replace("{" + names[0] + "}", str(v)) for v in values[names[0]]]


def _sitemap_paths(xml: bytes) -> list[str]:
    root = ElementTree.fromstring(xml)  # noqa: S314 - our own sitemap, rendered just now
    return [urlsplit(loc.text or "").path for loc in root.iter(f"{_SITEMAP_NS}loc")]


async def _export(settings: Settings, out: Path) -> ExportReport:
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url=settings.site_url()) as client:
            exporter = _Exporter(client, out, settings.site_url())
            sitemap = (await exporter.get("/sitemap.xml")).content
            exporter.write("/sitemap.xml", sitemap)
            exporter.write("/robots.txt", (await exporter.get("/robots.txt")).content)
            # "/" picks a language from Accept-Language; a static host cannot, so English.
            exporter.write("/", ROOT_PAGE.encode())
            await exporter.crawl([*_sitemap_paths(sitemap), "/static/favicon.svg"])
            await exporter.api()
            return exporter.report
    finally:
        app.state.cs.engine.dispose()


def export_site(settings: Settings, out: Path) -> ExportReport:
    """Write the site and the API's GET answers under ``out`` (created if missing).

    Raises:
        ExportError: when a page or an answer is not 200 (the folder is then incomplete).
    """
    out.mkdir(parents=True, exist_ok=True)
    # A thread of its own: the caller may already run an event loop (a notebook, a test).
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(_export(settings, out))).result()
