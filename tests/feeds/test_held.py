"""Suspicious feeds are held whole: a price that halves or doubles, a CSV cut off mid-line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select

from clusterscout.cli import app
from clusterscout.feeds.manual import FileFeed
from clusterscout.feeds.runner import run_feed
from clusterscout.store.prices import current_prices
from clusterscout.store.tables import feed_runs, meta

HEADER = "offer_id,tier,usd_per_gpu_hour,as_of,source_url\n"
ROW = "nebius-h100-ib,on_demand,{price},2026-11-28,https://nebius.com/prices\n"
OTHER = "oci-h100,on_demand,10.5,2026-11-28,https://www.oracle.com/cloud/price-list/\n"


def _on_demand(engine: Engine, offer: str = "nebius-h100-ib") -> float:
    with engine.connect() as conn:
        prices = current_prices(conn, [offer])[offer]
    return float(next(p["usd_per_gpu_hour"] for p in prices if p["tier"] == "on_demand"))


def _version(engine: Engine) -> str:
    with engine.connect() as conn:
        return str(conn.execute(select(meta.c.value).where(meta.c.key == "data_version")).scalar())


@pytest.mark.parametrize("factor", [2.0, 0.5, 3.7, 0.2])
def test_a_price_that_moves_by_the_factor_holds_the_whole_feed(
    engine: Engine, tmp_path: Path, factor: float
) -> None:
    old, other, version = _on_demand(engine), _on_demand(engine, "oci-h100"), _version(engine)
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + OTHER + ROW.format(price=round(old * factor, 4)), encoding="utf-8")
    report = run_feed(engine, FileFeed(), path)
    assert not report.ok
    assert report.held
    assert report.message is not None
    assert "nebius-h100-ib on_demand" in report.message
    assert "--allow-price-jumps" in report.message
    # Nothing of the feed is applied, not even the row that was fine.
    assert (_on_demand(engine), _on_demand(engine, "oci-h100")) == (old, other)
    assert _version(engine) == version
    with engine.connect() as conn:
        assert conn.execute(select(feed_runs.c.status)).scalars().all()[-1] == "held"
    allowed = run_feed(engine, FileFeed(), path, max_price_factor=None)
    assert allowed.ok
    assert _on_demand(engine) == round(old * factor, 4)
    assert _on_demand(engine, "oci-h100") == 10.5


def test_a_move_below_the_factor_is_applied(engine: Engine, tmp_path: Path) -> None:
    old = _on_demand(engine)
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + ROW.format(price=round(old * 1.9, 4)), encoding="utf-8")
    assert run_feed(engine, FileFeed(), path).ok
    assert _on_demand(engine) == round(old * 1.9, 4)


def test_a_csv_whose_last_line_has_no_newline_is_held(engine: Engine, tmp_path: Path) -> None:
    old = _on_demand(engine)
    path = tmp_path / "prices.csv"
    # The last line may have been cut: 4.25 would read as 4.2 and still parse.
    path.write_text(HEADER + ROW.format(price=round(old * 1.1, 2)).rstrip("\n"), encoding="utf-8")
    report = run_feed(engine, FileFeed(), path)
    assert report.held
    assert report.message is not None
    assert "newline" in report.message
    assert _on_demand(engine) == old
    allowed = run_feed(engine, FileFeed(allow_missing_newline=True), path)
    assert allowed.ok
    assert _on_demand(engine) == round(old * 1.1, 2)


def test_the_cli_holds_and_names_both_flags(engine: Engine, tmp_path: Path) -> None:
    url = engine.url.render_as_string(hide_password=False)
    old = _on_demand(engine)
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + ROW.format(price=round(old * 3, 2)).rstrip("\n"), encoding="utf-8")
    base = ["refresh", "--source", "file", "--input", str(path), "--database-url", url]
    held = CliRunner().invoke(app, base)
    assert held.exit_code == 1
    assert "held" in held.output
    assert "--allow-missing-newline" in held.output
    held = CliRunner().invoke(app, [*base, "--allow-missing-newline"])
    assert held.exit_code == 1
    assert "--allow-price-jumps" in held.output
    assert _on_demand(engine) == old
    done = CliRunner().invoke(app, [*base, "--allow-missing-newline", "--allow-price-jumps"])
    assert done.exit_code == 0, done.output
    assert _on_demand(engine) == round(old * 3, 2)
