"""The filter flow, a provider and a comparison in a real Chromium, in every language."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]
LANGS = ("en", "pt", "es", "fr", "de")


class Problems:
    """Console errors, page errors, failed and 4xx/5xx requests seen by one page."""

    def __init__(self, page: Page) -> None:
        self.items: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.items.append(f"page error: {exc}"))
        page.on("requestfailed", lambda req: self.items.append(f"failed: {req.url}"))
        page.on("response", self._response)

    def _console(self, msg: Any) -> None:
        if msg.type in {"error", "warning"} and "Content Security Policy" in msg.text:
            self.items.append(f"CSP: {msg.text}")
        elif msg.type == "error":
            self.items.append(f"console: {msg.text}")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.items.append(f"HTTP {response.status}: {response.url}")


@pytest.fixture
def page(browser: Browser) -> Iterator[tuple[Page, Problems]]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    p = context.new_page()
    problems = Problems(p)
    yield p, problems
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_filter_open_provider_and_compare(
    page: tuple[Page, Problems], live_server: str, screenshots: Path, lang: str
) -> None:
    p, problems = page
    p.goto(f"{live_server}/{lang}/multi-node/")
    expect(p.locator("html")).to_have_attribute("lang", lang)
    rows = p.locator("#results table.offers tbody tr")
    expect(rows).to_have_count(4)

    p.locator("#f-fabric-infiniband").check()
    p.wait_for_url(re.compile(r"/multi-node/\?fabric=infiniband$"))
    expect(rows).to_have_count(2)
    p.locator("#f-rdma-true").check()
    p.wait_for_url(re.compile(r"/multi-node/\?fabric=infiniband&rdma=true$"))
    expect(rows).to_have_count(2)
    expect(p.locator("#f-fabric-roce-count")).to_have_text("1")
    p.screenshot(path=str(screenshots / f"multi-node-{lang}.png"), full_page=False)

    p.reload()
    expect(p.locator("#f-fabric-infiniband")).to_be_checked()
    expect(rows).to_have_count(2)

    p.locator("#results a[href$='/providers/alpha/']").first.click()
    p.wait_for_url(re.compile(rf"/{lang}/providers/alpha/$"))
    expect(p.locator("#dim-network")).to_be_visible()
    expect(p.locator("table.offers tbody tr")).to_have_count(2)
    p.screenshot(path=str(screenshots / f"provider-{lang}.png"), full_page=True)

    p.goto(f"{live_server}/{lang}/compare/")
    p.locator("#p-alpha").check()
    p.locator("#p-beta").check()
    p.locator("form.picker button[type=submit]").click()
    p.wait_for_url(re.compile(rf"/{lang}/compare/\?p=alpha&p=beta$"))
    expect(p.locator("table.compare thead th")).to_have_count(2)
    p.screenshot(path=str(screenshots / f"compare-{lang}.png"), full_page=True)

    assert not problems.items, problems.items


def test_filters_work_without_javascript(browser: Browser, live_server: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    p = context.new_page()
    problems = Problems(p)
    p.goto(f"{live_server}/de/offers/")
    p.locator("#f-fabric-roce").check()
    p.locator("form#filters button[type=submit]").click()
    p.wait_for_url(re.compile(r"/de/offers/\?fabric=roce$"))
    expect(p.locator("#results table.offers tbody tr")).to_have_count(1)
    assert not problems.items, problems.items
    context.close()


@pytest.mark.parametrize("path", ["/{lang}/", "/{lang}/offers/", "/{lang}/compare/?p=alpha&p=beta"])
def test_pages_render_without_console_errors_on_a_phone(
    browser: Browser, live_server: str, screenshots: Path, path: str
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    p = context.new_page()
    problems = Problems(p)
    for lang in LANGS:
        p.goto(live_server + path.format(lang=lang))
        expect(p.locator("h1")).to_be_visible()
    name = path.strip("/").replace("{lang}/", "").split("?")[0] or "home"
    p.screenshot(path=str(screenshots / f"phone-{name}.png"), full_page=True)
    assert not problems.items, problems.items
    context.close()
