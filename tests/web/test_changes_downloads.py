"""What changed (page, Atom feeds, filters) and the versioned downloads with their Data Package."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import zipfile
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Final
from xml.etree import ElementTree as ET

import pytest
from tests.conftest import FIXTURE_DATA_DIR
from web_support import LANGS, TestClient

from clusterscout.app.database import build, validate
from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.runner import run_feed
from clusterscout.settings import Settings
from clusterscout.store.db import make_engine
from clusterscout.web.app import create_app

ATOM: Final = "{http://www.w3.org/2005/Atom}"
BASE: Final = "http://testserver"
RAISED: Final = (
    "offer_id,tier,usd_per_gpu_hour,as_of,source_url,term,note,source_checked_on,source_kind\n"
    "alpha-h100-ib,on_demand,3.19,2026-11-28,https://alpha.example.com/pricing,,,2026-11-28,\n"
    "alpha-h100-ib,reserved,2.19,2026-11-27,https://alpha.example.com/pricing,1 year,,,\n"
)


@pytest.fixture(scope="module")
def repriced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The fixture site after a price feed raised Alpha's H100 on-demand price."""
    folder = tmp_path_factory.mktemp("repriced")
    db = folder / "db.sqlite3"
    engine = make_engine(f"sqlite:///{db}")
    build(engine, FIXTURE_DATA_DIR)
    prices = folder / "prices.csv"
    prices.write_text(RAISED, encoding="utf-8")
    report = run_feed(engine, FileFeed(), prices, now=datetime(2026, 11, 29, tzinfo=UTC))
    assert report.ok, report.message
    engine.dispose()
    settings = Settings(database_url=f"sqlite:///{db}", data_dir=FIXTURE_DATA_DIR, public_url=BASE)
    with TestClient(create_app(settings), follow_redirects=False) as client:
        yield client


def entries(body: bytes) -> tuple[ET.Element, list[ET.Element]]:
    root = ET.fromstring(body)  # noqa: S314 - our own answer
    assert root.tag == f"{ATOM}feed"
    return root, root.findall(f"{ATOM}entry")


def test_feed_parses_as_atom_and_shows_the_latest_price_change_first(
    repriced: TestClient,
) -> None:
    r = repriced.get("/feed.atom")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/atom+xml")
    root, found = entries(r.content)
    for tag in ("title", "id", "updated"):
        assert root.findtext(f"{ATOM}{tag}")
    first = found[0]
    title = first.findtext(f"{ATOM}title") or ""
    assert "$2.99" in title and "$3.19" in title
    assert first.findtext(f"{ATOM}updated") == "2026-11-28T00:00:00Z"
    link = first.find(f"{ATOM}link[@rel='alternate']")
    assert link is not None and link.get("href") == f"{BASE}/en/providers/alpha/"
    ids = [e.findtext(f"{ATOM}id") for e in found]
    assert len(ids) == len(set(ids))
    stamps = [e.findtext(f"{ATOM}updated") or "" for e in found]
    assert stamps == sorted(stamps, reverse=True)


@pytest.mark.parametrize("lang", LANGS)
def test_per_language_feed_is_in_its_language_and_links_its_pages(
    repriced: TestClient, lang: str
) -> None:
    root, found = entries(repriced.get(f"/{lang}/feed.atom").content)
    assert root.get("{http://www.w3.org/XML/1998/namespace}lang") == lang
    assert found
    for e in found:
        link = e.find(f"{ATOM}link[@rel='alternate']")
        assert link is not None
        assert (link.get("href") or "").startswith(f"{BASE}/{lang}/providers/")
    english = [e.findtext(f"{ATOM}title") for e in entries(repriced.get("/feed.atom").content)[1]]
    if lang != "en":
        assert [e.findtext(f"{ATOM}title") for e in found] != english


