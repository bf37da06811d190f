"""Every generated SkyPilot and dstack file, loaded by SkyPilot's and dstack's own code.

The tools pin dependencies that clash with ours, so ``make test`` installs them into
``.venv-tools`` (tests/tools/requirements.txt) and this test runs a checker script there, once
for all files. Forced files for targets our data refuses must be rejected by the tools too:
that keeps data/launch.toml honest when a tool release changes what it supports.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from clusterscout.domain.launch import LaunchKnowledge
from clusterscout.domain.models import Offer
from clusterscout.launch.dstack import dstack_files
from clusterscout.launch.generate import launch_files
from clusterscout.launch.request import LaunchFormat, LaunchRequest, UnsupportedError
from clusterscout.launch.skypilot import skypilot_task

ROOT = Path(__file__).parents[2]
TOOLS_PYTHON = ROOT / ".venv-tools" / "bin" / "python"
CHECKER = ROOT / "tests" / "tools" / "check_launch_files.py"

pytestmark = pytest.mark.skipif(
    not TOOLS_PYTHON.exists(), reason="no .venv-tools: `make test` installs SkyPilot and dstack"
)


def run_checker(folder: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(folder.parent / "home"),  # SkyPilot writes ~/.sky; keep it in tmp
        "SKYPILOT_DISABLE_USAGE_COLLECTION": "1",
        "DSTACK_DO_NOT_UPDATE_DEFAULT_PROJECT": "1",
    }
    result = subprocess.run(
        [str(TOOLS_PYTHON), str(CHECKER), str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_tools_accept_every_generated_file_and_reject_forced_ones(
    knowledge: LaunchKnowledge,
    multi_node_offers: list[Offer],
    offer_by_id: dict[str, Offer],
    tmp_path: Path,
) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    written: list[str] = []
    for offer in multi_node_offers:
        for fmt in (LaunchFormat.SKYPILOT, LaunchFormat.DSTACK):
            try:
                files = launch_files(knowledge, LaunchRequest(offer, 2), fmt)
            except UnsupportedError:
                continue
            for f in files:
                (folder / f.filename).write_text(f.content)
                written.append(f.filename)
    assert sum(n.endswith(".sky.yaml") for n in written) >= 20
    assert sum(n.endswith(".dstack.yml") for n in written) >= 40
    # Forced: SkyPilot multi-node on RunPod, a dstack cluster on Lambda, an unknown infra.
    runpod = knowledge.skypilot_target("runpod")
    assert runpod is not None
    forced_sky = replace(knowledge, skypilot=(replace(runpod, multi_node=True),))
    bad_sky = skypilot_task(
        forced_sky, LaunchRequest(offer_by_id["runpod-h100-instant-cluster"], 2)
    )
    (folder / "forced-runpod.sky.yaml").write_text(bad_sky.content)
    lam = knowledge.dstack_target("lambda")
    assert lam is not None
    forced_dstack = replace(knowledge, dstack=(replace(lam, multi_node=True),))
    fleet, _task = dstack_files(forced_dstack, LaunchRequest(offer_by_id["lambda-h100-1cc"], 2))
    (folder / "forced-lambda.fleet.dstack.yml").write_text(fleet.content)
    (folder / "unknown-infra.sky.yaml").write_text(
        bad_sky.content.replace("infra: runpod", "infra: coreweave")
    )
    (folder / "unknown-key.task.dstack.yml").write_text(_task.content + "bogus: 1\n")
    results = run_checker(folder)
    for name in written:
        assert results.get(name) == "ok", (name, results.get(name))
    assert "Multi-node" in results["forced-runpod.sky.yaml"]
    assert "multi-node support" in results["forced-lambda.fleet.dstack.yml"]
    assert "coreweave" in results["unknown-infra.sky.yaml"]
    assert "bogus" in results["unknown-key.task.dstack.yml"]
