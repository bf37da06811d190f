"""The downloads page and files, the changes page and the Atom feeds (ADR 0016)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Final
from xml.etree import ElementTree as ET

from fastapi import APIRouter, Path, Request
from starlette.responses import RedirectResponse, Response

from clusterscout.app import changes, downloads, offers
from clusterscout.catalog.datapackage import LICENSE, TABLES
from clusterscout.domain.errors import InputError
from clusterscout.domain.messages import N_
from clusterscout.web import changes_view, params, seo
from clusterscout.web.api_error import ApiError
from clusterscout.web.changes_view import ChangeLine
from clusterscout.web.i18n import Formatter
from clusterscout.web.pages_common import Lang, base_context, known_lang, origin, render_html
from clusterscout.web.runtime import reading, snapshot_of, state_of

router = APIRouter(include_in_schema=False)

ATOM_NS: Final = "http://www.w3.org/2005/Atom"
FEED_ENTRIES: Final = 50
FILTER_PARAMS: Final = ("provider", "gpu")
_NAME = Annotated[str, Path(max_length=200, pattern=r"^[A-Za-z0-9._-]+$")]


def current_download(request: Request) -> downloads.Download:
    """The download of the request's data version (built once per version)."""
    st = state_of(request)
    snap = snapshot_of(request)
    homepage = f"{origin(request)}/en/downloads/"
    return st.memo.get(
        ("download", snap.data_version, snap.built_at, homepage),
        lambda: downloads.build(snap.conn, snap.data_version, snap.built_at, homepage),
    )


def _file_response(name: str, body: bytes) -> Response:
    media = downloads.MEDIA_TYPES[name.rsplit(".", 1)[-1]]
    return Response(
        body, media_type=media, headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )


@router.get("/downloads/latest.zip")
def latest_zip(request: Request) -> Response:
    """The current version's zip (a redirect, so the citable name is the one saved)."""
    return RedirectResponse(f"/downloads/{current_download(request).zip_name}", status_code=302)


@router.get("/downloads/{name}")
def download_zip(request: Request, name: _NAME) -> Response:
    """``clusterscout-<date>-<version>.zip``: every table of this data version."""
    found = current_download(request)
    if name != found.zip_name:
        raise ApiError(
            404, "not_found", f"no download {name!r}; the current one is {found.zip_name}", "name"
        )
    return _file_response(name, found.zip_bytes)


@router.get("/downloads/{stem}/{name}")
def download_file(request: Request, stem: _NAME, name: _NAME) -> Response:
    """One file of the current version: ``<table>.csv``, ``<table>.json``, ``datapackage.json``."""
    found = current_download(request)
    if stem != found.stem:
        raise ApiError(
            404, "not_found", f"no data version {stem!r}; the current one is {found.stem}", "stem"
        )
    if name not in found.files:
        raise ApiError(404, "not_found", f"no file {name!r} in {stem}", "name")
    return _file_response(name, found.files[name])


@router.get("/{lang}/downloads/")
def downloads_page(request: Request, lang: Lang) -> Response:
    """The versioned catalog files, their licence and how to cite them."""
    lang = known_lang(lang)
    if request.query_params:
        raise ApiError(
            400, "unknown_parameter", "unknown parameter", sorted(request.query_params)[0]
        )
    found = current_download(request)
    st = state_of(request)
    fmt = st.formatter(snapshot_of(request), lang)
    ctx = base_context(request, lang, "downloads/", section="downloads")
    base = f"/downloads/{found.stem}"
    sizes = found.sizes()
    files: list[dict[str, str]] = [
        {
            "table": table.name,
            "title": fmt.gettext(TABLE_TITLES[table.name]),
            "csv": f"{base}/{table.name}.csv",
            "json": f"{base}/{table.name}.json",
            "csv_size": fmt.compact(sizes[f"{table.name}.csv"]),
            "json_size": fmt.compact(sizes[f"{table.name}.json"]),
            "columns": fmt.number(len(table.columns)),
        }
        for table in TABLES
    ]
    distributions = [
        (f"/downloads/{found.zip_name}", "application/zip"),
        (f"{base}/datapackage.json", "application/json"),
        *((f["csv"], "text/csv") for f in files),
        *((f["json"], "application/json") for f in files),
    ]
    title = fmt.gettext("Download the catalog")
    description = fmt.gettext(
        "Every provider, offer and observed price of clusterscout as CSV and JSON, with a "
        "Data Package that describes each field, its unit and the licence."
    )
    ctx.update(
        download=found,
        zip_href=f"/downloads/{found.zip_name}",
        zip_size=fmt.compact(sizes[found.zip_name]),
        package_href=f"{base}/datapackage.json",
        files=files,
        license=LICENSE,
        built_day=fmt.day(found.built_on),
        page_title=title,
        page_description=description,
        citation=f"clusterscout, {found.built_on}, {origin(request)}/downloads/{found.zip_name}",
        jsonld=seo.script_json(
            seo.dataset(
                name=title,
                description=description,
                page_url=ctx["canonical"],
                origin=origin(request),
                version=found.version,
                date_modified=found.built_on,
                license_url=LICENSE["path"],
                distributions=distributions,
                lang=lang,
            )
        ),
    )
    return render_html(request, lang, "pages/downloads.html", ctx)