def test_feed_filtered_by_provider_or_gpu_keeps_only_theirs(repriced: TestClient) -> None:
    _, beta = entries(repriced.get("/de/feed.atom?provider=beta").content)
    assert beta
    for e in beta:
        link = e.find(f"{ATOM}link[@rel='alternate']")
        assert link is not None and link.get("href") == f"{BASE}/de/providers/beta/"
    _, mi300 = entries(repriced.get("/feed.atom?gpu=MI300X-192GB").content)
    assert mi300
    assert all("MI300X-192GB" in (e.findtext(f"{ATOM}summary") or "") for e in mi300)
    _, h100 = entries(repriced.get("/feed.atom?gpu=h100").content)  # an alias works too
    assert any("$3.19" in (e.findtext(f"{ATOM}title") or "") for e in h100)
    assert all("MI300X" not in (e.findtext(f"{ATOM}summary") or "") for e in h100)


@pytest.mark.parametrize(
    ("query", "field"),
    [("provider=nobody", "provider"), ("gpu=V100", "gpu"), ("since=2026", "since")],
)
def test_bad_filters_are_400_naming_the_field(client: TestClient, query: str, field: str) -> None:
    for path in ("/feed.atom", "/pt/feed.atom", "/pt/changes/"):
        r = client.get(f"{path}?{query}")
        assert r.status_code == 400, path
        assert field in r.text


def test_a_reserved_price_change_names_its_term(repriced: TestClient) -> None:
    _, found = entries(repriced.get("/pt/feed.atom?provider=alpha").content)
    titles = [e.findtext(f"{ATOM}title") or "" for e in found]
    reserved = [t for t in titles if "2,29" in t]
    assert len(reserved) == 1
    assert "2,19" in reserved[0]
    assert "1 ano" in reserved[0]
    related = found[titles.index(reserved[0])].find(f"{ATOM}link[@rel='related']")
    assert related is not None and related.get("href") == "https://alpha.example.com/pricing"


def test_a_feed_with_no_entries_is_still_valid_atom(client: TestClient) -> None:
    root, found = entries(client.get("/feed.atom?provider=gamma&gpu=MI300X-192GB").content)
    assert found == []
    assert root.findtext(f"{ATOM}updated", "").endswith("Z")
    html = client.get("/en/changes/?gpu=MI300X-192GB&provider=gamma").text
    assert "No changes recorded yet" in html


def test_downloads_page_takes_no_parameters(client: TestClient) -> None:
    assert client.get("/en/downloads/?format=xml").status_code == 400


def test_changes_page_lists_log_and_prices_newest_first(repriced: TestClient) -> None:
    html = repriced.get("/fr/changes/").text
    days = re.findall(r'<time datetime="([\d-]+)"', html)
    assert days == sorted(days, reverse=True)
    assert days[0] == "2026-11-28"
    assert "Gamma Compute" in html
    assert 'href="/fr/feed.atom"' in html


def test_changes_page_canonicalizes_its_filter(client: TestClient) -> None:
    r = client.get("/es/changes/?gpu=h100&provider=ALPHA")
    assert r.status_code == 302
    assert r.headers["location"] == "/es/changes/?gpu=H100-SXM-80GB&provider=alpha"


# Downloads


def _current(client: TestClient) -> tuple[str, str]:
    html = client.get("/en/downloads/").text
    found = re.search(r'href="/downloads/(clusterscout-(\d{4}-\d{2}-\d{2})-[a-z0-9-]+)\.zip"', html)
    assert found is not None
    return found.group(1), found.group(2)


def _typed(value: str, field: dict[str, Any]) -> object:
    """A CSV cell read by its Table Schema type (raises when it does not fit)."""
    if value == "":
        return None
    kind = field["type"]
    if kind == "integer":
        return int(value)
    if kind == "number":
        return float(value)
    if kind == "boolean":
        assert value in field["trueValues"] + field["falseValues"], value
        return value == "true"
    if kind == "date":
        return date.fromisoformat(value)
    if kind == "datetime":
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")  # noqa: DTZ007 - Z is UTC
    return value


