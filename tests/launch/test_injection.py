"""Catalog text cannot run in a generated file: validate refuses it, and the generators quote
it anyway (the scripts are run here with stubbed cluster tools to prove it)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import subprocess
from datetime import date
from pathlib import Path

import pytest
import yaml

from clusterscout.catalog.launch_data import load_launch
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Problem
from clusterscout.domain.launch import Command, EnvVar, LaunchKnowledge, Scope
from clusterscout.domain.models import CatalogData, Offer, Source
from clusterscout.launch.checkscript import check_script
from clusterscout.launch.request import LaunchRequest, TrainingLayout
from clusterscout.launch.script import one_line, shell_value, yaml_scalar
from clusterscout.launch.slurm import slurm_script

FIXTURE_CATALOG = Path(__file__).parents[1] / "fixtures" / "catalog"
BASH = shutil.which("bash")
PAYLOADS = (
    "$(touch {mark}/dollar)",
    "`touch {mark}/backtick`",
    "${{HOME:+$(touch {mark}/nested)}}",
    "x\ntouch {mark}/newline",
    "x\rtouch {mark}/cr",
    "'; touch {mark}/quote; '",
)
SOURCES = """
[[sources]]
id = "doc"
url = "https://example.com/doc"
checked_on = 2026-11-30
"""


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(FIXTURE_CATALOG, target)
    return target


def _problems(data_dir: Path, text: str) -> list[str]:
    (data_dir / "launch.toml").write_text(text)
    result = load_catalog(data_dir)
    assert result.catalog is not None
    problems: list[Problem] = []
    load_launch(data_dir, problems, result.catalog)
    return [f"{p.path}: {p.message}" for p in problems]


def _env(value: str, comment: str = '"A value."') -> str:
    return (
        SOURCES
        + f"""
[[env]]
fabric = "infiniband"
name = "NCCL_SOCKET_IFNAME"
value = {value}
comment = {comment}
source = "doc"
"""
    )


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ('"eth0$(touch /tmp/x)"', "must not contain a $ other than"),
        ('"${HOME}$(id)"', "must not contain a $ other than"),
        ('"${HOME:+x}"', "must not contain a $ other than"),
        ('"a`id`"', "must not contain a backtick"),
        ('"a\\nb"', "no control characters"),
        ('"a\\u0000b"', "no control characters"),
        ('"it\'s"', "no single quote"),
    ],
)
def test_validate_refuses_env_values_that_would_run(data_dir: Path, value: str, why: str) -> None:
    found = _problems(data_dir, _env(value))
    assert any(m.startswith("env[0].value") and why in m for m in found), found


@pytest.mark.parametrize("comment", ['"two\\nlines"', '"carriage\\rreturn"', '"tab\\there"'])
def test_validate_refuses_control_characters_in_comments(data_dir: Path, comment: str) -> None:
    found = _problems(data_dir, _env('"eth0"', comment))
    assert any("env[0].comment" in m and "control characters" in m for m in found), found


def test_validate_accepts_the_one_expansion_values_need(data_dir: Path) -> None:
    found = _problems(data_dir, _env('"/opt/lib:${LD_LIBRARY_PATH:-}"'))
    assert not any("env[0]" in m for m in found), found


def test_catalog_text_with_a_newline_is_refused(data_dir: Path) -> None:
    path = data_dir / "providers" / "alpha.toml"
    text = path.read_text()
    assert 'name = "Alpha Cloud"' in text
    path.write_text(text.replace('name = "Alpha Cloud"', 'name = "Alpha\\ntouch /tmp/x"', 1))
    result = load_catalog(data_dir)
    assert any("name" in p.path and "control characters" in p.message for p in result.problems), [
        f"{p.path}: {p.message}" for p in result.problems
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("eth0", "eth0"),
        ("/opt/lib:${LD_LIBRARY_PATH:-}", '/opt/lib:"${LD_LIBRARY_PATH:-}"'),
        ("$(id)${X}", "'$(id)'\"${X}\""),
        ("${HOME}", '"${HOME}"'),
        ("", "''"),
        ("a b", "'a b'"),
    ],
)
def test_shell_values_quote_everything_but_references(value: str, expected: str) -> None:
    assert shell_value(value) == expected


def test_yaml_scalars_and_comment_lines() -> None:
    assert yaml_scalar("H100:8") == "H100:8"
    assert yaml_scalar("yes") == '"yes"'
    assert yaml.safe_load(f"k: {yaml_scalar('a: b # c')}") == {"k": "a: b # c"}
    assert one_line("a\nb\rc\x00d") == "a b c d"


def _crafted(offer: Offer, mark: Path) -> LaunchKnowledge:
    """Launch knowledge a hostile (or careless) curator wrote, bypassing validate."""
    assert offer.fabric is not None
    scope = Scope(offer.fabric)
    payloads = [p.format(mark=mark) for p in PAYLOADS]
    source = Source("doc", "https://example.com/\ntouch " + f"{mark}/url", date(2026, 12, 1))
    env = tuple(
        EnvVar(scope, f"CRAFTED_{i}", f"/opt/lib:${{LD_LIBRARY_PATH:-}}{p}", p, source)
        for i, p in enumerate(payloads)
    )
    unset = EnvVar(scope, "NCCL_UNSET", None, payloads[3], source)
    check = Command(scope, "true", payloads[4], source)
    return LaunchKnowledge(env=(*env, unset), preflight=(check,))


def _stubs(bin_dir: Path, log: Path) -> None:
    """srun, sbatch, scontrol, torchrun and mpirun that run nothing of the payload's."""
    bin_dir.mkdir()
    scripts = {
        # srun runs the one command it is given, on this one "node".
        "srun": '#!/bin/bash\nwhile [[ "$1" == --* ]]; do shift; done\nexec "$@"\n',
        "sbatch": '#!/bin/bash\nexec bash "$@"\n',
        "scontrol": "#!/bin/bash\necho node-1\n",
        "torchrun": f'#!/bin/bash\nenv | grep ^CRAFTED_ | sort > "{log}"\n',
        "mpirun": "#!/bin/bash\nexit 0\n",
        "git": "#!/bin/bash\nexit 0\n",
        "make": "#!/bin/bash\nexit 0\n",
    }
    for name, text in scripts.items():
        path = bin_dir / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _slurm_offer(catalog: CatalogData) -> Offer:
    return next(o for o in catalog.offers if o.fabric is not None and o.gpus_per_node)


