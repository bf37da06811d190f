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
        page.on("requestfailed", self._failed)
        page.on("response", self._response)

    def _console(self, msg: Any) -> None:
        if msg.type in {"error", "warning"} and "Content Security Policy" in msg.text:
            self.items.append(f"CSP: {msg.text}")
        elif msg.type == "error":
            self.items.append(f"console: {msg.text}")

    def _failed(self, request: Any) -> None:
        # Chromium fetches the favicon after the load event, so moving on to the next page
        # cancels it with ERR_ABORTED. A cancelled request is not a broken one; a missing
        # resource still shows up as a 4xx in _response.
        if request.failure != "net::ERR_ABORTED":
            self.items.append(f"failed: {request.url} ({request.failure})")

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
    expect(rows).to_have_count(5)

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
    # The live region announces the count only, after an htmx swap.
    expect(p.locator("#live-count")).to_have_text("")

    # One offer states neither fabric nor RDMA: the header says so and lets it in in one click.
    p.locator("#results a.include-unknown").click()
    p.wait_for_url(re.compile(r"include_unknown=fabric&include_unknown=rdma"))
    expect(rows).to_have_count(3)
    p.go_back()
    expect(rows).to_have_count(2)

    p.locator("#results a[href$='/providers/alpha/']").first.click()
    p.wait_for_url(re.compile(rf"/{lang}/providers/alpha/$"))
    expect(p.locator("#dim-network")).to_be_visible()
    expect(p.locator("table.offers tbody tr")).to_have_count(2)
    p.screenshot(path=str(screenshots / f"provider-{lang}.png"), full_page=True)
    # Let the lazily loaded price charts finish, so leaving the page does not abort them.
    p.wait_for_load_state("networkidle")

    p.goto(f"{live_server}/{lang}/compare/")
    p.locator("#p-alpha").check()
    p.locator("#p-beta").check()
    p.locator("form.picker button[type=submit]").click()
    p.wait_for_url(re.compile(rf"/{lang}/compare/\?p=alpha&p=beta$"))
    expect(p.locator("table.compare thead th")).to_have_count(2)
    p.screenshot(path=str(screenshots / f"compare-{lang}.png"), full_page=True)

    assert not problems.items, problems.items


def test_the_region_select_filters_by_continent_and_country(
    page: tuple[Page, Problems], live_server: str
) -> None:
    p, problems = page
    p.goto(f"{live_server}/pt/multi-node/")
    rows = p.locator("#results table.offers tbody tr")
    expect(rows).to_have_count(5)
    select = p.locator("#f-region")
    # Grouped by continent, in Portuguese (CLDR names), with a count per choice.
    expect(select.locator("optgroup[label='Europa'] option[value='DE']")).to_have_text(
        "Alemanha (2)"
    )
    select.select_option("BR")
    p.wait_for_url(re.compile(r"/pt/multi-node/\?region=BR$"))
    expect(rows).to_have_count(1)
    expect(rows.first.locator("td.c-region")).to_contain_text("BR")
    select.select_option("europe")
    p.wait_for_url(re.compile(r"/pt/multi-node/\?region=europe$"))
    expect(rows).to_have_count(4)
    # A city typed in the URL means its country, which the select then shows.
    p.goto(f"{live_server}/pt/multi-node/?region=sao+paulo")
    expect(rows).to_have_count(1)
    expect(select).to_have_value("BR")
    # Part of a region name is kept as typed.
    p.goto(f"{live_server}/pt/multi-node/?region=eu-cen")
    expect(rows).to_have_count(2)
    expect(select).to_have_value("eu-cen")
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


def _images_loaded(p: Page, selector: str) -> list[int]:
    return list(
        p.eval_on_selector_all(selector, "els => els.map(e => e.complete ? e.naturalWidth : 0)")
    )


def test_plan_form_verdict_table_and_charts(
    page: tuple[Page, Problems], live_server: str, screenshots: Path
) -> None:
    p, problems = page
    p.goto(f"{live_server}/en/plan/")
    expect(p.locator("html")).to_have_attribute("lang", "en")
    p.locator("#pf-model").select_option("405B")
    p.locator("#pf-tokens").fill("2e11")
    p.locator("#pf-max_nodes").fill("32")
    p.locator("#plan-form button[type=submit]").click()
    p.wait_for_url(
        re.compile(
            r"/en/plan/\?job=pretrain&max_nodes=32&model=405B&precision=bf16&stack=megatron&tokens=2e11$"
        )
    )
    expect(p.locator("#verdict")).to_contain_text("needs more than one 8-GPU node")
    expect(p.locator("table.plan-options tbody tr").first).to_be_visible()
    expect(p.locator("table.plan-options tr.pareto").first).to_be_visible()
    expect(p.locator("#chart-scaling img")).to_be_visible()
    expect(p.locator("#chart-cost img")).to_be_visible()
    p.wait_for_function(
        "() => [...document.querySelectorAll('#charts img')]"
        ".every(i => i.complete && i.naturalWidth > 0)"
    )
    assert all(w > 0 for w in _images_loaded(p, "#charts img"))
    expect(p.locator("table.scaling tbody tr")).to_have_count(6)
    p.screenshot(path=str(screenshots / "plan-en.png"), full_page=True)

    # The URL is the state: reloading shows the same plan and the same form values.
    p.reload()
    expect(p.locator("#pf-tokens")).to_have_value("2e11")
    expect(p.locator("#pf-model")).to_have_value("405B")

    # A bad value is shown next to its field.
    p.locator("#pf-tokens").fill("-3")
    p.locator("#plan-form button[type=submit]").click()
    expect(p.locator("#err-tokens")).to_be_visible()
    # The 400 of the bad value is expected (the document itself, reported twice).
    problems.items = [i for i in problems.items if "400" not in i]
    assert not problems.items, problems.items


