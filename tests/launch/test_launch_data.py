"""data/launch.toml: strict schema, cross-file checks, and problems reported by validate."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterscout.catalog.launch_data import load_launch
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Problem, Severity
from clusterscout.cli import app
from clusterscout.domain.launch import LaunchKnowledge
from clusterscout.domain.models import CatalogData, FabricKind

FIXTURE_CATALOG = Path(__file__).parents[1] / "fixtures" / "catalog"
SOURCES = """
[[sources]]
id = "doc"
url = "https://example.com/doc"
checked_on = 2026-11-30
"""
TARGETS = """
[[skypilot]]
provider = "alpha"
cloud = "aws"
multi_node = true
network_tier_best = true
network_tier_gpus = ["H100-SXM-80GB"]
sources = ["doc"]

[[skypilot]]
provider = "beta"
note = "Not a SkyPilot cloud."
sources = ["doc"]

[[dstack]]
provider = "alpha"
backend = "aws"
multi_node = true
sources = ["doc"]

[[dstack]]
provider = "beta"
note = "No backend."
sources = ["doc"]
"""


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(FIXTURE_CATALOG, target)
    return target


def load(data_dir: Path, text: str) -> tuple[LaunchKnowledge, list[Problem]]:
    (data_dir / "launch.toml").write_text(text)
    result = load_catalog(data_dir)
    assert result.catalog is not None
    problems: list[Problem] = []
    return load_launch(data_dir, problems, result.catalog), problems


def messages(problems: list[Problem]) -> list[str]:
    return [f"{p.path}: {p.message}" for p in problems]


def test_real_launch_data_has_no_errors(knowledge: LaunchKnowledge, catalog: CatalogData) -> None:
    assert len(knowledge.env) > 30
    assert {t.provider for t in knowledge.skypilot} == {t.provider for t in knowledge.dstack}
    for var in knowledge.env:
        assert var.source.url.startswith("https://")
        assert len(var.comment) < 200
    providers = {p.slug for p in catalog.providers}
    assert {t.provider for t in knowledge.skypilot} <= providers


def test_absent_file_means_no_launch_knowledge(data_dir: Path) -> None:
    (data_dir / "launch.toml").unlink()
    problems: list[Problem] = []
    assert load_launch(data_dir, problems) == LaunchKnowledge()
    assert problems == []


def test_minimal_file_loads_and_scopes(data_dir: Path) -> None:
    text = (
        SOURCES
        + TARGETS
        + """
[[env]]
fabric = "infiniband"
name = "NCCL_IB_DISABLE"
value = "0"
comment = "Keep IB on."
source = "doc"

[[env]]
fabric = "infiniband"
provider = "alpha"
offers = ["alpha-h100-ib"]
name = "NCCL_IB_DISABLE"
comment = "Left to the default here."
source = "doc"

[[setup]]
fabric = "infiniband"
provider = "alpha"
command = "echo setup"
comment = "A step."
source = "doc"

[[preflight]]
fabric = "roce"
command = "ibv_devinfo -l"
comment = "A check."
source = "doc"

[[skypilot_accelerators]]
gpu = "H100-SXM-80GB"
name = "H100"
clouds = ["aws"]
sources = ["doc"]

[[dstack_gpus]]
gpu = "H100-SXM-80GB"
name = "H100:80GB"
sources = ["doc"]
"""
    )
    knowledge, problems = load(data_dir, text)
    assert problems == []
    catalog = load_catalog(data_dir).catalog
    assert catalog is not None
    offers = {o.id: o for o in catalog.offers}
    h100, a100 = offers["alpha-h100-ib"], offers["alpha-a100-ib"]
    assert [v.value for v in knowledge.env_for(h100)] == [None]
    assert [v.value for v in knowledge.env_for(a100)] == ["0"]
    assert [c.command for c in knowledge.setup_for(h100)] == ["echo setup"]
    assert knowledge.preflight_for(offers["beta-mi300x-roce"])[0].scope.fabric is FabricKind.ROCE
    alpha = knowledge.skypilot_target("alpha")
    assert alpha is not None
    assert alpha.best_tier_for("H100-SXM-80GB", 8)
    assert not alpha.best_tier_for("A100-SXM-80GB", 8)
    assert knowledge.dstack_gpu("H100-SXM-80GB") is not None
    assert knowledge.dstack_gpu("MI300X-192GB") is None


def test_schema_errors_are_all_reported_with_key_paths(data_dir: Path) -> None:
    text = (
        SOURCES
        + """
