"""The "Launch files" panels on the plan and provider pages, and published nccl-tests results."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

LANGS = ("en", "pt", "es", "fr", "de")
PLAN = "?max_nodes=16&model=70B&precision=bf16&tokens=1e11"
HEADINGS = {
    "en": "Launch files",
    "pt": "Arquivos de inicialização",
    "es": "Archivos de lanzamiento",
    "fr": "Fichiers de lancement",
    "de": "Startdateien",
}

# The sentence is a UI message, the note after it a launch.toml text (data/locale).
SKYPILOT_REFUSES = {
    "en": "SkyPilot cannot target alpha: ",
    "pt": "O SkyPilot não oferece suporte à alpha: ",
    "es": "SkyPilot no admite alpha: ",
    "fr": "SkyPilot ne prend pas en charge alpha: ",
    "de": "SkyPilot kann alpha nicht ansteuern: ",
}
NOT_A_CLOUD = {
    "en": "Not a SkyPilot cloud.",
    "pt": "Não é uma nuvem do SkyPilot.",
    "es": "No es una nube de SkyPilot.",
    "fr": "Pas un cloud SkyPilot.",
    "de": "Keine SkyPilot-Cloud.",
}


def _panel(page: str) -> str:
    found = re.search(r'<section[^>]*id="launch".*?</section>', page, re.S)
    assert found is not None, "no launch panel"
    return found.group(0)


def _rows(panel: str, table: str) -> list[str]:
    body = re.search(rf'<table class="{table}">.*?<tbody>(.*?)</tbody>', panel, re.S)
    return re.findall(r"<tr.*?</tr>", body.group(1), re.S) if body else []


def _downloads(row: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'<a class="download" href="([^"]+)"', row)]


@pytest.mark.parametrize("lang", LANGS)
def test_the_plan_page_has_a_launch_panel_per_option(client: TestClient, lang: str) -> None:
    r = client.get(f"/{lang}/plan/{PLAN}")
    assert r.status_code == 200
    panel = _panel(r.text)
    assert f'<h2 id="launch-title">{HEADINGS[lang]}</h2>' in panel
    rows = _rows(panel, "launch-files")
    options = _rows(r.text, "plan-options")
    assert 0 < len(rows) == min(len(options), 10)
    slurm = next(h for h in _downloads(rows[0]) if "/slurm?" in h)
    download = client.get(slurm)
    assert download.status_code == 200
    assert download.headers["content-disposition"].startswith("attachment; filename=")
    assert "export TP=" in download.text
    # The fixture providers are not SkyPilot clouds: the cell says so, with the data's reason,
    # both in the page's language.
    reason = re.search(r'<small class="detail">(.*?)</small>', rows[0], re.S)
    assert reason is not None
    assert reason.group(1).startswith(SKYPILOT_REFUSES[lang])
    assert (
        f'<span lang="{lang}">{html.escape(NOT_A_CLOUD[lang], quote=False)}</span>'
        in reason.group(1)
    )


@pytest.mark.parametrize("lang", LANGS)
def test_provider_page_has_launch_files_and_published_results(
    client: TestClient, lang: str
) -> None:
    r = client.get(f"/{lang}/providers/alpha/")
    assert r.status_code == 200
    panel = _panel(r.text)
    assert f'<h2 id="launch-title">{HEADINGS[lang]}</h2>' in panel
    (row,) = [r for r in _rows(panel, "launch-files") if 'id="launch-alpha-h100-ib"' in r]
    assert _downloads(row) == [
        "/api/v1/launch/alpha-h100-ib/slurm?nodes=2",
        "/api/v1/launch/alpha-h100-ib/check?nodes=2",
    ]
    measured = _rows(panel, "measured")
    assert len(measured) == 2  # both fixture points are H100, InfiniBand, 3200 Gb/s per node
    for row in measured:  # each point's source page is linked
        assert 'href="https://github.com/stas00/ml-engineering/' in row
    sizes = [re.sub(r"<.*?>", "", c).strip() for c in re.findall(r"<td.*?</td>", measured[0])]
    assert sizes[2] and not sizes[2][0].isdigit()  # an unstated size is said to be so
    cells = [re.sub(r"<.*?>", "", c).strip() for c in re.findall(r"<td.*?</td>", measured[1])]
    assert cells[0] == "all_reduce" and cells[2] == "128 MiB"
    assert cells[3].replace("\xa0", " ") == "278 GB/s"


def test_an_offer_without_hardware_results_has_no_results_table(client: TestClient) -> None:
    panel = _panel(client.get("/en/providers/beta/").text)
    assert 'id="launch-beta-' in panel
    assert 'class="measured"' not in panel
