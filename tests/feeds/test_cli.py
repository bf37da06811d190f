"""``clusterscout refresh`` and ``stale`` through the CLI, on a SQLite file built per test."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from clusterscout.app.database import build
from clusterscout.cli import app as cli_app
from clusterscout.store.db import make_engine
from clusterscout.store.prices import current_prices, history
from tests.feeds.conftest import FEEDS_CATALOG, content_hash, runs


@pytest.fixture
def app() -> click.Group:
    return cli_app


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    engine = make_engine(url)
    build(engine, FEEDS_CATALOG)
    engine.dispose()
    return url


def test_refresh_skypilot_reports_changes(
    app: click.Group, db_url: str, skypilot_dir: Path
) -> None:
    args = ["refresh", "--source", "skypilot-csv", "--input", str(skypilot_dir / "nebius-vms.csv")]
    result = CliRunner().invoke(app, [*args, "--database-url", db_url])
    assert result.exit_code == 0, result.output
    assert "prices 3 new, 1 changed, 1 unchanged; 0 unmatched" in result.stdout
    assert "nebius-h100-ib" in result.stdout
    assert "-34.4%" in result.stdout  # 4.50 → 2.95


def test_refresh_as_of_backdates_without_displacing_newer_prices(
    app: click.Group, db_url: str, skypilot_dir: Path
) -> None:
    # The sample predates the catalog's 2026-10-07 price: dated honestly, it joins the
    # history but the curated October price stays current.
    path = str(skypilot_dir / "nebius-vms.csv")
    args = ["refresh", "--source", "skypilot-csv", "--input", path, "--as-of", "2026-05-18"]
    result = CliRunner().invoke(app, [*args, "--database-url", db_url])
    assert result.exit_code == 0, result.output
    assert "2 older than the current price (history only)" in result.stdout
    assert "older: history only" in result.stdout
    engine = make_engine(db_url)
    with engine.connect() as conn:
        now = {
            (p["tier"], p["term"]): p
            for p in current_prices(conn, ["nebius-h100-ib"])["nebius-h100-ib"]
        }
        seen = [(p["as_of"], p["usd_per_gpu_hour"]) for p in history(conn, "nebius-h100-ib")]
        b200 = current_prices(conn, ["nebius-b200-ib"])["nebius-b200-ib"]
    engine.dispose()
    assert now[("on_demand", None)]["usd_per_gpu_hour"] == 4.5
    assert now[("on_demand", None)]["as_of"] == "2026-10-07"
    assert ("2026-05-18", 2.95) in seen
    # Where nothing newer exists, the backdated price is the current one, with its real date.
    assert [p["as_of"] for p in b200 if p["tier"] == "on_demand"] == ["2026-05-18"]


@pytest.mark.parametrize(
    ("value", "message"),
    [("yesterday", "--as-of: 'yesterday' is not a date"), ("2999-01-01", "is after today")],
)
def test_refresh_rejects_bad_as_of(
    app: click.Group, db_url: str, skypilot_dir: Path, value: str, message: str
) -> None:
    path = str(skypilot_dir / "nebius-vms.csv")
    args = ["refresh", "--source", "skypilot-csv", "--input", path, "--as-of", value]
    result = CliRunner().invoke(app, [*args, "--database-url", db_url])
    assert result.exit_code == 2
    assert message in result.stderr


def test_refresh_broken_file_exits_non_zero(app: click.Group, db_url: str, tmp_path: Path) -> None:
    bad = tmp_path / "nebius-vms.csv"
    bad.write_text("InstanceType,Price\nx,1\n", encoding="utf-8")
    engine = make_engine(db_url)
    before = content_hash(engine)
    args = ["refresh", "--source", "skypilot-csv", "--input", str(bad), "--database-url", db_url]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert "skypilot-csv failed; nothing changed" in result.stderr
    assert "unknown column layout: missing column(s) AcceleratorName" in result.stderr
    assert content_hash(engine) == before
    assert runs(engine)[0]["status"] == "failed"
    engine.dispose()


def test_refresh_all_without_network_fails_cleanly(
    app: click.Group, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A closed port on loopback: the same path as no network, without leaving the machine.
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", "http://127.0.0.1:9/v3")
    result = CliRunner().invoke(app, ["refresh", "--database-url", db_url])
    assert result.exit_code == 1
    assert "gpuhunt failed; nothing changed: cannot download" in result.stderr


def test_refresh_bad_options(app: click.Group, db_url: str) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["refresh", "--source", "nope", "--database-url", db_url])
    assert result.exit_code == 2
    assert "unknown feed 'nope'" in result.stderr
    result = runner.invoke(app, ["refresh", "--input", "x.csv", "--database-url", db_url])
    assert result.exit_code == 2
    assert "--input needs a single --source" in result.stderr


def test_dry_run_changes_nothing(app: click.Group, db_url: str, skypilot_dir: Path) -> None:
    engine = make_engine(db_url)
    before = content_hash(engine)
    path = str(skypilot_dir / "oci-vms-gpu-excerpt.csv")
    args = ["refresh", "--source", "skypilot-csv", "--input", path, "--dry-run"]
    result = CliRunner().invoke(app, [*args, "--database-url", db_url])
    assert result.exit_code == 0, result.output
    assert "dry run: nothing written" in result.stdout
    assert "unknown GPU 'V100'" in result.stdout
    assert content_hash(engine) == before
    assert runs(engine) == []
    engine.dispose()


def test_stale_lists_facts_and_prices(app: click.Group, db_url: str) -> None:
    result = CliRunner().invoke(app, ["stale", "--format", "json", "--database-url", db_url])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["facts_stale_after_days"] == 180
    assert data["prices_stale_after_days"] == 30
    assert any(f["provider"] == "nebius" and f["field"] == "storage" for f in data["facts"])
    table = CliRunner().invoke(app, ["stale", "--days", "100000", "--database-url", db_url])
    assert table.exit_code == 0, table.output
    assert "0 stale price(s) (as of over 100000 days ago)" in table.stdout