[[env]]
fabric = "infiniband"
name = "nccl_lower"
comment = "x"
source = "doc"

[[env]]
fabric = "infiniband"
offers = ["alpha-h100-ib"]
name = "NCCL_X"
comment = "x"
source = "doc"

[[skypilot]]
provider = "alpha"
cloud = "aws"
sources = ["doc"]

[[skypilot]]
provider = "beta"
sources = ["doc"]

[[dstack]]
provider = "alpha"
backend = "aws"
sources = ["doc"]

[[dstack]]
provider = "beta"
backend = "lambda"
multi_node = false
sources = ["doc"]
"""
    )
    knowledge, problems = load(data_dir, text)
    assert knowledge == LaunchKnowledge()
    text_problems = " | ".join(messages(problems))
    assert "env[0].name" in text_problems
    assert "offers can only narrow a provider entry" in text_problems
    assert "needs multi_node and network_tier_best" in text_problems
    assert "say in note why SkyPilot cannot target" in text_problems
    assert "a provider dstack targets needs multi_node" in text_problems
    assert "say in note why dstack cannot provision" in text_problems


def test_cross_file_problems(data_dir: Path) -> None:
    text = (
        SOURCES
        + """
[[sources]]
id = "unused"
url = "https://example.com/unused"
checked_on = 2026-11-30

[[env]]
fabric = "roce"
provider = "nobody"
name = "A"
value = "1"
comment = "x"
source = "doc"

[[env]]
fabric = "roce"
provider = "beta"
offers = ["beta-nothing"]
name = "B"
value = "1"
comment = "x"
source = "doc"

[[env]]
fabric = "roce"
name = "C"
value = "1"
comment = "x"
source = "missing"

[[setup]]
fabric = "roce"
command = "true"
comment = "x"
source = "missing"

[[skypilot]]
provider = "alpha"
cloud = "aws"
multi_node = true
network_tier_best = true
network_tier_gpus = ["TPU"]
sources = ["doc"]

[[skypilot]]
provider = "alpha"
note = "again"
sources = ["doc"]

[[skypilot]]
provider = "nobody"
note = "x"
sources = ["doc"]

[[skypilot_accelerators]]
gpu = "TPU"
name = "tpu"
clouds = ["gcp"]
sources = ["doc"]

[[dstack_gpus]]
gpu = "H100-SXM-80GB"
name = "H100"
sources = ["doc"]

[[dstack_gpus]]
gpu = "H100-SXM-80GB"
name = "H100:80GB"
sources = ["doc"]
"""
    )
    knowledge, problems = load(data_dir, text)
    found = messages(problems)
    expected = [
        "env[0].provider: unknown provider 'nobody'",
        "env[1].offers: unknown offer 'beta-nothing'",
        "env[2].source: source 'missing' is not defined in [[sources]]",
        "setup[0].source: source 'missing' is not defined in [[sources]]",
        "skypilot[0].network_tier_gpus: unknown GPU 'TPU'",
        "skypilot[1]: second entry for 'alpha'",
        "skypilot[2].provider: unknown provider 'nobody'",
        "skypilot_accelerators[0].gpu: unknown GPU 'TPU'",
        "dstack_gpus[1]: second entry for 'H100-SXM-80GB'",
        "sources[unused]: source is never cited",
        "skypilot: no [[skypilot]] entry for 'beta', which sells multi-node clusters",
        "dstack: no [[dstack]] entry for 'alpha', which sells multi-node clusters",
    ]
    for item in expected:
        assert item in found, (item, found)
    assert [v.name for v in knowledge.env] == ["A", "B"]  # C's source is missing: left out
    assert knowledge.setup == ()
    warnings = {p.message for p in problems if p.severity is Severity.WARNING}
    assert "source is never cited" in warnings


def test_malformed_toml_is_one_problem(data_dir: Path) -> None:
    knowledge, problems = load(data_dir, "[[env]\n")
    assert knowledge == LaunchKnowledge()
    assert len(problems) == 1
    assert "malformed TOML" in problems[0].message


def test_validate_reports_launch_problems(data_dir: Path) -> None:
    (data_dir / "launch.toml").write_text(SOURCES + "[[dstack]]\nprovider = 'alpha'\n")
    result = CliRunner().invoke(app, ["validate", str(data_dir)])
    assert result.exit_code == 1
    assert "launch.toml: dstack[0].sources: required key is missing" in result.output
