"""The two scenario examples of docs/design.md §4, shared by the model tests."""

from __future__ import annotations

from typing import Any

from clusterscout.model.estimate import EstimateResult
from clusterscout.web.schemas import estimate_json

DESIGN_COLLECTIVE: dict[str, Any] = {
    "cluster": {
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "nodes": 4,
        "fabric": "infiniband",
        "per_node_gbps": 3200,
        "gpudirect_rdma": True,
    },
    "workload": {"kind": "collective", "op": "all_reduce", "message_bytes": 4294967296},
}
DESIGN_TRAINING: dict[str, Any] = {
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
}


def output(answer: EstimateResult) -> dict[str, Any]:
    """The output keys of an estimate, as the API gives them (without ``kind`` and ``gpu``)."""
    return {k: v for k, v in estimate_json(answer).items() if k not in {"kind", "gpu"}}
