"""CLI options come from the fields table: every API plan field is a plan option; bare booleans."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from clusterscout.app.fields import OFFER_FILTER_NAMES, PLAN_FIELD_NAMES
from clusterscout.cli import app
from clusterscout.cli.catalog import list_offers
from clusterscout.cli.model import plan
from clusterscout.settings import Settings
from clusterscout.web.api_docs import plan_body_schema

runner = CliRunner()


@pytest.fixture
def db(fixture_settings: Settings) -> list[str]:
    return ["--database-url", fixture_settings.resolved_database_url()]


def _options(command: Any) -> set[str]:
    return {p.name for p in command.params if p.name}


def test_every_field_the_plan_api_accepts_is_a_plan_option() -> None:
    api_fields = set(plan_body_schema()["properties"])
    assert api_fields == set(PLAN_FIELD_NAMES)
    assert api_fields <= _options(plan)
    assert set(OFFER_FILTER_NAMES) <= _options(list_offers)


@pytest.mark.parametrize(
    ("args", "ids"),
    [
        (["--multi-node", "--fabric", "infiniband", "--rdma"], ["alpha-h100-ib", "alpha-a100-ib"]),
        (["--multi-node", "true", "--rdma", "true", "--fabric", "infiniband"], None),
        (["--rdma", "false"], ["beta-h100-eth"]),
        (["--rdma=false", "--multi-node"], ["beta-h100-eth"]),
    ],
)
def test_boolean_flags_work_bare_and_with_a_value(
    db: list[str], args: list[str], ids: list[str] | None
) -> None:
    result = runner.invoke(app, ["offers", *args, "--format", "json", "--sort", "gbps", *db])
    assert result.exit_code == 0, result.stderr
    found = [r["id"] for r in json.loads(result.stdout)]
    assert found == (ids or ["alpha-h100-ib", "alpha-a100-ib"])


def test_piped_plan_table_keeps_every_row_on_one_line(db: list[str]) -> None:
    args = ["plan", "--model", "70B", "--tokens", "1e12", "--gpu", "H100"]
    result = runner.invoke(app, [*args, "--price-tier", "on_demand", *db])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    # The note under the table naming the published run behind an offer's network figure
    # mentions the offer too; it is not a table row.
    notes = [line for line in lines if line.startswith("Network 'measured': alpha-h100-ib")]
    assert notes and "https://github.com/NVIDIA/nccl-tests/issues/309" in notes[0]
    rows = [line for line in lines if "alpha-h100-ib" in line and line not in notes]
    assert rows
    assert all("on_demand" in line and "H100-SXM-80GB" in line for line in rows)
    assert all(line.rstrip().endswith("measured 100%") for line in rows)
    header = next(line for line in result.stdout.splitlines() if line.startswith("#"))
    assert header.split()[:4] == ["#", "offer", "GPU", "price"]