def test_datapackage_validates_against_its_own_resources(client: TestClient) -> None:
    stem, day = _current(client)
    package = client.get(f"/downloads/{stem}/datapackage.json").json()
    assert package["licenses"][0]["name"] == "CC-BY-4.0"
    assert stem.endswith(package["version"]) and day in stem
    names = {r["name"] for r in package["resources"]}
    assert {"providers", "offers", "prices"} <= names
    for resource in package["resources"]:
        fields = resource["schema"]["fields"]
        columns = [f["name"] for f in fields]
        assert all(f.get("description") for f in fields)
        body = client.get(f"/downloads/{stem}/{resource['path']}")
        assert body.status_code == 200, resource["path"]
        if resource["format"] == "csv":
            rows = list(csv.reader(io.StringIO(body.text)))
            assert rows[0] == columns, resource["name"]
            assert len(rows) > 1
            for row in rows[1:]:
                assert len(row) == len(columns)
                for value, f in zip(row, fields, strict=True):
                    typed = _typed(value, f)
                    enum = f.get("constraints", {}).get("enum")
                    if enum and typed is not None:
                        assert typed in enum, (f["name"], typed)
            key = resource["schema"].get("primaryKey")
            if key:
                idx = [columns.index(k) for k in key]
                keys = [tuple(r[i] for i in idx) for r in rows[1:]]
                assert len(keys) == len(set(keys))
        else:
            records = json.loads(body.content)
            assert records and all(list(r) == columns for r in records)


def test_units_are_declared_where_a_column_has_one(client: TestClient) -> None:
    stem, _ = _current(client)
    package = client.get(f"/downloads/{stem}/datapackage.json").json()
    offers = next(r for r in package["resources"] if r["name"] == "offers")
    units = {f["name"]: f.get("unit") for f in offers["schema"]["fields"]}
    assert units["per_node_gbps"] == "Gbit/s"
    assert units["from_usd_per_gpu_hour"] == "USD per GPU-hour"


def test_zip_holds_the_same_files_under_the_versioned_folder(client: TestClient) -> None:
    stem, _ = _current(client)
    r = client.get(f"/downloads/{stem}.zip")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(r.content)) as zf:
        names = zf.namelist()
        assert f"{stem}/datapackage.json" in names
        for name in names:
            assert name.startswith(f"{stem}/")
            served = client.get(f"/downloads/{name}").content
            assert zf.read(name) == served, name
    assert client.get(f"/downloads/{stem}.zip").content == r.content  # same bytes again


def test_old_or_unknown_download_names_are_404(client: TestClient) -> None:
    stem, _ = _current(client)
    assert client.get("/downloads/clusterscout-2020-01-01-abc.zip").status_code == 404
    assert client.get("/downloads/clusterscout-2020-01-01-abc/offers.csv").status_code == 404
    assert client.get(f"/downloads/{stem}/secrets.csv").status_code == 404
    latest = client.get("/downloads/latest.zip")
    assert latest.status_code == 302
    assert latest.headers["location"] == f"/downloads/{stem}.zip"


def test_download_changes_with_the_data(repriced: TestClient, client: TestClient) -> None:
    before, _ = _current(client)
    after, _ = _current(repriced)
    assert before != after
    prices = repriced.get(f"/downloads/{after}/prices.csv").text
    rows = list(csv.DictReader(io.StringIO(prices)))
    mine = [r for r in rows if r["offer_id"] == "alpha-h100-ib" and r["tier"] == "on_demand"]
    assert {(r["usd_per_gpu_hour"], r["current"]) for r in mine} == {
        ("2.99", "false"),
        ("3.19", "true"),
    }


def test_changes_log_names_only_what_the_catalog_has(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE_DATA_DIR, tmp_path / "data")
    log = tmp_path / "data" / "changes.toml"
    log.write_text(
        log.read_text(encoding="utf-8")
        + '\n[[changes]]\non = 2026-11-20\nkind = "added"\nprovider = "omega"\n'
        + '\n[[changes]]\non = 2026-11-20\nkind = "corrected"\nprovider = "alpha"\n'
        + 'offers = ["beta-h100-eth"]\nfields = ["fabric"]\n',
        encoding="utf-8",
    )
    problems = [str(p) for p in validate(tmp_path / "data").problems]
    assert "data/changes.toml: changes[5].provider: unknown provider 'omega'" in problems
    assert any(
        p.startswith("data/changes.toml: changes[6].offers:") and "belongs to 'beta'" in p
        for p in problems
    )
