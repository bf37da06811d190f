"""export-site: Chromium crawls the export from a plain static server, under a path prefix."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urldefrag, urlsplit
from xml.etree import ElementTree

import httpx
import pytest
from click.testing import CliRunner

from clusterscout.cli import app
from clusterscout.settings import Settings

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]
LANGS = ("en", "pt", "es", "fr", "de")
PREFIX = "/site/"  # served below the host's root, as on many static hosts
PUBLIC = "https://clusterscout.example"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def exported(fixture_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("static")
    result = CliRunner().invoke(
        app,
        ["export-site", str(root / "site"), "--public-url", PUBLIC,
         "--database-url", str(fixture_settings.database_url)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "exported" in result.output
    return root


@pytest.fixture(scope="module")
def static_server(exported: Path) -> Iterator[str]:
    port = free_port()
    cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
           "--directory", str(exported)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            httpx.get(base + PREFIX, timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    yield base
    proc.terminate()
    proc.wait(timeout=10)


def test_chromium_finds_no_broken_link_and_every_page_in_every_language(
    browser: object, static_server: str, exported: Path
) -> None:
    context = browser.new_context()  # type: ignore[attr-defined]
    page = context.new_page()
    site = static_server + PREFIX
    # Like a search engine: from the home page and every page of the sitemap.
    sitemap = ElementTree.parse(exported / "site" / "sitemap.xml")  # noqa: S314 - our own file
    locs = [e.text or "" for e in sitemap.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert len(locs) >= 5 * len(LANGS)
    assert all(loc.startswith(PUBLIC + "/") for loc in locs)
    seen: dict[str, int] = {}
    queue = [site, *(site + loc.removeprefix(PUBLIC + "/") for loc in locs)]
    broken: list[str] = []
    while queue:
        url = queue.pop(0)
        if url in seen:
            continue
        if not url.endswith("/"):  # an asset, a chart, a CSV, JSON: fetched, not shown
            status = context.request.get(url).status
            seen[url] = status
            if status != 200:
                broken.append(f"{url}: {status}")
            continue
        response = page.goto(url)
        status = response.status if response else 0
        seen[url] = status
        if status != 200:
            broken.append(f"{url}: {status}")
            continue
        found = page.eval_on_selector_all(
            "a[href], link[href], script[src], img[src], form[action]",
            "els => els.map(e => e.href || e.src || e.action)",
        )
        for link in found:
            target = urldefrag(link).url.split("?", 1)[0]
            if target.startswith(site) and target not in seen:
                queue.append(target)
            elif target.startswith(static_server) and not target.startswith(site):
                broken.append(f"{url} leaves the prefix: {link}")
    context.close()
    assert not broken, broken[:10]
    pages = {urlsplit(u).path.removeprefix(PREFIX) for u in seen}
    by_lang = {
        lang: {p.split("/", 1)[1] for p in pages if p.startswith(lang + "/")} for lang in LANGS
    }
    assert by_lang["en"]
    for lang in LANGS:
        assert by_lang[lang] == by_lang["en"], lang
    # Links found pages beyond the sitemap (charts, assets), and pages link back in.
    assert len(seen) > len(locs)


def test_the_api_answers_are_there_as_json(static_server: str, exported: Path) -> None:
    site = static_server + PREFIX
    offers = httpx.get(site + "api/v1/offers.json").json()
    assert offers["count"] == len(offers["data"]) > 0
    for offer in offers["data"]:
        prices = httpx.get(site + f"api/v1/offers/{offer['id']}/prices.json")
        assert prices.json()["meta"]["offer_id"] == offer["id"]
    providers = httpx.get(site + "api/v1/providers.json").json()["data"]
    for p in providers:
        assert httpx.get(site + f"api/v1/providers/{p['slug']}.json").json()["slug"] == p["slug"]
    spec = json.loads((exported / "site" / "api" / "v1" / "openapi.json").read_text())
    assert "/api/v1/offers" in spec["paths"]
