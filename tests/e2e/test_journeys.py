"""Buyer journeys in Chromium, from the home page, in the journey's language, on a laptop and
a phone, each in five interactions or fewer (clicks, selects, inputs), over the real catalog.

Each test counts its interactions through ``Steps``; following a link the page offers is one.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clusterscout.resources import bundled_catalog_dir

VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
MAX_INTERACTIONS = 5


@pytest.fixture(scope="module")
def catalog_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app over the shipped catalog (built into a temporary SQLite file), on loopback."""
    tmp = tmp_path_factory.mktemp("journeys")
    url = f"sqlite:///{tmp / 'catalog.sqlite3'}"
    cli = [str(Path(sys.executable).parent / "clusterscout"), "build-db", "--database-url", url]
    subprocess.run(cli, check=True, capture_output=True)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {"CLUSTERSCOUT_DATABASE_URL": url, "CLUSTERSCOUT_DATA_DIR": str(bundled_catalog_dir())}
    log = (tmp / "uvicorn.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "clusterscout.web.app:app_from_env", "--factory",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            pytest.fail(f"the app did not start; see {log.name}")
        time.sleep(0.1)  # polling for start-up, not timing anything
    yield base
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


class Steps:
    """Counts the interactions of one journey and fails past the budget."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.count = 0

    def click(self, locator: Any) -> None:
        self.count += 1
        assert self.count <= MAX_INTERACTIONS, "journey needs more than five interactions"
        locator.first.click()
        self.page.wait_for_load_state()


@pytest.fixture(params=list(VIEWPORTS))
def page(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORTS[request.param], accept_downloads=True)
    p = context.new_page()
    p.set_default_timeout(60_000)
    yield p
    context.close()


def _no_page_scroll(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"] + 1, f"page is {width}px wide"


def test_pt_cheapest_h100_infiniband_compare_three_then_launch_file(
    catalog_server: str, page: Any, tmp_path: Path
) -> None:
    page.goto(f"{catalog_server}/pt/")
    steps = Steps(page)
    steps.click(page.get_by_role("link", name=re.compile("H100 sob demanda mais baratos")))
    assert "/pt/multi-node/" in page.url and "min_nodes=4" in page.url
    _no_page_scroll(page)
    steps.click(page.get_by_role("link", name=re.compile(r"Comparar as \d primeiras")))
    assert "/pt/compare/offers/" in page.url and "nodes=4" in page.url
    columns = page.locator("table.compare-offers thead th")
    assert 2 <= columns.count() <= 3
    # Prices by tier, each with its date ("em" + a Portuguese date), in Portuguese.
    assert page.get_by_text(re.compile("Sob demanda, por GPU-hora", re.I)).count() == 1
    _no_page_scroll(page)
    steps.click(page.get_by_role("link", name=re.compile("Arquivos de lançamento para 4 nós")))
    assert "nodes=4" in page.url and "#launch-" in page.url
    offer = page.url.rsplit("#launch-", 1)[1]
    row = page.locator(f"tr#launch-{offer}")
    assert row.locator("td.num").first.inner_text().strip() == "4"
    with page.expect_download() as info:
        steps.click(row.locator("a.download"))
    saved = tmp_path / "launch"
    info.value.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    assert re.search(r"\b4\b", text), "the launch file is not for 4 nodes"
    assert steps.count <= MAX_INTERACTIONS


def test_de_64_gpus_for_6_months_in_euro_at_each_provider(catalog_server: str, page: Any) -> None:
    page.goto(f"{catalog_server}/de/")
    link = page.get_by_role("link", name=re.compile("64 GPUs für 6 Monate"))
    steps = Steps(page)
    steps.click(link)
    assert "/de/quote/" in page.url
    assert page.get_by_text("€").count() > 0 or page.get_by_text("EUR").count() > 0
    _no_page_scroll(page)


def test_fr_do_i_need_multi_node_for_13b_on_1t_tokens_in_30_days(
    catalog_server: str, page: Any
) -> None:
    page.goto(f"{catalog_server}/fr/")
    steps = Steps(page)
    steps.click(page.get_by_role("link", name=re.compile("pré-entraîner un modèle de 13B")))
    assert "deadline_days=30" in page.url
    # The deadline arrives in days, as asked, and the verdict answers in French.
    assert page.locator("#f-deadline_days, [name=deadline_days]").first.input_value() == "30"
    verdict = page.get_by_role("heading", name=re.compile("Avez-vous besoin de plusieurs nœuds"))
    assert verdict.count() == 1
    body = page.locator("main").inner_text()
    assert "30,0 jours" in body or "30 jours" in body
    assert re.search(r"\bOui\b|\bNon\b", body)
    _no_page_scroll(page)


def test_en_70b_lora_on_1b_tokens_nodes_time_cost_where(catalog_server: str, page: Any) -> None:
    page.goto(f"{catalog_server}/en/")
    steps = Steps(page)
    steps.click(page.get_by_role("link", name=re.compile("LoRA on a 70B model")))
    assert "job=lora" in page.url
    first = page.locator("table.plan-options tbody tr").first
    cells = first.locator("td.num")
    # Where (a provider), what cost ($), how long (a duration) and how many nodes.
    assert first.locator("th a").first.inner_text().strip()
    assert "$" in cells.nth(0).inner_text()
    assert re.search(r"\d", cells.nth(1).inner_text())
    assert re.fullmatch(r"\d+", cells.nth(3).inner_text().strip())
    _no_page_scroll(page)
