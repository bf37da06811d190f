"""Golden snapshots of a few full estimates: any change in model output is reviewed on purpose.

Regenerate after an intended model or calibration change with
``CLUSTERSCOUT_UPDATE_GOLDEN=1 pytest tests/model/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from clusterscout.catalog.calibration import load_calibration
from clusterscout.catalog.load import load_gpus
from clusterscout.domain.gpus import GpuIndex
from clusterscout.model.estimate import estimate
from clusterscout.model.scenario import parse_scenario
from tests.conftest import REAL_DATA_DIR
from tests.model.examples import DESIGN_COLLECTIVE, DESIGN_TRAINING, output

GOLDEN_DIR = Path(__file__).parent / "golden"

SCENARIOS: dict[str, dict[str, Any]] = {
    "design-all-reduce-4-nodes": DESIGN_COLLECTIVE,
    "design-70b-64-nodes": DESIGN_TRAINING,
    "8b-fsdp-4-nodes-roce": {
        "cluster": {
            "gpu": "H100",
            "gpus_per_node": 8,
            "nodes": 4,
            "fabric": "roce",
            "per_node_gbps": 3200,
            "gpudirect_rdma": True,
        },
        "workload": {
            "kind": "training",
            "model": {"params": 8e9},
            "seq_len": 8192,
            "global_batch": 128,
            "micro_batch": 1,
            "precision": "bf16",
            "parallelism": {"tp": 1, "pp": 1, "sharding": "fsdp"},
            "recompute": "selective",
        },
    },
}


def _run(name: str) -> dict[str, Any]:
    gpus = load_gpus(REAL_DATA_DIR)
    scenario = parse_scenario(SCENARIOS[name])
    gpu = GpuIndex.of(gpus).require(scenario.cluster.gpu, "cluster.gpu")
    result = output(estimate(scenario, gpu, load_calibration(REAL_DATA_DIR)))
    return json.loads(json.dumps(result))


def _close(actual: Any, expected: Any, path: str = "") -> None:
    if isinstance(expected, dict):
        assert set(actual) == set(expected), path
        for key in expected:
            _close(actual[key], expected[key], f"{path}.{key}")
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12), path
    else:
        assert actual == expected, path


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_estimate_matches_golden(name: str) -> None:
    path = GOLDEN_DIR / f"{name}.json"
    actual = _run(name)
    if os.environ.get("CLUSTERSCOUT_UPDATE_GOLDEN"):
        path.write_text(json.dumps(actual, indent=2, sort_keys=True) + "\n")
    _close(actual, json.loads(path.read_text()))
