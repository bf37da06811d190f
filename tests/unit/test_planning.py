"""Estimate and plan services and their CLI commands, over the fixture catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from clusterscout.app.database import build
from clusterscout.app.estimates import run_estimate
from clusterscout.app.inputs import parse_plan
from clusterscout.app.plans import plan_offer, run_plan
from clusterscout.catalog.calibration import CalibrationError
from clusterscout.cli import app
from clusterscout.domain.errors import InputError
from clusterscout.model.planner.request import PlanRequest
from clusterscout.settings import Settings
from clusterscout.store.db import make_engine
from clusterscout.web.schemas import estimate_json, plan_json
from tests.conftest import REAL_DATA_DIR

runner = CliRunner()


def plan_request(body: Any) -> PlanRequest:
    return parse_plan(body)[0]


COLLECTIVE = {
    "cluster": {
        "gpu": "H100",
        "gpus_per_node": 8,
        "nodes": 4,
        "fabric": "infiniband",
        "per_node_gbps": 3200,
        "gpudirect_rdma": True,
    },
    "workload": {"kind": "collective", "op": "all_reduce", "message_bytes": 4294967296},
}


def test_estimate_collective_resolves_aliases(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        result = estimate_json(run_estimate(conn, COLLECTIVE))
    assert result["gpu"] == "H100-SXM-80GB"
    assert result["kind"] == "collective"
    # nccl-tests definition for all-reduce: busbw = algbw * 2(n-1)/n with n = 32 ranks.
    assert result["busbw_gbs"] == pytest.approx(result["algbw_gbs"] * 2 * 31 / 32)
    assert result["algbw_gbs"] == pytest.approx(4294967296 / 1e9 / result["time_s"])


def test_estimate_rejects_bad_scenarios_naming_the_field(fixture_engine: Engine) -> None:
    bad = json.loads(json.dumps(COLLECTIVE))
    bad["cluster"]["nodes"] = 0
    with fixture_engine.connect() as conn, pytest.raises(InputError) as info:
        run_estimate(conn, bad)
    assert info.value.field == "cluster.nodes"
    bad["cluster"]["nodes"] = 2
    bad["cluster"]["gpu"] = "Z9"
    with fixture_engine.connect() as conn, pytest.raises(InputError) as info:
        run_estimate(conn, bad)
    assert info.value.field == "cluster.gpu"
    with fixture_engine.connect() as conn, pytest.raises(InputError):
        run_estimate(conn, [1, 2])


def test_plan_ranks_priced_offers_and_explains_exclusions(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn:
        result = plan_json(run_plan(conn, {"model": "70B", "tokens": 2e11}))
        h100_only = plan_json(run_plan(conn, {"model": "70B", "tokens": 2e11, "gpu": "H100"}))
    # ~16 bytes per parameter of model state: 70B needs more than one 8x80 GB node, while
    # eight 192 GB MI300X hold it, so the verdict depends on the GPUs considered.
    assert h100_only["needs_multi_node"] is True
    assert h100_only["min_gpus_to_fit"] > 8
    verdicts = {v["gpu"]: v["one_node_fits"] for v in result["per_gpu"]}
    assert verdicts["H100-SXM-80GB"] is False
    assert verdicts["MI300X-192GB"] is True
    assert result["needs_multi_node"] is False
    offer_ids = {o["offer"]["offer_id"] for o in result["options"]}
    assert offer_ids <= {"alpha-h100-ib", "alpha-a100-ib", "beta-mi300x-roce"}
    assert offer_ids
    excluded = {e["offer"]["offer_id"]: e["reason"] for e in result["excluded"]}
    assert excluded.get("beta-h100-eth") == "no price"
    costs = [o["cost_usd"] for o in result["options"]]
    assert costs == sorted(costs)
    for option in result["options"]:
        gpus = option["nodes"] * option["offer"]["gpus_per_node"]
        price = option["offer"]["usd_per_gpu_hour"]
        assert option["cost_usd"] == pytest.approx(price * gpus * option["time_hours"])
        assert 0 < option["scaling_efficiency"] <= 1


def test_plan_prefers_on_demand_price_over_cheaper_reserved() -> None:
    record = {
        "id": "x-1",
        "provider": "x",
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "fabric": "infiniband",
        "per_node_gbps": 3200.0,
        "gpudirect_rdma": True,
        "max_nodes": 8,
        "max_nodes_by_quote": 32,
        "prices": [
            {"tier": "reserved", "usd_per_gpu_hour": 2.0},
            {"tier": "spot", "usd_per_gpu_hour": 1.0},
            {"tier": "on_demand", "usd_per_gpu_hour": 3.0},
        ],
    }
    offer = plan_offer(record)
    assert (offer.usd_per_gpu_hour, offer.price_tier, offer.max_nodes) == (3.0, "on_demand", 32)
    spot = plan_offer(record, "spot")  # a plan request that names a tier pays that tier
    assert (spot.usd_per_gpu_hour, spot.price_tier) == (1.0, "spot")
    assert plan_offer(record, "capacity_block").usd_per_gpu_hour is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "70B", "tokens": 1e12, "colour": 1}, "colour"),
        ({"model": "70B", "tokens": "lots"}, "tokens"),
        ({"model": "70B", "tokens": 1e12, "precision": "fp4"}, "precision"),
        ({"model": "70B", "tokens": 1e12, "max_nodes": 2.5}, "max_nodes"),
        ({"model": 70, "tokens": 1e12}, "model"),
    ],
)
def test_plan_request_errors_name_the_field(body: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        plan_request(body)
    assert info.value.field == field


def test_plan_filter_errors_name_the_field(fixture_engine: Engine) -> None:
    with fixture_engine.connect() as conn, pytest.raises(InputError) as info:
        run_plan(conn, {"model": "7B", "tokens": 1e9, "fabric": "carrier-pigeon"})
    assert info.value.field == "fabric"


def test_database_without_calibration_says_how_to_fix(
    tmp_path: Path, fixture_data_dir: Path
) -> None:
    import shutil

    data = tmp_path / "data"
    shutil.copytree(fixture_data_dir, data)
    (data / "calibration.toml").unlink()
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    build(engine, data)
    with engine.connect() as conn, pytest.raises(CalibrationError, match="rebuild"):
        run_plan(conn, {"model": "7B", "tokens": 1e9})
    engine.dispose()


def _db(settings: Settings) -> list[str]:
    return ["--database-url", settings.resolved_database_url()]


def test_cli_estimate_from_stdin_and_file(fixture_settings: Settings, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["estimate", "-", *_db(fixture_settings)], input=json.dumps(COLLECTIVE)
    )
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.stdout)) >= {"time_s", "algbw_gbs", "busbw_gbs"}
    path = tmp_path / "s.json"
    path.write_text("{not json")
    bad = runner.invoke(app, ["estimate", str(path), *_db(fixture_settings)])
    assert bad.exit_code == 2
    assert "invalid JSON" in bad.stderr


def test_cli_plan_json_contract(fixture_settings: Settings) -> None:
    result = runner.invoke(
        app,
        ["plan", "--model", "8B", "--tokens", "1e10", "--format", "json", *_db(fixture_settings)],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"needs_multi_node", "min_gpus_to_fit", "options", "excluded"} <= set(data)
    option = data["options"][0]
    assert {"offer", "nodes", "layout", "time_hours", "cost_usd", "scaling_efficiency"} <= set(
        option
    )
    # The offer object carries the same id as the offer records of the API and CLI.
    assert option["offer"]["id"] in {"alpha-h100-ib", "alpha-a100-ib", "beta-mi300x-roce"}
    for item in data["excluded"]:
        assert item["reason"]


def test_cli_plan_bad_flag(fixture_settings: Settings) -> None:
    result = runner.invoke(
        app,
        [
            "plan",
            "--model",
            "70B",
            "--tokens",
            "1e12",
            "--precision",
            "int4",
            *_db(fixture_settings),
        ],
    )
    assert result.exit_code == 2
    assert "--precision: must be bf16 or fp8" in result.stderr


def test_check_model_meets_the_calibration_targets() -> None:
    result = runner.invoke(
        app,
        ["check-model", str(REAL_DATA_DIR / "measurements.json"), "--data-dir", str(REAL_DATA_DIR)],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    last = result.stdout.strip().splitlines()[-1]
    match = re.search(
        r"expressed (\d+) of (\d+) points; median abs error ([\d.]+)%, p90 abs error ([\d.]+)%",
        last,
    )
    assert match, last
    median, p90 = float(match.group(3)), float(match.group(4))
    assert median <= 10.0
    assert p90 <= 25.0


def test_offer_with_unknown_gpus_per_node_is_excluded_not_guessed(
    fixture_engine: Engine,
) -> None:
    from clusterscout.app.estimates import stored_calibration
    from clusterscout.app.offers import gpu_specs
    from clusterscout.model.planner.plan import plan

    record = {
        "id": "x-h100",
        "provider": "x",
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": None,
        "fabric": "infiniband",
        "per_node_gbps": 3200.0,
        "gpudirect_rdma": True,
        "max_nodes": 8,
        "prices": [{"tier": "on_demand", "usd_per_gpu_hour": 3.0}],
    }
    offer = plan_offer(record)
    assert offer.gpus_per_node is None
    with fixture_engine.connect() as conn:
        result = plan(
            plan_request({"model": "7B", "tokens": 1e9}),
            [offer],
            gpu_specs(conn),
            stored_calibration(conn),
        )
    assert result.options == ()
    assert [(e.offer.offer_id, e.reason) for e in result.excluded] == [
        ("x-h100", "unknown GPUs per node")
    ]


def test_cli_estimate_and_plan_tables(fixture_settings: Settings) -> None:
    est = runner.invoke(
        app,
        ["estimate", "-", "--format", "table", *_db(fixture_settings)],
        input=json.dumps(COLLECTIVE),
        env={"COLUMNS": "200"},
    )
    assert est.exit_code == 0, est.output
    assert "collective estimate on H100-SXM-80GB" in est.stdout
    assert "busbw_gbs" in est.stdout
    plan_out = runner.invoke(
        app,
        ["plan", "--model", "70B", "--tokens", "1e11", "--gpu", "H100", *_db(fixture_settings)],
        env={"COLUMNS": "200"},
    )
    assert plan_out.exit_code == 0, plan_out.output
    assert "Needs multi-node: yes" in plan_out.stdout
    assert "alpha-h100-ib" in plan_out.stdout
    assert "p90 error on held-out measurements" in plan_out.stdout


def test_cli_plan_verdict_names_the_gpus_it_depends_on(fixture_settings: Settings) -> None:
    # 70B holds ~1 TiB of model state: one node of 192 GB MI300X holds it, 80 GB GPUs do not.
    result = runner.invoke(
        app,
        ["plan", "--model", "70B", "--tokens", "1e11", *_db(fixture_settings)],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    headline = result.stdout.splitlines()[0]
    assert "Needs multi-node: no on MI300X-192GB; yes on " in headline
    assert "H100-SXM-80GB" in headline.split("yes on ")[1]
    assert "on_demand" in result.stdout  # the price column names the tier paid


def test_cli_estimate_reports_the_field_of_a_bad_scenario(fixture_settings: Settings) -> None:
    bad = json.loads(json.dumps(COLLECTIVE))
    bad["workload"]["op"] = "broadcast"
    result = runner.invoke(app, ["estimate", "-", *_db(fixture_settings)], input=json.dumps(bad))
    assert result.exit_code == 2
    assert "workload.op" in result.stderr


def test_check_model_reports_bad_inputs(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["check-model", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2
    assert "cannot read" in missing.stderr
    wrong = tmp_path / "m.json"
    wrong.write_text('{"points": 3}')
    result = runner.invoke(app, ["check-model", str(wrong), "--data-dir", str(REAL_DATA_DIR)])
    assert result.exit_code == 2
    assert "expected a list of points" in result.stderr
    empty = tmp_path / "data"
    empty.mkdir()
    ok = tmp_path / "ok.json"
    ok.write_text('{"points": []}')
    no_gpus = runner.invoke(app, ["check-model", str(ok), "--data-dir", str(empty)])
    assert no_gpus.exit_code == 1
    assert "cannot load GPU figures" in no_gpus.stderr


def test_verdict_only_covers_gpus_that_are_rented_as_clusters(
    tmp_path: Path, fixture_data_dir: Path
) -> None:
    import shutil

    data = tmp_path / "data"
    shutil.copytree(fixture_data_dir, data)
    gpus = data / "gpus.toml"
    gpus.write_text(
        gpus.read_text()
        + '\n[[gpus]]\nname = "B300-SXM-288GB"\nvendor = "nvidia"\nmemory_gib = 268.2\n'
        'bf16_dense_tflops = 2250\nsources = ["h100-sheet"]\n'
    )
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    build(engine, data)
    with engine.connect() as conn:
        result = plan_json(run_plan(conn, {"model": "70B", "tokens": 1e11}))
    engine.dispose()
    # A 288 GB GPU nobody rents as a cluster must not turn the verdict into "one node is enough".
    assert {v["gpu"] for v in result["per_gpu"]} == {
        "H100-SXM-80GB",
        "A100-SXM-80GB",
        "MI300X-192GB",
    }


def test_require_finite_refuses_nan_and_infinity_naming_the_output() -> None:
    from clusterscout.app.estimates import require_finite

    require_finite({"a": 1.0, "b": [0.5, {"c": 2}], "d": None, "e": "x"}, "scenario")
    with pytest.raises(InputError) as info:
        require_finite({"breakdown_s": {"compute": float("inf")}}, "scenario")
    assert info.value.field == "scenario"
    assert "breakdown_s.compute is not finite" in info.value.message
    with pytest.raises(InputError, match=r"options\[1\] is not finite"):
        require_finite({"options": [1.0, float("nan")]}, "plan")
    with pytest.raises(InputError, match="result is not finite"):
        require_finite(float("nan"), "plan")
