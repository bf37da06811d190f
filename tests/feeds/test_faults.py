"""Fault isolation: a failing feed changes nothing, is recorded, and other feeds still apply."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from clusterscout.feeds import runner
from clusterscout.feeds.base import FeedBatch, FeedItem
from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.runner import run_feed, run_feeds
from clusterscout.feeds.skypilot import SkypilotCsvFeed
from tests.feeds.conftest import content_hash, runs

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"
)
GPU_INFO = "\"{'Gpus': [{'Name': 'H100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}]}\""
H100 = f"gpu-h100-sxm_8gpu,H100,8,128,1600,20.0,eu-north1,{GPU_INFO},8.0"
B200 = "gpu-b200-sxm_8gpu,B200,8,160,1792,40.0,us-central1,,"

SKYPILOT_FAULTS = {
    "no final newline": f"{HEADER}\n{H100}\n{B200}",
    "row cut short": f"{HEADER}\n{H100}\ngpu-b200-sxm_8gpu,B200,8,160\n",
    "cut inside GpuInfo": f"{HEADER}\n{B200}\n{H100[: H100.index('[') + 1]}\n",
    "unknown column layout": f"{HEADER.replace('Price,', 'PricePerHour,')}\n{H100}\n",
    "extra unknown column": f"{HEADER},Currency\n{H100},USD\n",
    "zero price": f"{HEADER}\n{H100}\n{B200.replace('40.0', '0')}\n",
    "negative price": f"{HEADER}\n{H100.replace('20.0', '-20.0')}\n",
    "negative spot price": f"{HEADER}\n{H100.replace(',8.0', ',-1')}\n",
    "duplicate row": f"{HEADER}\n{H100}\n{B200}\n{H100}\n",
    "empty file": "",
    "header only, broken": "InstanceType;Price\n",
}


@pytest.mark.parametrize("fault", sorted(SKYPILOT_FAULTS))
def test_skypilot_fault_changes_nothing(engine: Engine, tmp_path: Path, fault: str) -> None:
    path = tmp_path / "nebius-vms.csv"
    path.write_text(SKYPILOT_FAULTS[fault], encoding="utf-8")
    before = content_hash(engine)
    report = run_feed(engine, SkypilotCsvFeed(), path, now=NOW)
    assert not report.ok
    assert report.message
    assert report.changes == []
    assert content_hash(engine) == before
    [run] = runs(engine)
    assert run["status"] == "failed"
    assert run["message"] == report.message


def test_fault_messages_name_the_problem(engine: Engine, tmp_path: Path) -> None:
    expected = {
        "no final newline": "truncated",
        "row cut short": "line 3: 4 fields where the header has 9",
        "unknown column layout": "unknown column layout: missing column(s) Price",
        "extra unknown column": "unknown column(s) Currency",
        "zero price": "Price '0' must be a positive number",
        "duplicate row": "line 4: repeats nebius-vms.csv: line 2",
    }
    for fault, needle in expected.items():
        path = tmp_path / "nebius-vms.csv"
        path.write_text(SKYPILOT_FAULTS[fault], encoding="utf-8")
        report = run_feed(engine, SkypilotCsvFeed(), path, now=NOW, dry_run=True)
        assert needle in (report.message or ""), (fault, report.message)


FILE_HEADER = "offer_id,tier,usd_per_gpu_hour,as_of,source_url"
GOOD = "nebius-h100-ib,on_demand,4.1,2026-11-20,https://nebius.com/prices"
FILE_FAULTS = {
    "prices.csv": {
        "zero price": f"{FILE_HEADER}\n{GOOD.replace('4.1', '0')}\n",
        "negative price": f"{FILE_HEADER}\n{GOOD.replace('4.1', '-4.1')}\n",
        "not a number": f"{FILE_HEADER}\n{GOOD.replace('4.1', 'cheap')}\n",
        "duplicate row": f"{FILE_HEADER}\n{GOOD}\n{GOOD.replace('4.1', '4.2')}\n",
        "unknown column": f"{FILE_HEADER},currency\n{GOOD},USD\n",
        "truncated row": f"{FILE_HEADER}\n{GOOD}\nnebius-h200-ib,on_demand\n",
        "unknown tier": f"{FILE_HEADER}\n{GOOD.replace('on_demand', 'hourly')}\n",
        "future as_of": f"{FILE_HEADER}\n{GOOD.replace('2026-11-20', '2027-01-01')}\n",
        "not a URL": f"{FILE_HEADER}\n{GOOD.replace('https://nebius.com/prices', 'page')}\n",
    },
    "prices.json": {
        "truncated JSON": '{"prices": [{"offer_id": "nebius-h100-ib", "tier": "on_dem',
        "zero price": '[{"offer_id": "nebius-h100-ib", "tier": "on_demand", '
        '"usd_per_gpu_hour": 0, "as_of": "2026-11-20", "source_url": "https://n.test/"}]',
        "unknown field": '[{"offer_id": "nebius-h100-ib", "tier": "on_demand", "usd": 1, '
        '"usd_per_gpu_hour": 1, "as_of": "2026-11-20", "source_url": "https://n.test/"}]',
        "wrong shape": '{"items": []}',
        "price as text": '[{"offer_id": "nebius-h100-ib", "tier": "on_demand", '
        '"usd_per_gpu_hour": true, "as_of": "2026-11-20", "source_url": "https://n.test/"}]',
    },
}
FILE_CASES = [(name, fault) for name, faults in FILE_FAULTS.items() for fault in sorted(faults)]


@pytest.mark.parametrize(("name", "fault"), FILE_CASES)
def test_file_fault_changes_nothing(engine: Engine, tmp_path: Path, name: str, fault: str) -> None:
    path = tmp_path / name
    path.write_text(FILE_FAULTS[name][fault], encoding="utf-8")
    before = content_hash(engine)
    report = run_feed(engine, FileFeed(), path, now=NOW)
    assert not report.ok
    assert report.message
    assert content_hash(engine) == before


@dataclass(frozen=True)
class _RaisingFeed:
    """A feed that dies half-way through reading its input."""

    name: str = "raising"
    needs_input: bool = False
    summary: str = "raises"

    def fetch(self, _source: Path | None, *, today: date) -> FeedBatch:
        def items() -> Iterator[FeedItem]:
            yield FeedItem("on_demand", 1.0, "https://x.test/", today, offer_id="nebius-h100-ib")
            msg = "connection reset while reading row 2"
            raise ConnectionError(msg)

        return FeedBatch(tuple(items()), 2, "test")


@dataclass(frozen=True)
class _GoodFeed:
    name: str = "good"
    needs_input: bool = False
    summary: str = "one price"

    def fetch(self, _source: Path | None, *, today: date) -> FeedBatch:
        item = FeedItem("on_demand", 3.0, "https://x.test/", today, offer_id="nebius-h100-ib")
        return FeedBatch((item,), 1, "test")


def test_feed_raising_midway_changes_nothing_and_others_apply(engine: Engine) -> None:
    before = content_hash(engine)
    failed, good = run_feeds(engine, [_RaisingFeed(), _GoodFeed()], now=NOW)
    assert not failed.ok
    assert failed.message == "ConnectionError: connection reset while reading row 2"
    assert good.ok
    assert content_hash(engine) != before
    assert [(r["feed"], r["status"]) for r in runs(engine)] == [
        ("raising", "failed"),
        ("good", "ok"),
    ]


def test_failure_while_writing_rolls_back(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Observations already inserted in the feed's transaction are rolled back."""

    def broken(*_args: object) -> None:
        msg = "disk full"
        raise OSError(msg)

    monkeypatch.setattr(runner, "refresh_current", broken)
    before = content_hash(engine)
    report = run_feed(engine, _GoodFeed(), now=NOW)
    assert not report.ok
    assert report.message == "OSError: disk full"
    assert content_hash(engine) == before
    assert runs(engine)[0]["status"] == "failed"


def test_dry_run_writes_nothing(engine: Engine) -> None:
    before = content_hash(engine)
    report = run_feed(engine, _GoodFeed(), now=NOW, dry_run=True)
    assert report.ok
    assert report.changes[0].new_usd_per_gpu_hour == 3.0
    assert content_hash(engine) == before
    assert runs(engine) == []


def test_input_required(engine: Engine) -> None:
    for feed in (SkypilotCsvFeed(), FileFeed()):
        report = run_feed(engine, feed, None, now=NOW)
        assert not report.ok
        assert "needs --input" in (report.message or "")
