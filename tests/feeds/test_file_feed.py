"""The file feed: the documented CSV and JSON formats for hand-written price updates."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

from sqlalchemy import Engine

from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.runner import ChangeKind, run_feed
from clusterscout.store.prices import current_prices

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

CSV = """offer_id,tier,usd_per_gpu_hour,as_of,source_url,term,note,source_checked_on,source_kind
nebius-h100-ib,on_demand,4.75,2026-11-28,https://nebius.com/prices,,Raised again,2026-11-29,
nebius-h100-ib,reserved,3.2,2026-11-28,https://nebius.com/prices,1 year,,,Primary
oci-h100,on_demand,10.0,2026-11-28,https://www.oracle.com/cloud/price-list/,,,,
nebius-h900-ib,on_demand,9.0,2026-11-28,https://nebius.com/prices,,,,
"""


def test_csv_file(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text(CSV, encoding="utf-8")
    report = run_feed(engine, FileFeed(), path, now=NOW)
    assert report.ok, report.message
    kinds = {(c.offer_id, c.tier, c.term): c.kind for c in report.changes}
    assert kinds == {
        ("nebius-h100-ib", "on_demand", None): ChangeKind.CHANGED,
        ("nebius-h100-ib", "reserved", "1 year"): ChangeKind.NEW,
        ("oci-h100", "on_demand", None): ChangeKind.UNCHANGED,
    }
    assert [u.reason for u in report.unmatched] == ["unknown offer id 'nebius-h900-ib'"]
    with engine.connect() as conn:
        prices = current_prices(conn, ["nebius-h100-ib"])["nebius-h100-ib"]
    on_demand = next(p for p in prices if p["tier"] == "on_demand")
    assert on_demand["usd_per_gpu_hour"] == 4.75
    assert on_demand["note"] == "Raised again"
    assert on_demand["as_of"] == "2026-11-28"
    # A row that does not say whose page its URL is counts as a third-party source.
    assert on_demand["source"] == {
        "url": "https://nebius.com/prices",
        "checked_on": "2026-11-29",
        "kind": "secondary",
        "published_on": None,
    }
    assert on_demand["feed"] == "file"
    reserved = next(p for p in prices if p["tier"] == "reserved")
    assert reserved["source"]["kind"] == "primary"


def test_an_unknown_source_kind_is_refused(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text(
        "offer_id,tier,usd_per_gpu_hour,as_of,source_url,source_kind\n"
        "nebius-h100-ib,on_demand,4.75,2026-11-28,https://nebius.com/prices,official\n",
        encoding="utf-8",
    )
    report = run_feed(engine, FileFeed(), path, now=NOW)
    assert not report.ok
    assert "source_kind 'official' is not one of primary, secondary, catalog" in report.message


def test_json_file_in_both_shapes(engine: Engine, tmp_path: Path) -> None:
    record = {
        "offer_id": "oci-b200",
        "tier": "on_demand",
        "usd_per_gpu_hour": 15.5,
        "as_of": "2026-11-29",
        "source_url": "https://www.oracle.com/cloud/price-list/",
    }
    for i, data in enumerate(({"prices": [record]}, [record])):
        path = tmp_path / f"prices-{i}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        report = run_feed(engine, FileFeed(), path, now=NOW, dry_run=True)
        assert report.ok, report.message
        assert [
            (c.offer_id, c.old_usd_per_gpu_hour, c.new_usd_per_gpu_hour) for c in report.changes
        ] == [("oci-b200", 16.0, 15.5)]


def test_documented_examples_parse(tmp_path: Path) -> None:
    """The examples in docs/feeds.md are valid input for the file feed."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "feeds.md").read_text(encoding="utf-8")
    blocks = {}
    for lang in ("csv", "json"):
        start = doc.index(f"```{lang}\n") + len(lang) + 4
        blocks[lang] = doc[start : doc.index("```", start)]
    for lang, text in blocks.items():
        path = tmp_path / f"example.{lang}"
        path.write_text(text, encoding="utf-8")
        batch = FileFeed().fetch(path, today=date(2026, 11, 30))
        assert batch.items, lang


def test_deeply_nested_json_fails_cleanly(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    report = run_feed(engine, FileFeed(), path, now=NOW)
    assert not report.ok
    assert report.message == "prices.json: not valid JSON (nested too deeply)"
