"""Accessibility and layout in Chromium: axe-core (WCAG 2.2 AA rules) and phone-width checks."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("browser")]

AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
WCAG22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
# Every page type: home, both listings, a provider with and one without prices, the
# comparison (picker and table), the plan (form and answer), downloads and changes.
PAGES = {
    "home": "/{lang}/",
    "listing": "/{lang}/multi-node/?fabric=infiniband",
    "offers": "/{lang}/offers/",
    "provider": "/{lang}/providers/alpha/",
    "provider-unpriced": "/{lang}/providers/beta/",
    "compare-picker": "/{lang}/compare/",
    "compare": "/{lang}/compare/?p=alpha&p=beta",
    "plan-form": "/{lang}/plan/",
    "plan": "/{lang}/plan/?max_nodes=64&model=7B&precision=bf16&tokens=1e11",
    "quote": "/{lang}/quote/?gpus=16&months=6&gpu=H100",
    "downloads": "/{lang}/downloads/",
    "changes": "/{lang}/changes/",
    "directory": "/{lang}/providers/",
    "compare-offers": "/{lang}/compare/offers/?o=alpha-h100-ib&o=beta-mi300x-roce&nodes=4",
}
LANGS = ["en", "pt", "es", "fr", "de"]
WIDTHS = {"desktop": (1366, 900), "phone": (390, 844)}


def _open(browser: Browser, url: str, width: str) -> Page:
    w, h = WIDTHS[width]
    # bypass_csp lets the test inject axe-core; the app itself allows only its own scripts.
    context = browser.new_context(
        viewport={"width": w, "height": h}, is_mobile=width == "phone", bypass_csp=True
    )
    page = context.new_page()
    page.goto(url)
    page.wait_for_load_state("networkidle")
    return page


def _violations(page: Page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", WCAG22_AA
    )
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
    ]


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("name", list(PAGES))
def test_axe_finds_no_wcag22_aa_violation(
    browser: Browser, live_server: str, name: str, lang: str, width: str
) -> None:
    if not AXE.exists():
        pytest.skip(f"{AXE} is missing (make test installs axe-core with npm)")
    page = _open(browser, live_server + PAGES[name].format(lang=lang), width)
    try:
        assert _violations(page) == []
    finally:
        page.context.close()


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", list(PAGES))
def test_no_page_scrolls_sideways_on_a_phone(
    browser: Browser, live_server: str, name: str, lang: str
) -> None:
    page = _open(browser, live_server + PAGES[name].format(lang=lang), "phone")
    try:
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        wide = page.evaluate(
            "() => [...document.querySelectorAll('body *')].filter(e => "
            "e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && "
            "!e.closest('.table-wrap')).slice(0, 6).map(e => e.outerHTML.slice(0, 90) + "
            "'#' + e.id + ' ' + Math.round(e.getBoundingClientRect().right))"
        )
        assert overflow <= 0, f"{name} is {overflow} px wider than the screen: {wide}"
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    finally:
        page.context.close()


def test_compare_row_headers_keep_a_readable_width_on_a_phone(
    browser: Browser, live_server: str
) -> None:
    page = _open(browser, live_server + "/de/compare/?p=alpha&p=beta", "phone")
    try:
        widths = page.eval_on_selector_all(
            "table.compare tbody th[scope=row]",
            "els => els.map(e => e.getBoundingClientRect().width)",
        )
        assert widths
        assert min(widths) >= 80, widths
    finally:
        page.context.close()
