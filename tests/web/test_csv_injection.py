"""No CSV cell of any download starts a spreadsheet formula, with crafted catalog names and
terms (the OWASP CSV-injection rule); numbers, negative ones included, stay numbers."""

from __future__ import annotations

import csv
import io
import re
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from web_support import TestClient

from clusterscout.catalog.exports import safe_text_cell, to_csv
from clusterscout.catalog.load import load_catalog
from clusterscout.settings import Settings
from clusterscout.store.build import build_database
from clusterscout.store.db import make_engine
from clusterscout.web.app import create_app

FIXTURE_CATALOG = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
FORMULA = '=HYPERLINK("http://evil.example","x")'
TERM = "+1 year"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("csv")
    data = root / "data"
    shutil.copytree(FIXTURE_CATALOG, data)
    alpha = data / "providers" / "alpha.toml"
    text = alpha.read_text()
    assert 'name = "Alpha Cloud"' in text and 'term = "1 year"' in text
    text = text.replace('name = "Alpha Cloud"', f"name = '{FORMULA}'", 1)
    text = text.replace('term = "1 year"', f'term = "{TERM}"', 1)
    alpha.write_text(text)
    db = root / "crafted.sqlite3"
    engine = make_engine(f"sqlite:///{db}")
    # As a price feed would write it: no translation files for the crafted term.
    loaded = load_catalog(data)
    assert loaded.catalog is not None
    build_database(engine, loaded.catalog, "crafted")
    engine.dispose()
    settings = Settings(
        database_url=f"sqlite:///{db}", data_dir=data, public_url="http://testserver"
    )
    with TestClient(create_app(settings), follow_redirects=True) as client:
        yield client


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _assert_safe(name: str, text: str) -> None:
    cells = _cells(text)
    assert cells, name
    for cell in cells:
        if cell.startswith(FORMULA_STARTS):
            # Only a number may start with '-' or '+': it is a value, not a formula.
            assert re.fullmatch(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?", cell), (name, cell)


def test_the_offers_csv_escapes_a_crafted_provider_name(crafted: TestClient) -> None:
    r = crafted.get("/api/v1/offers.csv")
    assert r.status_code == 200
    _assert_safe("offers.csv", r.text)


def test_every_csv_of_the_zip_and_of_the_downloads_is_escaped(crafted: TestClient) -> None:
    r = crafted.get("/downloads/latest.zip")
    assert r.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(r.content))
    csvs = [n for n in archive.namelist() if n.endswith(".csv")]
    assert {"providers.csv", "prices.csv"} <= {Path(n).name for n in csvs}
    seen = ""
    for name in csvs:
        text = archive.read(name).decode()
        _assert_safe(name, text)
        seen += text
        # The same file served on its own is the same, escaped, file.
        stem = Path(name).parent.name
        alone = crafted.get(f"/downloads/{stem}/{Path(name).name}")
        assert alone.status_code == 200
        assert alone.text == text
    # The crafted text is there, as text a spreadsheet shows (the apostrophe is hidden).
    assert f"'{FORMULA}" in _cells(seen)
    assert f"'{TERM}" in _cells(seen)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("=1+2", "'=1+2"),
        ("+cmd", "'+cmd"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("plain", "plain"),
        ("a=b", "a=b"),
    ],
)
def test_text_cells_that_would_start_a_formula_get_an_apostrophe(text: str, expected: str) -> None:
    assert safe_text_cell(text) == expected


def test_numbers_stay_numbers() -> None:
    out = to_csv(
        [{"a": -3, "b": -1.5, "c": "-1.5", "d": True, "e": None}], ("a", "b", "c", "d", "e")
    )
    assert out.splitlines()[1] == "-3,-1.5,'-1.5,true,"
