"""Published points the model must reproduce within a tolerance (paper-anchored tests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Reference:
    """A published number: the scenario, the output it is compared with, and where it is from."""

    id: str
    scenario: dict[str, Any]
    output: str
    value: float
    tolerance: float
    url: str


def _coll(
    gpu: str,
    nodes: int,
    fabric: str | None,
    gbps: float | None,
    size: float,
    op: str = "all_reduce",
) -> dict[str, Any]:
    cluster: dict[str, Any] = {"gpu": gpu, "gpus_per_node": 8, "nodes": nodes}
    if fabric:
        cluster |= {"fabric": fabric, "per_node_gbps": gbps}
    return {"cluster": cluster, "workload": {"kind": "collective", "op": op, "message_bytes": size}}


# Llama 3.1 70B (https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json)
_LLAMA70 = {
    "params": 70.6e9,
    "layers": 80,
    "hidden": 8192,
    "heads": 64,
    "kv_heads": 8,
    "vocab": 128256,
    "ffn_hidden": 28672,
}

REFERENCES: tuple[Reference, ...] = (
    Reference(
        "dgx-h100-4node-busbw",
        _coll("H100", 4, "infiniband", 3200, 8 * 2**30),
        "busbw_gbs",
        380,
        0.10,
        "https://github.com/stas00/ml-engineering/tree/744d01e/network/benchmarks",
    ),
    Reference(
        "dgx-a100-1node-busbw",
        _coll("A100", 1, None, None, 16 * 2**30),
        "busbw_gbs",
        234.89,
        0.10,
        "https://github.com/stas00/ml-engineering/tree/744d01e/network/benchmarks",
    ),
    Reference(
        "p6-b200-4node-4GiB",
        _coll("B200", 4, "efa", 3200, 4 * 2**30),
        "busbw_gbs",
        377.34,
        0.10,
        "https://github.com/stas00/ml-engineering/tree/744d01e/network/benchmarks",
    ),
    Reference(
        "gcp-a4-2node-tree",
        _coll("B200", 2, "roce", 3200, 8 * 2**30),
        "busbw_gbs",
        683.52,
        0.10,
        "https://github.com/GoogleCloudPlatform/cluster-toolkit",
    ),
    Reference(
        "dgxc-llama31-70b-64gpu",
        {
            "cluster": {
                "gpu": "H100",
                "gpus_per_node": 8,
                "nodes": 8,
                "fabric": "infiniband",
                "per_node_gbps": 3200,
            },
            "workload": {
                "kind": "training",
                "model": _LLAMA70,
                "seq_len": 8192,
                "global_batch": 128,
                "micro_batch": 1,
                "parallelism": {"tp": 4, "pp": 4, "cp": 2, "vp": 5},
            },
        },
        "step_time_s",
        14.72,
        0.15,
        "https://github.com/NVIDIA/dgxc-benchmarking (Llama 3.1 70B, NeMo 24.09)",
    ),
    Reference(
        "megatron-175b-384gpu",
        {
            "cluster": {
                "gpu": "A100",
                "gpus_per_node": 8,
                "nodes": 48,
                "fabric": "infiniband",
                "per_node_gbps": 1600,
            },
            "workload": {
                "kind": "training",
                "model": {
                    "params": 174.6e9,
                    "layers": 96,
                    "hidden": 12288,
                    "heads": 96,
                    "vocab": 51200,
                    "tied_embeddings": True,
                },
                "seq_len": 2048,
                "global_batch": 1536,
                "parallelism": {"tp": 8, "pp": 12},
                "recompute": "full",
                # 2021: Megatron-LM wrote the attention scores to memory (no FlashAttention)
                "attention": "unfused",
            },
        },
        "model_tflops_per_gpu",
        153 * 3 / 4,
        0.15,
        "https://arxiv.org/abs/2104.04473 (153 TFLOP/s incl. recompute = 114.75 model)",
    ),
)
