"""`clusterscout launch`, `check-cluster` and `ingest-nccl-tests`: files, refusals and errors."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from clusterscout.catalog.load import load_catalog
from clusterscout.cli import app
from clusterscout.settings import Settings
from tests.conftest import REAL_DATA_DIR

runner = CliRunner()
LOGS = Path(__file__).parents[1] / "fixtures" / "nccl-tests"
IB_2NODE = LOGS / "nccl-tests-issue309-h100-ib-ndr-2node-nccl2262.log"


@pytest.fixture
def fixture_args(fixture_settings: Settings, fixture_data_dir: Path) -> list[str]:
    return ["--data-dir", str(fixture_data_dir)]


def test_slurm_script_on_stdout_passes_bash_n(fixture_args: list[str], tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["launch", "alpha-h100-ib", "--nodes", "2", "--format", "slurm", *fixture_args]
    )
    assert result.exit_code == 0, result.output
    assert "#SBATCH --nodes=2" in result.stdout
    assert "NCCL_IB_DISABLE=0" in result.stdout
    script = tmp_path / "job.sbatch"
    script.write_text(result.stdout)
    subprocess.run(["bash", "-n", str(script)], check=True)


def test_a_tool_that_cannot_target_the_provider_says_why(fixture_args: list[str]) -> None:
    result = runner.invoke(app, ["launch", "alpha-h100-ib", "--nodes", "2", *fixture_args])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "error: no skypilot file for alpha-h100-ib: SkyPilot cannot target alpha" in (
        result.output
    )


def test_dstack_prints_fleet_and_task_as_one_yaml_stream() -> None:
    args = ["launch", "aws-p5-h100", "--nodes", "2", "--format", "dstack"]
    result = runner.invoke(app, [*args, "--data-dir", str(REAL_DATA_DIR)])
    assert result.exit_code == 0, result.output
    fleet, task = yaml.safe_load_all(result.stdout)
    assert (fleet["type"], fleet["nodes"], fleet["placement"]) == ("fleet", 2, "cluster")
    assert (task["type"], task["nodes"]) == ("task", 2)


def test_output_dir_writes_the_files(tmp_path: Path) -> None:
    args = ["launch", "aws-p5-h100", "--nodes", "2", "--format", "dstack", "-o", str(tmp_path)]
    result = runner.invoke(app, [*args, "--data-dir", str(REAL_DATA_DIR)])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["aws-p5-h100-2n.fleet.dstack.yml", "aws-p5-h100-2n.task.dstack.yml"]
    assert result.stdout.split() == [str(tmp_path / n) for n in names]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "--nodes", "2"], "error: OFFER_ID: no offer 'nope' in the catalog"),
        (["alpha-h100-ib"], "error: --nodes: required (or give a plan option)"),
        (["alpha-h100-ib", "--nodes", "0"], "error: --nodes: expected a positive whole number"),
        (["alpha-h100-ib", "--nodes", "300"], "error: --nodes: alpha-h100-ib sells at most 256"),
        (["alpha-h100-ib", "--nodes", "2", "--format", "k8s"], "error: --format: 'k8s' is not"),
        (["alpha-h100-ib", "--nodes", "2", "--model", "7B"], "need --plan-option K"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    fixture_args: list[str], args: list[str], message: str
) -> None:
    result = runner.invoke(app, ["launch", *args, *fixture_args])
    assert result.exit_code == 2
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_plan_option_sets_offer_nodes_and_layout(
    fixture_settings: Settings, fixture_args: list[str]
) -> None:
    db = ["--database-url", fixture_settings.resolved_database_url()]
    plan = ["--model", "7B", "--tokens", "1e10", "--max-nodes", "4"]
    planned = runner.invoke(app, ["plan", *plan, "--format", "json", *db])
    option = json.loads(planned.stdout)["options"][0]
    offer, nodes, layout = option["offer"]["offer_id"], option["nodes"], option["layout"]
    args = ["launch", offer, "--format", "slurm", "--plan-option", "1", *plan, *db, *fixture_args]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"#SBATCH --nodes={nodes}" in result.stdout
    assert f"export TP={layout['tp']} PP={layout['pp']} DP={layout['dp']}" in result.stdout
    other = "beta-h100-eth" if offer != "beta-h100-eth" else "alpha-h100-ib"
    wrong = runner.invoke(app, ["launch", other, *args[2:]])
    assert wrong.exit_code == 2
    assert f"error: --plan-option: option 1 is {offer}, not {other}" in wrong.output
    moved = runner.invoke(app, [*args, "--nodes", str(nodes + 1)])
    assert moved.exit_code == 2
    assert f"error: --nodes: option 1 runs on {nodes} nodes" in moved.output


def test_check_cluster_writes_the_nccl_tests_script(fixture_args: list[str]) -> None:
    result = runner.invoke(app, ["check-cluster", "alpha-h100-ib", "--nodes", "2", *fixture_args])
    assert result.exit_code == 0, result.output
    assert "all_reduce_perf" in result.stdout and "all_gather_perf" in result.stdout
    assert "-b 8 -e 16G -f 2" in result.stdout


def test_ingest_prints_a_verdict_and_records_check_model_accepts(
    fixture_args: list[str], tmp_path: Path
) -> None:
    args = ["ingest-nccl-tests", str(IB_2NODE), "--offer", "alpha-h100-ib", *fixture_args]
    table = runner.invoke(app, args)
    assert table.exit_code == 0, table.output
    assert "verdict: delivers " in table.stdout
    assert "1 GiB" in table.stdout
    as_json = runner.invoke(app, [*args, "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    records = json.loads(as_json.stdout)
    assert len(records) > 20
    points = tmp_path / "mine.json"
    points.write_text(as_json.stdout)
    checked = runner.invoke(app, ["check-model", str(points), *fixture_args])
    assert checked.exit_code == 0, checked.output
    assert f"expressed {len(records)} of {len(records)} points" in checked.stdout


def test_ingest_reads_a_run_on_part_of_each_node(fixture_args: list[str]) -> None:
    log = LOGS / "constructed" / "constructed-h100-2node-4of8gpus-g4-allreduce.log"
    args = ["ingest-nccl-tests", str(log), "--offer", "alpha-h100-ib", *fixture_args]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "all_reduce on 2 × 4 of 8 GPUs of alpha-h100-ib" in result.stdout
    assert "(measured on 4 of the 8 GPUs of each node)" in result.stdout


def test_ingest_rejects_a_file_that_is_not_nccl_tests(
    fixture_args: list[str], tmp_path: Path
) -> None:
    junk = tmp_path / "junk.log"
    junk.write_text("make: *** [all] Error 2\n")
    result = runner.invoke(
        app, ["ingest-nccl-tests", str(junk), "--offer", "alpha-h100-ib", *fixture_args]
    )
    assert result.exit_code == 2
    assert result.output.startswith("error: junk.log")


def _paste(snippet: str, provider_toml: str, offer_local_id: str) -> str:
    """Put the snippet's two parts where its comment says: sources, then the offer's end."""
    body = "\n".join(line for line in snippet.splitlines() if not line.startswith("#"))
    source, measured = body.split("[[offers.measured_fabric]]")
    lines = provider_toml.splitlines()
    at = lines.index("[multi_node]")
    lines[at:at] = [*source.strip().splitlines(), ""]
    start = lines.index(f'id = "{offer_local_id}"')
    nxt = [i for i, line in enumerate(lines) if line == "[[offers]]" and i > start]
    end = nxt[0] if nxt else len(lines)
    lines[end:end] = ["", "[[offers.measured_fabric]]", *measured.strip().splitlines(), ""]
    return "\n".join(lines) + "\n"


def test_emit_toml_gives_a_snippet_the_catalog_accepts(
    fixture_args: list[str], fixture_data_dir: Path, tmp_path: Path
) -> None:
    url = "https://github.com/NVIDIA/nccl-tests/issues/309"
    args = ["ingest-nccl-tests", str(IB_2NODE), "--offer", "alpha-h100-ib", *fixture_args]
    result = runner.invoke(app, [*args, "--emit-toml", "--source-url", url])
    assert result.exit_code == 0, result.output
    snippet = result.stdout
    assert "verdict: delivers " not in snippet  # verdicts go to standard error
    assert f'url = "{url}"' in snippet
    assert 'collective = "all_reduce"' in snippet and "nodes = 2" in snippet
    assert 'nccl_version = "2.26.2"' in snippet  # the release, without "+cuda12.8"
    # Pasted into a copy of the catalog as the comment says, it validates and loads.
    data = tmp_path / "data"
    shutil.copytree(fixture_data_dir, data)
    alpha = data / "providers" / "alpha.toml"
    alpha.write_text(_paste(snippet, alpha.read_text(encoding="utf-8"), "h100-ib"))
    checked = runner.invoke(app, ["validate", str(data)])
    assert checked.exit_code == 0, checked.output
    loaded = load_catalog(data).catalog
    assert loaded is not None
    offer = next(o for o in loaded.offers if o.id == "alpha-h100-ib")
    m = offer.measured_fabric[-1]  # the pasted run, after the fixture's own
    assert (m.collective, m.nodes, m.gpus_per_node) == ("all_reduce", 2, 8)
    assert m.sources[0].url == url


def test_emit_toml_without_a_public_page_leaves_the_url_out(
    fixture_args: list[str], fixture_data_dir: Path, tmp_path: Path
) -> None:
    # The same log without the line that names where it was published.
    log = tmp_path / "mine.log"
    text = IB_2NODE.read_text(encoding="utf-8")
    log.write_text("\n".join(x for x in text.splitlines() if not x.startswith("# source:")))
    args = ["ingest-nccl-tests", str(log), "--offer", "alpha-h100-ib", *fixture_args]
    result = runner.invoke(app, [*args, "--emit-toml"])
    assert result.exit_code == 0, result.output
    assert '# url = "https://..."' in result.stdout
    data = tmp_path / "data"
    shutil.copytree(fixture_data_dir, data)
    alpha = data / "providers" / "alpha.toml"
    alpha.write_text(_paste(result.stdout, alpha.read_text(encoding="utf-8"), "h100-ib"))
    checked = runner.invoke(app, ["validate", str(data)])
    assert checked.exit_code != 0
    assert "url" in checked.output


def test_emit_toml_refusals(fixture_args: list[str]) -> None:
    args = ["ingest-nccl-tests", str(IB_2NODE), "--offer", "alpha-h100-ib", *fixture_args]
    both = runner.invoke(app, [*args, "--emit-toml", "--format", "json"])
    assert both.exit_code == 2
    assert "error: --emit-toml and --format json" in both.output
    plain = runner.invoke(app, [*args, "--emit-toml", "--source-url", "http://example.org/x"])
    assert plain.exit_code == 2
    assert "error: --source-url" in plain.output
