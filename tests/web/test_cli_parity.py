"""``clusterscout plan`` takes every field of ``POST /api/v1/plan`` and answers the same JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from web_support import TestClient

from clusterscout import Catalog
from clusterscout.app.fields import PLAN_FIELD_NAMES
from clusterscout.cli import app
from clusterscout.settings import Settings

runner = CliRunner()


BODY: dict[str, Any] = {
    "model": "70B",
    "tokens": 1e11,
    "precision": "bf16",
    "gpu": "H100",
    "max_nodes": 32,
    "budget_usd": 1e8,
    "deadline_hours": 1e5,
    "seq_len": 4096,
    "batch_tokens": 2**22,
    "fabric": ["infiniband", "ethernet"],
    "rdma": True,
    "min_gbps": 400,
    "provisioning": ["on_demand", "reserved"],
    "orchestration": ["slurm"],
    "region": "us",
    "provider": ["alpha", "beta"],
    "price_tier": "on_demand",
    "allow_spot": True,
    "failures_per_million_gpu_hours": 40,
    "checkpoint_minutes": 30,
}


def _flags(body: dict[str, Any]) -> list[str]:
    args: list[str] = []
    for name, value in body.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)  # a bare boolean flag means true
            continue
        if value is False:
            args += [flag, "false"]
            continue
        for v in value if isinstance(value, list) else [value]:
            args += [flag, str(v)]
    return args


CUSTOM: dict[str, Any] = {
    "params": 7e9,
    "steps": 1000,
    "rdma": False,
    "region": "eu",
    "stack": "pytorch",
    "include_unknown": ["region"],
    "job": "lora",
    "lora_rank": 8,
    "restart_minutes": 0,
    "deadline_days": 30,
}
"""The other way to name a job: a parameter count and optimizer steps (a LoRA fine-tune)."""
SERVING: dict[str, Any] = {
    "model": "70B",
    "job": "inference",
    "precision": "fp8",
    "context": 8192,
    "concurrency": 16,
    "target_tokens_per_s": 5000,
}
"""An inference sizing: the serving fields."""


def test_the_bodies_use_every_plan_field() -> None:
    assert set(BODY) | set(CUSTOM) | set(SERVING) == set(PLAN_FIELD_NAMES)


@pytest.mark.parametrize(
    "body", [BODY, CUSTOM, SERVING], ids=["preset", "custom-lora", "inference"]
)
def test_plan_with_every_field_answers_as_the_api(
    client: TestClient, fixture_settings: Settings, body: dict[str, Any]
) -> None:
    db = ["--database-url", fixture_settings.resolved_database_url()]
    cli = runner.invoke(app, ["plan", *_flags(body), "--format", "json", *db])
    assert cli.exit_code == 0, cli.stderr
    api = client.post("/api/v1/plan", json=body)
    assert api.status_code == 200, api.text
    assert json.loads(cli.stdout) == api.json()
    answer = api.json()
    if body is SERVING:
        # a serving answer: its sizing per GPU model, no training options
        assert answer["job"] == "inference" and answer["options"] == []
        assert answer["serving"]["per_gpu"] and answer["serving"]["concurrency"] == 16
    else:
        assert answer["options"] or body is CUSTOM  # the preset body leaves an option
        assert answer["job"] == body.get("job", "pretrain")


def test_python_api_to_dict_is_the_api_json(client: TestClient, fixture_data_dir: Path) -> None:
    cat = Catalog.from_data(fixture_data_dir)
    assert cat.plan(**BODY).to_dict() == client.post("/api/v1/plan", json=BODY).json()
    scenario = {
        "cluster": {
            "gpu": "H100",
            "gpus_per_node": 8,
            "nodes": 4,
            "fabric": "infiniband",
            "per_node_gbps": 3200,
        },
        "workload": {
            "kind": "training",
            "model": {"params": 8e9},
            "seq_len": 4096,
            "global_batch": 64,
            "parallelism": {"sharding": "fsdp"},
        },
    }
    api = client.post("/api/v1/estimate", json=scenario)
    assert api.status_code == 200, api.text
    assert cat.estimate(scenario).to_dict() == api.json()
