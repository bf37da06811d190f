"""The launch service: inputs, files per format, refusals, plan options and the file kinds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import Engine

from clusterscout.app import launch
from clusterscout.app.database import CatalogInvalidError
from clusterscout.app.errors import FailureKind, Operation, failure_of
from clusterscout.domain.errors import InputError
from clusterscout.launch.request import LaunchFormat, TrainingLayout, UnsupportedError
from clusterscout.model.planner.results import PlanOption


@pytest.fixture(scope="module")
def data(fixture_data_dir: Path) -> launch.LaunchData:
    return launch.launch_data(fixture_data_dir)


def test_unknown_offer_is_not_found(data: launch.LaunchData) -> None:
    with pytest.raises(launch.UnknownOfferError) as info:
        data.offer("alpha-nope")
    failure = failure_of(info.value, Operation.LAUNCH)
    assert failure is not None
    assert (failure.kind, failure.http_status, failure.field) == (
        FailureKind.NOT_FOUND,
        404,
        "offer_id",
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "expected a positive whole number"),
        (True, "expected a positive whole number"),
        ("2x", "expected a positive whole number"),
        (5000, "must be at most 4096"),
        (257, "alpha-h100-ib sells at most 256 nodes"),
    ],
)
def test_nodes_are_bounded_by_the_offer(
    data: launch.LaunchData, value: object, message: str
) -> None:
    with pytest.raises(InputError, match=message) as info:
        launch.parse_nodes(data.offer("alpha-h100-ib"), value)
    assert info.value.field == "nodes"


def test_nodes_accept_text_digits(data: launch.LaunchData) -> None:
    assert launch.parse_nodes(data.offer("alpha-h100-ib"), " 4 ") == 4


def test_formats() -> None:
    assert launch.parse_formats(None) == tuple(LaunchFormat)
    assert launch.parse_formats("SLURM") == (LaunchFormat.SLURM,)
    with pytest.raises(InputError, match="not one of: skypilot, dstack, slurm"):
        launch.parse_formats("k8s")


def test_layout_must_fill_the_cluster() -> None:
    body = {"tp": 8, "pp": 2, "dp": 1, "sharding": "fsdp", "micro_batch": 1, "global_batch": 64}
    assert launch.parse_layout(body, 16) == TrainingLayout(8, 2, 1, "fsdp", 1, 64)
    with pytest.raises(InputError, match=r"tp\*pp\*dp is 16, but the cluster has 32 GPUs"):
        launch.parse_layout(body, 32)
    with pytest.raises(InputError) as info:
        launch.parse_layout({**body, "sharding": "zero9"}, 16)
    assert info.value.field == "layout.sharding"
    with pytest.raises(InputError) as info:
        launch.parse_layout({**body, "ep": 2}, 16)
    assert info.value.field == "layout.ep"
    with pytest.raises(InputError) as info:
        launch.parse_layout([8, 2, 1], 16)
    assert info.value.field == "layout"


def test_every_format_gives_files_or_the_tools_reason(data: launch.LaunchData) -> None:
    answer = launch.launch(data, data.offer("alpha-h100-ib"), 2)
    by_format = {r.format: r for r in answer.formats}
    assert by_format["slurm"].files[0].filename == "alpha-h100-ib-2n.sbatch"
    assert "#SBATCH --nodes=2" in by_format["slurm"].files[0].content
    assert by_format["skypilot"].files == ()
    assert by_format["skypilot"].reason == "SkyPilot cannot target alpha: Not a SkyPilot cloud."
    assert answer.check.files[0].filename == "check-alpha-h100-ib-2n.sh"
    assert launch.file_of(answer, "slurm") is by_format["slurm"].files[0]
    with pytest.raises(UnsupportedError, match="Not a SkyPilot cloud"):
        launch.file_of(answer, "skypilot")
    with pytest.raises(InputError, match="not one of"):
        launch.file_of(answer, "helm")


def test_dstack_parts_are_separate_kinds(data: launch.LaunchData) -> None:
    real = launch.launch_data(Path(__file__).parents[2] / "data")
    answer = launch.launch(real, real.offer("aws-p5-h100"), 2, (LaunchFormat.DSTACK,))
    assert launch.file_of(answer, "dstack-fleet").filename == "aws-p5-h100-2n.fleet.dstack.yml"
    assert launch.file_of(answer, "dstack-task").filename == "aws-p5-h100-2n.task.dstack.yml"
    assert "placement: cluster" in launch.file_of(answer, "dstack-fleet").content


def test_a_plan_option_gives_its_offer_nodes_and_layout(fixture_engine: Engine) -> None:
    body = {"model": "7B", "tokens": 1e10, "max_nodes": 4}
    with fixture_engine.connect() as conn:
        option = launch.plan_option(conn, body, 1)
        assert option.rank_by_cost == 1
        with pytest.raises(InputError, match="the plan has") as info:
            launch.plan_option(conn, body, 999)
        assert info.value.field == "plan_option"
        with pytest.raises(InputError) as info:
            launch.plan_option(conn, {**body, "model": "nope"}, 1)
        assert info.value.field == "model"
    layout = TrainingLayout.of(option.layout)
    assert layout.tp * layout.pp * layout.dp == option.gpus


def test_a_broken_launch_file_is_an_invalid_catalog(tmp_path: Path, fixture_data_dir: Path) -> None:
    broken = tmp_path / "data"
    shutil.copytree(fixture_data_dir, broken)
    (broken / "launch.toml").write_text("[[env]]\nfabric = 'infiniband'\n")
    with pytest.raises(CatalogInvalidError) as info:
        launch.launch_data(broken)
    assert any("launch.toml" in p.file for p in info.value.problems)


def _no_plan(body: object, k: object) -> PlanOption:
    raise AssertionError("no plan expected")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "body"),
        ({"offer_id": "alpha-h100-ib", "nodes": 2, "gpus": 8}, "gpus"),
        ({"nodes": 2}, "offer_id"),
        ({"offer_id": 7, "nodes": 2}, "offer_id"),
        ({"offer_id": "alpha-h100-ib"}, "nodes"),
        ({"offer_id": "alpha-h100-ib", "nodes": 2, "plan": {"model": "7B"}}, "plan_option"),
        ({"offer_id": "alpha-h100-ib", "nodes": 2, "layout": {"tp": 8}}, "layout.pp"),
        ({"offer_id": "alpha-h100-ib", "plan_option": 1, "layout": {}}, "layout"),
        ({"offer_id": "alpha-h100-ib", "nodes": 2, "format": "helm"}, "format"),
    ],
)
def test_a_bad_body_names_the_key(data: launch.LaunchData, body: object, field: str) -> None:
    with pytest.raises(InputError) as info:
        launch.run_launch(data, body, _no_plan)
    assert info.value.field == field


def test_a_body_with_a_layout_passes_it_to_the_files(data: launch.LaunchData) -> None:
    layout = {"tp": 8, "pp": 1, "dp": 2, "sharding": "zero1", "micro_batch": 2, "global_batch": 64}
    body = {"offer_id": "alpha-h100-ib", "nodes": 2, "format": "slurm", "layout": layout}
    answer = launch.run_launch(data, body, _no_plan)
    assert [r.format for r in answer.formats] == ["slurm"]
    assert "export TP=8 PP=1 DP=2" in answer.formats[0].files[0].content
    assert answer.request.layout == TrainingLayout(8, 1, 2, "zero1", 2, 64)
