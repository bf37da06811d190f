"""`clusterscout estimate`, `plan` and `check-model`: JSON contract, tables and errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from clusterscout.cli import app
from clusterscout.settings import Settings
from tests.conftest import REAL_DATA_DIR

runner = CliRunner()


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
    # every option and per-GPU verdict says whether its GPU family is calibrated; the MI300X
    # rests on a prior and comes after every calibrated option
    states = [(o["offer"]["gpu"], o["calibrated"], o["gpu_family"]) for o in data["options"]]
    assert ("MI300X-192GB", False, "MI300X") in states
    assert ("H100-SXM-80GB", True, "H100") in states
    order = [calibrated for _, calibrated, _ in states]
    assert order == sorted(order, reverse=True)
    assert {v["gpu"]: v["calibrated"] for v in data["per_gpu"]}["MI300X-192GB"] is False


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
            "int3",
            *_db(fixture_settings),
        ],
    )
    assert result.exit_code == 2
    assert "--precision: must be bf16, fp16, fp8 or int4" in result.stderr


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
    assert int(match.group(1)) >= 100
    assert median <= 10.0
    assert p90 <= 25.0
    # held-out-by-source error and the signed bias, overall and per stack (issue 8)
    text = result.stdout
    held = text.split("held out by source")[1].split("test sources")[0]
    rows = dict(
        re.findall(r"^\s+(all|megatron|pytorch|deepspeed)\s+(.*)$", held, flags=re.MULTILINE)
    )
    assert set(rows) == {"all", "megatron", "pytorch", "deepspeed"}
    figures = re.search(
        r"median\s+([\d.]+)%\s+p90\s+([\d.]+)%\s+optimistic\s+(\d+)%\s+"
        r"median signed\s+([+-][\d.]+)%",
        rows["all"],
    )
    assert figures, rows["all"]
    assert float(figures.group(1)) <= 10.0
    assert float(figures.group(2)) <= 25.0
    assert abs(float(figures.group(4))) <= 5.0
    # per GPU family: its calibration state, and the cross-GPU ratio check (issue 25)
    assert re.search(r"^\s+H100\s+level [\d.]+\s+calibrated, \d+ fitted points", text, re.M)
    assert re.search(r"^\s+MI300X\s+level [\d.]+\s+NOT calibrated \(prior\)", text, re.M)
    ratios = text.split("cross-GPU ratios")[1].split("the same job on two GPUs")[0]
    assert re.search(r"H100-SXM-80GB/A100-SXM-80GB: published 2\.19, predicted [\d.]+", ratios)
    same_job = text.split("the same job on two GPUs")[1]
    pairs = re.findall(
        r"Llama-3 70B\s+(megatron|pytorch|deepspeed)\s+H100-SXM-80GB/A100-SXM-80GB: ([\d.]+)",
        same_job,
    )
    assert {stack for stack, _ in pairs} == {"megatron", "pytorch", "deepspeed"}


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
        ["plan", "--model", "70B", "--tokens", "5e10", *_db(fixture_settings)],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    headline = result.stdout.splitlines()[0]
    assert "Needs multi-node: no on MI300X-192GB; yes on " in headline
    assert "H100-SXM-80GB" in headline.split("yes on ")[1]
    assert "on_demand" in result.stdout  # the price column names the tier paid
    assert "(default: no deadline given)" in result.stdout.splitlines()[1]


def test_cli_plan_verdict_uses_time_as_well_as_memory(fixture_settings: Settings) -> None:
    # 70B on 1T tokens fits one MI300X node in memory but takes years there (issue 8).
    result = runner.invoke(
        app,
        ["plan", "--model", "70B", "--tokens", "1e12", *_db(fixture_settings)],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Needs multi-node: yes")
    assert re.search(
        r"Deadline: 90\.0 days \(default: no deadline given\); fewest nodes that meet "
        r"it: \d+ node",
        lines[1],
    )
    mi300x = next(line for line in lines if line.strip().startswith("MI300X-192GB"))
    assert "one node:" in mi300x and "days" in mi300x


def test_cli_estimate_reports_the_field_of_a_bad_scenario(fixture_settings: Settings) -> None:
    bad = json.loads(json.dumps(COLLECTIVE))
    bad["workload"]["op"] = "broadcast"
    result = runner.invoke(app, ["estimate", "-", *_db(fixture_settings)], input=json.dumps(bad))
    assert result.exit_code == 2
    assert "workload.op" in result.stderr


def test_check_model_reports_serving_points_apart_with_held_out_error() -> None:
    result = runner.invoke(
        app,
        ["check-model", str(REAL_DATA_DIR / "measurements.json"), "--data-dir", str(REAL_DATA_DIR)],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    match = re.search(r"serving: expressed (\d+) inference points", result.stdout)
    assert match and int(match.group(1)) >= 8
    assert "serving, held out by source" in result.stdout
    # the training table does not count them twice: they are sent to the serving section
    assert "inference point: checked in the serving section below" in result.stdout
    # the serving figures split into decode, first-token and MoE points, and per GPU, held out
    held = result.stdout.split("serving, held out by source")[1]
    for label in ("decode", "ttft", "moe", "H100-SXM-80GB", "A100-SXM-80GB"):
        assert re.search(rf"^  {label}\s+\d+ points\s+median", held, re.M), label
    # the held-out bar of the serving model: median <= 15%, p90 <= 40%
    line = re.search(r"^  all\s+(\d+) points\s+median\s+([\d.]+)%\s+p90\s+([\d.]+)%", held, re.M)
    assert line and int(line.group(1)) == int(match.group(1))
    assert float(line.group(2)) <= 15.0 and float(line.group(3)) <= 40.0


def test_plan_for_inference_states_ttft_and_the_evidence_per_gpu(
    fixture_settings: Settings,
) -> None:
    args = ["plan", "--job", "inference", "--model", "70B", "--precision", "fp8"]
    result = runner.invoke(app, [*args, *_db(fixture_settings)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "time to first token" in result.stdout and "TTFT" in result.stdout
    # the fixture calibration has no serving evidence: every GPU row says so
    assert "few (0)" in result.stdout and "fewer than 5 published serving points" in result.stdout


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


def test_cli_plan_reports_goodput_per_option_and_takes_its_inputs(
    fixture_settings: Settings,
) -> None:
    base = ["plan", "--model", "70B", "--tokens", "1e12", *_db(fixture_settings)]
    result = runner.invoke(app, [*base, "--format", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["options"]
    for o in answer["options"]:
        g = o["goodput"]
        assert 0 < g["goodput"] < 1
        assert g["expected_interruptions"] > 0
        assert g["time_with_interruptions_hours"] > o["time_hours"]
        # A billing minimum or term may already pay for the hours interruptions add.
        assert g["added_usd"] >= 0
    assert any(o["goodput"]["added_usd"] > 0 for o in answer["options"])
    assert answer["reliability"]["source_url"].startswith("https://")
    assert answer["reliability"]["given"] == []

    # Fewer failures, all else equal, lose less; the figure given is named in the answer.
    rarer = runner.invoke(app, [*base, "--format", "json", "--failures-per-million-gpu-hours", "1"])
    assert rarer.exit_code == 0, rarer.output
    rare = json.loads(rarer.stdout)
    assert rare["reliability"]["given"] == ["failures_per_million_gpu_hours"]
    first = {o["offer"]["id"]: o["goodput"]["goodput"] for o in answer["options"]}
    for o in rare["options"]:
        if o["offer"]["id"] in first and o["nodes"] == next(
            x["nodes"] for x in answer["options"] if x["offer"]["id"] == o["offer"]["id"]
        ):
            assert o["goodput"]["goodput"] > first[o["offer"]["id"]]

    table = runner.invoke(app, base, env={"COLUMNS": "250"})
    assert table.exit_code == 0, table.output
    assert "goodput" in table.stdout and "interruptions per million GPU-hours" in table.stdout

    bad = runner.invoke(app, [*base, "--checkpoint-minutes", "-5"])
    assert bad.exit_code == 2
    assert "--checkpoint-minutes" in bad.stderr