@pytest.mark.skipif(BASH is None, reason="needs bash")
def test_the_generated_slurm_script_runs_no_payload(tmp_path: Path, catalog: CatalogData) -> None:
    mark = tmp_path / "mark"
    mark.mkdir()
    offer = _slurm_offer(catalog)
    layout = TrainingLayout(
        tp=1, pp=1, dp=offer.gpus_per_node or 1, sharding="none", micro_batch=1, global_batch=8
    )
    request = LaunchRequest(offer, 1, layout)
    script = slurm_script(_crafted(offer, mark), request)
    path = tmp_path / script.filename
    path.write_text(script.content)
    bin_dir, log = tmp_path / "bin", tmp_path / "torchrun.env"
    _stubs(bin_dir, log)
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "SLURM_NNODES": "1",
        "SLURM_NODEID": "0",
        "SLURM_JOB_NODELIST": "node-1",
        "LD_LIBRARY_PATH": "/usr/lib",
    }
    done = subprocess.run(
        ["sbatch", str(path)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert list(mark.iterdir()) == []  # no payload ran
    exported = log.read_text().splitlines()
    # Each value reached torchrun as the literal text it is, its one reference expanded.
    for i, payload in enumerate(p.format(mark=mark) for p in PAYLOADS):
        if "\n" in payload or "\r" in payload:
            # A value that spans lines is left out (validate refuses it too).
            assert f"# CRAFTED_{i} left out" in script.content
            continue
        assert f"CRAFTED_{i}=/opt/lib:/usr/lib{payload}" in exported


@pytest.mark.skipif(BASH is None, reason="needs bash")
def test_the_generated_check_script_runs_no_payload(tmp_path: Path, catalog: CatalogData) -> None:
    mark = tmp_path / "mark"
    mark.mkdir()
    offer = _slurm_offer(catalog)
    script = check_script(_crafted(offer, mark), LaunchRequest(offer, 1))
    path = tmp_path / script.filename
    path.write_text(script.content)
    hostfile = tmp_path / "hosts"
    hostfile.write_text(f"node-1 slots={offer.gpus_per_node}\n")
    bin_dir = tmp_path / "bin"
    _stubs(bin_dir, tmp_path / "unused")
    built = tmp_path / "nccl" / "build"
    built.mkdir(parents=True)
    for name in ("all_reduce_perf", "all_gather_perf"):
        (built / name).write_text("#!/bin/bash\n")
        (built / name).chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "NCCL_TESTS_DIR": str(tmp_path / "nccl"),
    }
    done = subprocess.run(
        [BASH or "bash", str(path), str(hostfile)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert list(mark.iterdir()) == []


def test_yaml_files_keep_crafted_text_inside_their_blocks(
    tmp_path: Path, knowledge: LaunchKnowledge, catalog: CatalogData
) -> None:
    from clusterscout.launch.dstack import dstack_files
    from clusterscout.launch.skypilot import skypilot_task

    mark = tmp_path / "mark"
    offer = next(
        o
        for o in catalog.offers
        if o.fabric is not None
        and o.gpus_per_node
        and (t := knowledge.skypilot_target(o.provider)) is not None
        and t.cloud is not None
        and t.multi_node
        and (a := knowledge.skypilot_accelerator(o)) is not None
        and t.cloud in a.clouds
        and (d := knowledge.dstack_target(o.provider)) is not None
        and d.backend is not None
        and d.multi_node
        and knowledge.dstack_gpu(o.gpu) is not None
    )
    crafted = _crafted(offer, mark)
    mixed = dataclasses.replace(knowledge, env=crafted.env)
    request = LaunchRequest(offer, 2)
    sky = yaml.safe_load(skypilot_task(mixed, request).content)
    assert set(sky) == {"name", "num_nodes", "resources", "setup", "run"}
    fleet, task = (yaml.safe_load(f.content) for f in dstack_files(mixed, request))
    assert set(task) == {"type", "name", "nodes", "fleets", "commands", "resources"}
    assert set(fleet) == {"type", "name", "nodes", "placement", "backends", "resources"}
    # Every crafted comment stays one comment line of the run block.
    for block in (sky["run"], task["commands"][0]):
        lines = block.splitlines()
        assert not any(line.startswith("touch ") for line in lines)
