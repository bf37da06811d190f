"""The gpuhunt feed with gpuhunt's own CatalogItem and its published CSV format; no network."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path

import httpx
from gpuhunt import AcceleratorVendor, CatalogItem
from sqlalchemy import Engine

from clusterscout.feeds.gpuhunt_catalog import (
    DEFAULT_TIMEOUT_S,
    GpuhuntFeed,
    items_to_feed,
    write_catalog_csv,
)
from clusterscout.feeds.match import OfferIndex, match_items
from clusterscout.feeds.runner import ChangeKind, run_feed
from tests.feeds.conftest import content_hash, runs

TODAY = date(2026, 11, 30)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
NVIDIA = AcceleratorVendor.NVIDIA


def _item(
    provider: str,
    instance: str,
    price: float,
    gpu: str | None = "H100",
    count: int = 8,
    memory: float | None = 80.0,
    *,
    spot: bool = False,
    location: str = "us-east-1",
) -> CatalogItem:
    return CatalogItem(
        provider=provider,
        instance_name=instance,
        location=location,
        price=price,
        cpu=192,
        memory=2048.0,
        gpu_count=count if gpu else 0,
        gpu_name=gpu,
        gpu_memory=memory if gpu else None,
        spot=spot,
        disk_size=None,
        gpu_vendor=NVIDIA if gpu else None,
    )


CATALOG = {
    "aws": [
        _item("aws", "p5.48xlarge", 55.04),
        _item("aws", "p5.48xlarge", 60.0, location="eu-west-1"),
        _item("aws", "p5.48xlarge", 22.0, spot=True),
        _item("aws", "p5en.48xlarge", 63.296, gpu="H200", memory=141.0),
        _item("aws", "p5e.48xlarge", 70.0, gpu="H200", memory=141.0),
        _item("aws", "p4d.24xlarge", 32.77, gpu="A100", memory=40.0),
        _item("aws", "g6.xlarge", 0.805, gpu="L4", count=1, memory=24.0),
        _item("aws", "m7i.large", 0.1, gpu=None),
    ],
    "nebius": [_item("nebius", "gpu-h100-sxm 8gpu-128vcpu-1600gb", 36.0, location="eu-north1")],
    "lambdalabs": [_item("lambdalabs", "gpu_8x_h100_sxm5", 23.92, location="us-south-1")],
}


def _index(engine: Engine) -> OfferIndex:
    with engine.connect() as conn:
        return OfferIndex.load(conn)


def test_catalog_items_map_to_offers(engine: Engine) -> None:
    items = [
        f
        for provider, rows in CATALOG.items()
        for f in items_to_feed(rows, f"https://catalog.test/{provider}", TODAY)
    ]
    assert not any(i.gpu_name is None for i in items)  # the CPU instance yields nothing
    result = match_items(items, _index(engine), feed="gpuhunt", observed_at=NOW)
    prices = {(o.offer_id, o.tier): o.usd_per_gpu_hour for o in result.observations}
    assert prices == {
        ("aws-p5-h100", "on_demand"): 6.88,  # lowest of two regions, 55.04 / 8
        ("aws-p5-h100", "spot"): 2.75,
        ("aws-p5en-h200", "on_demand"): 7.912,  # p5en, not p5e: the instance type decides
        ("aws-p5e-h200", "on_demand"): 8.75,
        ("nebius-h100-ib", "on_demand"): 4.5,
    }
    notes = {o.offer_id: o.note for o in result.observations if o.tier == "on_demand"}
    assert notes["aws-p5-h100"] == (
        "p5.48xlarge in us-east-1 at $55.04 per instance-hour / 8 GPUs; lowest of 2 listings"
    )
    reasons = sorted(u.reason for u in result.unmatched)
    assert reasons == [
        "no 8-GPU-per-node A100-SXM-40GB offer for aws",
        "provider 'lambda' is not in the catalog",
    ]
    assert result.not_cluster_nodes == 1  # the 1-GPU g6


def _zip(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for provider, rows in CATALOG.items():
            csv_path = tmp_path / f"{provider}.csv"
            write_catalog_csv(rows, csv_path)
            archive.write(csv_path, f"{provider}.csv")
    return path


def test_recorded_catalog_in_published_format(engine: Engine, tmp_path: Path) -> None:
    report = run_feed(engine, GpuhuntFeed(), _zip(tmp_path), now=NOW)
    assert report.ok, report.message
    assert report.rows_read == sum(len(v) for v in CATALOG.values())
    kinds = {(c.offer_id, c.tier): c.kind for c in report.changes}
    assert kinds[("nebius-h100-ib", "on_demand")] is ChangeKind.UNCHANGED
    assert kinds[("aws-p5-h100", "on_demand")] is ChangeKind.NEW
    # A single provider file and a directory of them read the same way.
    dir_report = run_feed(engine, GpuhuntFeed(), tmp_path, now=NOW, dry_run=True)
    assert dir_report.ok, dir_report.message
    assert len(dir_report.changes) == len(report.changes)
    one = run_feed(engine, GpuhuntFeed(), tmp_path / "nebius.csv", now=NOW, dry_run=True)
    assert [c.offer_id for c in one.changes] == ["nebius-h100-ib"]


def test_bad_recorded_catalog_fails_cleanly(engine: Engine, tmp_path: Path) -> None:
    write_catalog_csv(CATALOG["aws"], tmp_path / "aws.csv")
    text = (tmp_path / "aws.csv").read_text(encoding="utf-8")
    before = content_hash(engine)
    cases = {
        "truncated.zip": _zip(tmp_path).read_bytes()[:200],
        "aws.csv": text.replace("55.04", "0.0").encode(),
    }
    for name, data in cases.items():
        path = tmp_path / "bad" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        report = run_feed(engine, GpuhuntFeed(), path, now=NOW)
        assert not report.ok, name
        assert content_hash(engine) == before
    assert [r["status"] for r in runs(engine)] == ["failed", "failed"]


def _published(tmp_path: Path) -> httpx.MockTransport:
    _zip(tmp_path)
    blobs: dict[str, bytes] = {}
    for provider in CATALOG:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as archive:
            archive.write(tmp_path / f"{provider}.csv", f"{provider}.csv")
        blobs[provider] = buf.getvalue()

    def handler(request: httpx.Request) -> httpx.Response:
        parts = request.url.path.strip("/").split("/")
        if parts[-1] == "version":
            return httpx.Response(200, text="20261130-1\n")
        return httpx.Response(200, content=blobs[parts[-3]])

    return httpx.MockTransport(handler)


def test_online_catalog_through_a_mock_transport(engine: Engine, tmp_path: Path) -> None:
    feed = GpuhuntFeed(
        providers=tuple(CATALOG), base_url="https://mirror.test/v3", transport=_published(tmp_path)
    )
    report = run_feed(engine, feed, None, now=NOW)
    assert report.ok, report.message
    assert report.source == "https://mirror.test/v3"
    changed = {c.offer_id for c in report.changes}
    assert {"aws-p5-h100", "nebius-h100-ib"} <= changed


def test_no_network_is_a_clean_feed_failure(engine: Engine) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        msg = "Name or service not known"
        raise httpx.ConnectError(msg, request=request)

    before = content_hash(engine)
    report = run_feed(engine, GpuhuntFeed(transport=httpx.MockTransport(refuse)), None, now=NOW)
    assert not report.ok
    assert "cannot download" in (report.message or "")
    assert "ConnectError" in (report.message or "")
    assert content_hash(engine) == before
    assert runs(engine)[0]["status"] == "failed"


def test_a_hanging_network_hits_the_deadline(engine: Engine) -> None:
    import threading

    release = threading.Event()

    def hang(request: httpx.Request) -> httpx.Response:
        release.wait(5)
        return httpx.Response(503)

    feed = GpuhuntFeed(transport=httpx.MockTransport(hang), deadline_s=0.2)
    report = run_feed(engine, feed, None, now=NOW)
    release.set()
    assert not report.ok
    assert "no complete answer within 0.2 s" in (report.message or "")


def test_default_timeouts_are_short() -> None:
    feed = GpuhuntFeed()
    assert feed.timeout_s == DEFAULT_TIMEOUT_S <= 10
    assert feed.deadline_s <= 120
