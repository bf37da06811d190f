"""clusterscout quote: the API's quote as a table or JSON, errors naming the flag."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from clusterscout.cli import app
from clusterscout.settings import Settings

runner = CliRunner()


@pytest.fixture
def db(fixture_settings: Settings) -> list[str]:
    return ["--database-url", fixture_settings.resolved_database_url()]


def test_json_matches_the_api_shape_with_a_total_or_reason_per_provider(db: list[str]) -> None:
    args = ["quote", "--gpus", "64", "--months", "6", "--start", "2026-12-01", "--format", "json"]
    result = runner.invoke(app, [*args, *db])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert set(body) == {"data", "count", "meta"}
    alpha = next(p for p in body["data"] if p["provider"] == "alpha")
    assert alpha["best"]["total"]["USD"]["low"] == 500398.08
    assert all(p["best"] or p["reason"] for p in body["data"])


def test_table_in_euros_names_the_rates(db: list[str]) -> None:
    result = runner.invoke(
        app, ["quote", "--start", "2026-12-01", "--currency", "eur", "--gpu", "a100", *db]
    )
    assert result.exit_code == 0, result.output
    assert "EUR" in result.output
    assert "ECB reference rates of" in result.output
    assert "no offer of this GPU" in result.output


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--gpus", "many"], "--gpus"),
        (["--months", "0"], "--months"),
        (["--start", "tomorrow"], "--start"),
        (["--currency", "JPY"], "--currency"),
        (["--gpu", "Z9000"], "--gpu"),
    ],
)
def test_bad_input_names_the_flag_and_exits_2(db: list[str], args: list[str], flag: str) -> None:
    result = runner.invoke(app, ["quote", *args, *db])
    assert result.exit_code == 2
    assert f"{flag}:" in result.output
