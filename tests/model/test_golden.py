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
from clusterscout.model.estimate import estimate
from clusterscout.model.scenario import parse_scenario, resolve_gpu
from tests.conftest import REAL_DATA_DIR

GOLDEN_DIR = Path(__file__).parent / "golden"

SCENARIOS: dict[str, dict[str, Any]] = {
    "design-all-reduce-4-nodes": {
        "cluster": {
            "gpu": "H100-SXM-80GB",
            "gpus_per_node": 8,
            "nodes": 4,
            "fabric": "infiniband",
            "per_node_gbps": 3200,
            "gpudirect_rdma": True,
        },
        "workload": {"kind": "collective", "op": "all_reduce", "message_bytes": 4294967296},
    },
    "design-70b-64-nodes": {
        "cluster": {
            "gpu": "H100-SXM-80GB",
            "gpus_per_node": 8,
            "nodes": 64,
            "fabric": "infiniband",
            "per_node_gbps": 3200,
        },
        "workload": {
            "kind": "training",
            "model": {
                "layers": 80,
                "hidden": 8192,
                "heads": 64,
                "vocab": 128256,
                "ffn_hidden": 28672,
                "params": 70.6e9,
            },
            "seq_len": 8192,
            "global_batch": 1024,
            "micro_batch": 1,
            "precision": "bf16",
            "parallelism": {"tp": 4, "pp": 4, "cp": 1, "vp": 1, "sharding": "none"},
            "recompute": "none",
        },
    },
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
    gpu = resolve_gpu(scenario.cluster.gpu, gpus)
    result = estimate(scenario, gpu, load_calibration(REAL_DATA_DIR)).to_dict()
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
