"""The command line: output formats, error messages and exit codes."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterscout.catalog.problems import WARNING_KINDS
from clusterscout.cli import app
from clusterscout.settings import Settings

runner = CliRunner()


@pytest.fixture
def db(fixture_settings: Settings) -> list[str]:
    url = fixture_settings.resolved_database_url()
    return ["--database-url", url]


def test_validate_ok_on_fixture(fixture_data_dir: Path) -> None:
    result = runner.invoke(app, ["validate", str(fixture_data_dir)])
    assert result.exit_code == 0, result.output
    assert "0 error(s)" in result.output


def test_validate_lists_every_problem_and_exits_1(tmp_path: Path, fixture_data_dir: Path) -> None:
    broken = tmp_path / "data"
    shutil.copytree(fixture_data_dir, broken)
    alpha = broken / "providers" / "alpha.toml"
    alpha.write_text(
        alpha.read_text().replace("gpus_per_node = 8\n", "gpus_per_node = 8\nfoo = 1\n", 1)
    )
    (broken / "providers" / "beta.toml").write_text("= broken")
    result = runner.invoke(app, ["validate", str(broken)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "data/providers/alpha.toml: offers[h100-ib].foo: unknown key" in lines
    assert any(
        line.startswith("data/providers/beta.toml: (file): malformed TOML") for line in lines
    )


def test_offers_json_has_sources_and_nulls(db: list[str]) -> None:
    result = runner.invoke(app, ["offers", "--fabric", "ethernet", "--format", "json", *db])
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert [r["id"] for r in records] == ["beta-h100-eth"]
    record = records[0]
    assert record["from_usd_per_gpu_hour"] is None
    assert record["prices"] == []
    assert record["sources"]["fabric"][0]["url"] == "https://beta.example.org/docs/multi-node"


def test_offers_filter_by_the_newest_clustermax_tier(db: list[str]) -> None:
    # Fixture: alpha gold in 3.0; beta bronze in 2.0 only, so not rated in the newest edition.
    result = runner.invoke(
        app, ["offers", "--clustermax", "gold,not_rated", "--format", "json", *db]
    )
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert {r["provider"] for r in records} == {"alpha", "beta"}
    assert all(r["ratings"] for r in records)
    bronze = runner.invoke(app, ["offers", "--clustermax", "bronze", "--format", "json", *db])
    assert json.loads(bronze.stdout) == []


def test_offers_csv_parses(db: list[str]) -> None:
    result = runner.invoke(app, ["offers", "--format", "csv", "--sort", "gbps", *db])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 5
    # 400 Gb/s sorts after 3200 and 1600; the unknown bandwidth last.
    assert [r["id"] for r in rows[-2:]] == ["beta-h100-eth", "beta-h100-pool"]
    assert rows[-1]["from_usd_per_gpu_hour"] == ""


def test_offers_table_shows_unknown(db: list[str]) -> None:
    result = runner.invoke(app, ["offers", "--provider", "beta", *db], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "3 offers" in result.stdout
    assert "unknown" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["offers", "--fabric", "nvlink"], "--fabric: 'nvlink' is not one of: infiniband"),
        (["offers", "--rdma", "perhaps"], "--rdma: 'perhaps' is not a boolean"),
        (["offers", "--min-gbps", "lots"], "--min-gbps: 'lots' is not a number"),
        (["offers", "--gpu", "Z100"], "--gpu: unknown GPU 'Z100'"),
        (["offers", "--clustermax", "shiny"], "--clustermax: 'shiny' is not one of: platinum"),
        (["offers", "--sort", "best"], "--sort: 'best' is not one of"),
        (["offers", "--format", "xml"], "--format: 'xml' is not one of: table, json, csv"),
        (["providers", "--multi-node", "maybe"], "--multi-node: 'maybe' is not one of: yes, no"),
        (["compare", "alpha"], "compare needs 2 to 4 distinct providers, got 1"),
        (["compare", "alpha", "zeta"], "unknown provider(s): zeta"),
    ],
)
def test_bad_flags_give_one_line_errors(db: list[str], args: list[str], message: str) -> None:
    result = runner.invoke(app, [*args, *db])
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())


def test_providers_filter_and_json(db: list[str]) -> None:
    result = runner.invoke(app, ["providers", "--multi-node", "no", "--format", "json", *db])
    assert result.exit_code == 0, result.output
    assert [r["slug"] for r in json.loads(result.stdout)] == ["gamma"]


def test_compare_table_and_json(db: list[str]) -> None:
    result = runner.invoke(app, ["compare", "beta", "alpha", "--format", "json", *db])
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert [r["slug"] for r in records] == ["alpha", "beta"]
    assert len(records[0]["offers"]) == 2
    table = runner.invoke(app, ["compare", "alpha", "beta", *db], env={"COLUMNS": "200"})
    assert "GPUDirect RDMA" in table.stdout
    assert "Alpha Cloud" in table.stdout
    # Ratings per edition; beta is absent from 3.0, which is "not rated", not unknown.
    newest = " ".join(line for line in table.stdout.splitlines() if "clustermax 3.0" in line)
    assert "clustermax 3.0: gold" in newest
    assert "clustermax 3.0: not rated" in newest


def test_build_db_refuses_a_broken_catalog_and_keeps_the_old_db(
    tmp_path: Path, fixture_data_dir: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    ok = runner.invoke(
        app, ["build-db", "--database-url", url, "--data-dir", str(fixture_data_dir)]
    )
    assert ok.exit_code == 0, ok.output
    assert "built 3 providers, 5 offers" in ok.stdout
    broken = tmp_path / "data"
    shutil.copytree(fixture_data_dir, broken)
    (broken / "providers" / "alpha.toml").write_text("slug = 1")
    bad = runner.invoke(app, ["build-db", "--database-url", url, "--data-dir", str(broken)])
    assert bad.exit_code == 1
    assert "the database was not changed" in bad.stderr
    after = runner.invoke(app, ["offers", "--format", "json", "--database-url", url])
    assert len(json.loads(after.stdout)) == 5


def test_bad_database_url_is_reported(tmp_path: Path) -> None:
    result = runner.invoke(app, ["providers", "--database-url", "mysql://x/y"])
    assert result.exit_code == 2
    assert "unsupported database backend 'mysql'" in result.stderr


def test_catalog_texts_regenerates_the_template_and_reports_progress(
    tmp_path: Path, fixture_data_dir: Path
) -> None:
    data = tmp_path / "data"
    shutil.copytree(fixture_data_dir, data)
    alpha = data / "providers" / "alpha.toml"
    alpha.write_text(alpha.read_text().replace("of 2 to 64 nodes", "of 2 to 128 nodes"))
    stale = runner.invoke(app, ["validate", str(data)])
    assert "data/locale/catalog.pot: (file): out of date; run `make i18n-catalog`" in stale.stdout
    assert stale.exit_code == 1
    result = runner.invoke(app, ["catalog-texts", str(data)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"{lang}: 15 of 16 texts translated" for lang in ("pt", "es", "fr", "de")
    ]
    pot = (data / "locale" / "catalog.pot").read_text(encoding="utf-8")
    assert 'msgid "Sells InfiniBand clusters of 2 to 128 nodes."' in pot
    assert "of 2 to 64 nodes" not in (data / "locale" / "fr" / "catalog.po").read_text("utf-8")
    after = runner.invoke(app, ["validate", str(data)])
    assert "catalog.pot" not in after.stdout
    assert "fr translation" in after.stdout  # the new text waits for its translators


def test_catalog_texts_needs_a_catalog_directory(tmp_path: Path) -> None:
    result = runner.invoke(app, ["catalog-texts", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_build_db_and_validate_count_warnings_by_kind(tmp_path: Path) -> None:
    data = Path(__file__).parents[2] / "data"
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    built = runner.invoke(app, ["build-db", "--database-url", url, "--data-dir", str(data)])
    assert built.exit_code == 0, built.output
    total = int(re.search(r"; (\d+) warning\(s\)\)", built.stdout).group(1))  # type: ignore[union-attr]
    head, *kinds = built.stdout.split("warnings by kind")[1].splitlines()
    assert f"`clusterscout validate {data}` lists each one" in head
    counts = [int(line.split()[0]) for line in kinds]
    assert sum(counts) == total and counts == sorted(counts, reverse=True)
    labels = {k.label for k in WARNING_KINDS.values()}
    assert all(any(f"  {label}  " in line for label in labels) for line in kinds)
    checked = runner.invoke(app, ["validate", str(data)])
    listed = sum(": warning: " in line for line in checked.stdout.splitlines())
    assert listed == total
    assert "warnings by kind" in checked.stderr