TABLE_TITLES: Final = {
    "providers": N_("Providers"),
    "offers": N_("Cluster offers"),
    "prices": N_("Price observations"),
}


def _filter(request: Request) -> changes.ChangeFilter:
    unknown = sorted(set(request.query_params) - set(FILTER_PARAMS))
    if unknown:
        raise InputError(unknown[0], "unknown parameter (accepted: provider, gpu)")
    with reading(request) as conn:
        return changes.parse_filter(
            conn, request.query_params.get("provider"), request.query_params.get("gpu")
        )


def _changes(request: Request, f: changes.ChangeFilter, limit: int) -> list[changes.Change]:
    st = state_of(request)
    with reading(request) as conn:
        return changes.changes(conn, st.settings.data_dir, f, limit)


@router.get("/{lang}/changes/")
def changes_page(request: Request, lang: Lang) -> Response:
    """New providers and offers, price changes and corrections, newest first; filterable."""
    lang = known_lang(lang)
    f = _filter(request)
    query = params.query_string(f.pairs())
    if "?" + request.url.query != query and request.url.query:
        return RedirectResponse(f"/{lang}/changes/{query}", status_code=302)
    st = state_of(request)
    fmt = st.formatter(snapshot_of(request), lang)
    found = _changes(request, f, changes.MAX_ENTRIES)
    ctx = base_context(request, lang, "changes/", query, section="changes")
    providers = sorted(
        st.providers(snapshot_of(request)).values(), key=lambda p: str(p["name"]).lower()
    )
    with reading(request) as conn:
        gpu_names = offers.gpu_names(conn)
    ctx.update(
        lines=changes_view.lines(fmt, found),
        filter=f,
        provider_choices=[(p["slug"], p["name"]) for p in providers],
        gpu_choices=gpu_names,
        feed_href=f"/{lang}/feed.atom{query}",
    )
    return render_html(request, lang, "pages/changes.html", ctx)


@router.get("/feed.atom")
def feed(request: Request) -> Response:
    """The changes as Atom, in English (the per-language feeds are ``/{lang}/feed.atom``)."""
    return _feed(request, "en")


@router.get("/{lang}/feed.atom")
def feed_in(request: Request, lang: Lang) -> Response:
    """The changes as Atom in ``lang``, filterable like the page (``provider``, ``gpu``)."""
    return _feed(request, known_lang(lang))


def _feed(request: Request, lang: str) -> Response:
    f = _filter(request)
    query = params.query_string(f.pairs())
    st = state_of(request)
    snap = snapshot_of(request)
    fmt = st.formatter(snap, lang)
    found = changes_view.lines(fmt, _changes(request, f, FEED_ENTRIES))
    base = origin(request)
    self_href = f"{base}{request.url.path}{query}"
    body = atom(fmt, base, self_href, f"{base}/{lang}/changes/{query}", found, snap.built_at)
    return Response(body, media_type="application/atom+xml; charset=utf-8")


def atom(
    fmt: Formatter,
    base: str,
    self_href: str,
    page_href: str,
    found: list[ChangeLine],
    built_at: str,
) -> bytes:
    """An Atom 1.0 document of ``found`` (newest first); entries link to provider pages."""
    ET.register_namespace("", ATOM_NS)

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        el = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attrs)
        if text is not None:
            el.text = text
        return el

    root = ET.Element(
        f"{{{ATOM_NS}}}feed", {"{http://www.w3.org/XML/1998/namespace}lang": fmt.lang}
    )
    sub(root, "title", fmt.gettext("clusterscout: what changed"))
    sub(
        root,
        "subtitle",
        fmt.gettext("New providers and offers, price changes and corrected facts."),
    )
    sub(root, "id", self_href)
    sub(root, "link", rel="self", href=self_href, type="application/atom+xml")
    sub(root, "link", rel="alternate", href=page_href, type="text/html")
    sub(root, "updated", _stamp(found[0].on) if found else _built(built_at))
    author = sub(root, "author")
    sub(author, "name", "clusterscout")
    sub(author, "uri", base)
    for line in found:
        entry = sub(root, "entry")
        sub(entry, "title", line.title)
        sub(entry, "id", f"{page_href.split('?', maxsplit=1)[0]}#{line.key}")
        sub(entry, "updated", _stamp(line.on))
        sub(entry, "link", rel="alternate", href=f"{base}{line.href}", type="text/html")
        if line.source_url:
            sub(entry, "link", rel="related", href=line.source_url)
        summary = " · ".join((line.day, line.title, *line.details))
        sub(entry, "summary", summary)
    body: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=False)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + body + b"\n"


def _stamp(day: str) -> str:
    return f"{day}T00:00:00Z"


def _built(built_at: str) -> str:
    moment = datetime.fromisoformat(built_at)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
