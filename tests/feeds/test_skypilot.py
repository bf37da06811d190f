"""The skypilot-csv feed on the real SkyPilot samples: layouts, per-GPU prices, applying."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from clusterscout.feeds.base import FeedError
from clusterscout.feeds.runner import ChangeKind, run_feed
from clusterscout.feeds.skypilot import SkypilotCsvFeed, cloud_of, parse
from clusterscout.store.prices import current_prices, history
from tests.feeds.conftest import observation_count, runs

TODAY = date(2026, 11, 30)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _items(path: Path) -> dict[tuple[str, str, str], float]:
    batch = SkypilotCsvFeed().fetch(path, today=TODAY)
    return {
        (i.instance_type or "", i.region or "", i.tier): i.usd_per_gpu_hour for i in batch.items
    }


def test_nebius_sample_prices_are_per_gpu(skypilot_dir: Path) -> None:
    items = _items(skypilot_dir / "nebius-vms.csv")
    # 23.60 USD per 8-GPU instance-hour is 2.95 per GPU-hour; spot 10.00 is 1.25.
    assert items[("gpu-h100-sxm_8gpu-128vcpu-1600gb", "eu-north1", "on_demand")] == 2.95
    assert items[("gpu-h100-sxm_8gpu-128vcpu-1600gb", "eu-north1", "spot")] == 1.25
    assert items[("gpu-b200-sxm_8gpu-160vcpu-1792gb", "us-central1", "on_demand")] == 5.5
    assert items[("gpu-l40s-d_2gpu-64vcpu-384gb", "eu-north1", "on_demand")] == 2.2844
    # No spot price for B200: no spot item; CPU rows give no item at all.
    assert ("gpu-b200-sxm_8gpu-160vcpu-1792gb", "us-central1", "spot") not in items
    assert not any(k[0].startswith("cpu-") for k in items)


def test_oci_sample_with_other_column_order(skypilot_dir: Path) -> None:
    path = skypilot_dir / "oci-vms-gpu-excerpt.csv"
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    nebius = (skypilot_dir / "nebius-vms.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header != nebius.split(",")  # the samples really differ in column order
    batch = SkypilotCsvFeed().fetch(path, today=TODAY)
    by_type = {i.instance_type: i for i in batch.items if i.tier == "on_demand"}
    assert by_type["BM.GPU.H100.8"].usd_per_gpu_hour == 10.0
    assert by_type["BM.GPU.B200.8"].usd_per_gpu_hour == 14.0
    assert by_type["BM.GPU4.8"].gpu_memory_gib == 40.0  # from the GpuInfo literal
    assert by_type["BM.GPU4.8"].region == "af-casablanca-1/AF-CASABLANCA-1-AD-1"
    assert by_type["VM.GPU3.4"].usd_per_instance_hour == 11.8
    assert batch.rows_read == 20
    assert all(i.provider == "oci" for i in batch.items)


@pytest.mark.parametrize(
    ("name", "cloud"),
    [
        ("nebius-vms.csv", "nebius"),
        ("oci-vms-gpu-excerpt.csv", "oci"),
        ("lambda/vms.csv", "lambda"),
    ],
)
def test_cloud_from_file_name(tmp_path: Path, name: str, cloud: str) -> None:
    assert cloud_of(tmp_path / name) == cloud


def test_cloud_must_be_named(tmp_path: Path) -> None:
    with pytest.raises(FeedError, match="cannot tell the cloud"):
        cloud_of(tmp_path / "prices.csv")


def test_vast_cloud_maps_to_our_slug() -> None:
    text = (
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n"
        "8x-H100,H100,8,64,512,16.0,US,\n"
    )
    items, rows = parse(text, "vast-vms.csv", "vast-ai", "https://x.test/", TODAY)
    assert rows == 1
    assert items[0].usd_per_gpu_hour == 2.0
    assert items[0].gpu_memory_gib is None


def test_refresh_updates_nebius_cluster_offers(engine: Engine, skypilot_dir: Path) -> None:
    before = observation_count(engine)
    report = run_feed(engine, SkypilotCsvFeed(), skypilot_dir / "nebius-vms.csv", now=NOW)
    assert report.ok, report.message
    changes = {(c.offer_id, c.tier): c for c in report.changes}
    h100 = changes[("nebius-h100-ib", "on_demand")]
    assert (h100.kind, h100.old_usd_per_gpu_hour, h100.new_usd_per_gpu_hour) == (
        ChangeKind.CHANGED,
        4.5,
        2.95,
    )
    # H200 is listed in three regions at the same price: one observation, unchanged.
    assert changes[("nebius-h200-ib", "on_demand")].kind is ChangeKind.UNCHANGED
    assert changes[("nebius-b200-ib", "on_demand")].kind is ChangeKind.NEW
    assert changes[("nebius-h100-ib", "spot")].kind is ChangeKind.NEW
    assert report.count(ChangeKind.NEW) == 3  # b200 on-demand, h100 and h200 spot
    assert report.unmatched == []  # 8-GPU rows all have offers; L40S nodes are not 8-GPU
    assert report.not_cluster_nodes > 0
    assert observation_count(engine) == before + len(report.changes)
    with engine.connect() as conn:
        current = {p["tier"]: p for p in current_prices(conn, ["nebius-h100-ib"])["nebius-h100-ib"]}
        assert current["on_demand"]["usd_per_gpu_hour"] == 2.95
        assert current["on_demand"]["feed"] == "skypilot-csv"
        assert current["on_demand"]["source"]["url"].endswith("/catalogs/v8/nebius/vms.csv")
        assert "eu-north1" in current["on_demand"]["note"]
        # Old and new observations are both kept.
        prices = [p["usd_per_gpu_hour"] for p in history(conn, "nebius-h100-ib")]
        assert 4.5 in prices
        assert 2.95 in prices
    [run] = runs(engine)
    assert (run["status"], run["new_prices"], run["changed_prices"]) == ("ok", 3, 1)


def test_refresh_oci_reports_unmatched(engine: Engine, skypilot_dir: Path) -> None:
    report = run_feed(engine, SkypilotCsvFeed(), skypilot_dir / "oci-vms-gpu-excerpt.csv", now=NOW)
    assert report.ok, report.message
    changes = {(c.offer_id, c.tier): c.kind for c in report.changes}
    assert changes == {
        ("oci-h100", "on_demand"): ChangeKind.UNCHANGED,  # 80 / 8 = 10.0, as curated
        ("oci-b200", "on_demand"): ChangeKind.CHANGED,  # 112 / 8 = 14.0 vs 16.0
        ("oci-a100-80-v2", "on_demand"): ChangeKind.UNCHANGED,  # A100-80GB: 32 / 8
        ("oci-a100-40-gpu4", "on_demand"): ChangeKind.NEW,  # "A100" with 40 GiB is the 40 GB part
    }
    reasons = {u.item.instance_type: u.reason for u in report.unmatched}
    assert reasons["BM.GPU3.8"] == "unknown GPU 'V100'"
    assert "no 8-GPU-per-node H200-SXM-141GB offer for oci" in reasons["BM.GPU.H200.8"]
    assert "BM.GPU.GB200.4" not in reasons  # 4-GPU nodes are not cluster building blocks