def test_job_selector_shows_the_fields_of_the_job_and_sizes_inference(
    page: tuple[Page, Problems], live_server: str
) -> None:
    p, problems = page
    p.goto(f"{live_server}/en/plan/")
    expect(p.locator("#pf-context")).to_be_hidden()
    expect(p.locator("#pf-tokens")).to_be_visible()
    p.locator("#pf-job").select_option("inference")
    expect(p.locator("#pf-context")).to_be_visible()
    expect(p.locator("#pf-tokens")).to_be_hidden()
    expect(p.locator("#pf-lora_rank")).to_be_hidden()
    p.locator("#pf-model").select_option("405B")
    p.locator("#pf-precision").select_option("fp8")
    p.locator("#pf-context").fill("32768")
    p.locator("#pf-concurrency").fill("32")
    p.locator("#plan-form button[type=submit]").click()
    # hidden training fields are not sent, so the URL holds only what inference uses
    p.wait_for_url(re.compile(r"/en/plan/\?concurrency=32&context=32768&job=inference&"))
    assert "tokens=" not in p.url
    expect(p.locator("table.serving tbody tr").first).to_be_visible()
    expect(p.locator("#verdict")).to_contain_text("Do you need multi-node?")
    assert not problems.items, problems.items


def test_plan_in_german_with_charts_and_no_console_errors(
    browser: Browser, live_server: str, screenshots: Path
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    p = context.new_page()
    problems = Problems(p)
    p.goto(f"{live_server}/de/multi-node/")
    p.locator("nav.main-nav a[href='/de/plan/']").click()
    p.wait_for_url(re.compile(r"/de/plan/$"))
    p.locator("#pf-model").select_option("7B")
    p.locator("#pf-tokens").fill("1e11")
    p.locator("#plan-form button[type=submit]").click()
    p.wait_for_url(
        re.compile(
            r"/de/plan/\?job=pretrain&max_nodes=64&model=7B&precision=bf16&stack=megatron&tokens=1e11$"
        )
    )
    expect(p.locator("#verdict")).to_contain_text("Nein: Ein Knoten mit 8 GPUs")
    expect(p.locator("table.per-gpu tbody tr")).to_have_count(3)
    p.wait_for_function(
        "() => [...document.querySelectorAll('#charts img')]"
        ".every(i => i.complete && i.naturalWidth > 0)"
    )
    p.screenshot(path=str(screenshots / "plan-de.png"), full_page=True)

    p.goto(f"{live_server}/de/providers/alpha/")
    # The charts load lazily and sit below the ratings and the checklist: scroll to each, as
    # a reader would, before asking whether it rendered.
    for chart in p.locator(".price-chart img").all():
        chart.scroll_into_view_if_needed()
    p.wait_for_function(
        "() => [...document.querySelectorAll('.price-chart img')]"
        ".every(i => i.complete && i.naturalWidth > 0)"
    )
    expect(p.locator("table.history")).to_have_count(2)
    p.goto(f"{live_server}/de/multi-node/")
    p.locator("#f-ref").select_option("70b-fsdp-16")
    p.wait_for_url(re.compile(r"/de/multi-node/\?ref=70b-fsdp-16$"))
    expect(p.locator("#results td.ref-effective").first).to_be_visible()
    assert not problems.items, problems.items
    context.close()


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_download_a_launch_file_from_the_plan_panel(
    browser: Browser, live_server: str, lang: str, tmp_path: Path
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    p = context.new_page()
    problems = Problems(p)
    p.goto(f"{live_server}/{lang}/plan/?max_nodes=16&model=70B&precision=bf16&tokens=1e11")
    panel = p.locator("section#launch")
    expect(panel.locator("table.launch-files tbody tr").first).to_be_visible()
    link = panel.locator("a.download[href*='/slurm?']").first
    offer = link.get_attribute("href")
    assert offer is not None and "&tp=" in offer  # the option's layout travels in the link
    with p.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename.endswith(".sbatch")
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    script = saved.read_text()
    assert script.startswith("#!/bin/bash\n")
    assert "#SBATCH --nodes=" in script and "export TP=" in script
    context.close()
    assert not problems.items, problems.items
