"""Scenario validation names the field at fault; GPU names resolve through aliases."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from clusterscout.domain.errors import InputError
from clusterscout.domain.models import FabricKind
from clusterscout.model.inputs import (
    BatchWorkload,
    CollectiveWorkload,
    HpcWorkload,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.scenario import parse_scenario
from tests.model.examples import DESIGN_COLLECTIVE, DESIGN_TRAINING

COLLECTIVE = DESIGN_COLLECTIVE
TRAINING = DESIGN_TRAINING


def test_design_examples_parse() -> None:
    c = parse_scenario(COLLECTIVE)
    assert c.kind == "collective"
    assert isinstance(c.workload, CollectiveWorkload)
    assert c.cluster.fabric is FabricKind.INFINIBAND
    assert c.cluster.gpus == 32
    t = parse_scenario(TRAINING)
    assert t.kind == "training"
    assert isinstance(t.workload, TrainingWorkload)
    assert t.workload.parallelism.dp == 32
    assert t.workload.parallelism.sharding is Sharding.NONE


def test_params_only_model_gets_defaults() -> None:
    s = copy.deepcopy(TRAINING)
    s["workload"]["model"] = {"params": 7e9}
    s["workload"]["parallelism"] = {"tp": 8}
    w = parse_scenario(s).workload
    assert isinstance(w, TrainingWorkload)
    assert w.model.hidden == 4224
    assert w.model.heads == 33
    assert w.model.ffn_hidden == 4 * 4224


def test_batch_and_hpc_kinds() -> None:
    b = parse_scenario(
        {
            "cluster": {"gpu": "H100", "nodes": 2, "fabric": "ethernet", "per_node_gbps": 100},
            "workload": {"kind": "batch", "gpu_hours": 100, "startup_s": 60},
        }
    )
    assert b.kind == "batch"
    assert isinstance(b.workload, BatchWorkload)
    h = parse_scenario(
        {
            "cluster": {"gpu": "H100", "nodes": 1},
            "workload": {
                "kind": "hpc",
                "step_time_one_node_s": 1.0,
                "comm_share": 0.3,
                "message_bytes": 1e6,
            },
        }
    )
    assert h.kind == "hpc"
    assert isinstance(h.workload, HpcWorkload)


def _set(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    s = copy.deepcopy(base)
    keys = path.split(".")
    node = s
    for k in keys[:-1]:
        node = node[k]
    if value is _DELETE:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return s


_DELETE = object()


@pytest.mark.parametrize(
    ("base", "path", "value", "field"),
    [
        (COLLECTIVE, "cluster.nodes", 0, "cluster.nodes"),
        (COLLECTIVE, "cluster.nodes", "4", "cluster.nodes"),
        (COLLECTIVE, "cluster.nodes", True, "cluster.nodes"),
        (COLLECTIVE, "cluster.gpus_per_node", 1000, "cluster.gpus_per_node"),
        (COLLECTIVE, "cluster.gpu", "", "cluster.gpu"),
        (COLLECTIVE, "cluster.gpu", _DELETE, "cluster.gpu"),
        (COLLECTIVE, "cluster.fabric", "carrier-pigeon", "cluster.fabric"),
        (COLLECTIVE, "cluster.fabric", 7, "cluster.fabric"),
        (COLLECTIVE, "cluster.fabric", None, "cluster.fabric"),
        (COLLECTIVE, "cluster.per_node_gbps", None, "cluster.per_node_gbps"),
        (COLLECTIVE, "cluster.per_node_gbps", -1, "cluster.per_node_gbps"),
        (COLLECTIVE, "cluster.per_node_gbps", float("nan"), "cluster.per_node_gbps"),
        (COLLECTIVE, "cluster.per_node_gbps", "fast", "cluster.per_node_gbps"),
        (COLLECTIVE, "cluster.gpudirect_rdma", "yes", "cluster.gpudirect_rdma"),
        (COLLECTIVE, "cluster.colour", "red", "cluster.colour"),
        (COLLECTIVE, "workload.op", "broadcast", "workload.op"),
        (COLLECTIVE, "workload.op", _DELETE, "workload.op"),
        (COLLECTIVE, "workload.message_bytes", 0, "workload.message_bytes"),
        (COLLECTIVE, "workload.message_bytes", 1e20, "workload.message_bytes"),
        (COLLECTIVE, "workload.kind", "inference", "workload.kind"),
        (COLLECTIVE, "workload.extra", 1, "workload.extra"),
        (COLLECTIVE, "cluster", [], "cluster"),
        (COLLECTIVE, "workload", _DELETE, "workload"),
        (TRAINING, "workload.parallelism.tp", 3, "workload.parallelism"),
        (TRAINING, "workload.parallelism.tp", 0, "workload.parallelism.tp"),
        (TRAINING, "workload.parallelism.dp", 7, "workload.parallelism.dp"),
        (TRAINING, "workload.parallelism.pp", 100, "workload.parallelism.pp"),
        (TRAINING, "workload.parallelism.vp", 30, "workload.parallelism.vp"),
        (TRAINING, "workload.parallelism.sharding", "zero9", "workload.parallelism.sharding"),
        (TRAINING, "workload.parallelism.ep", 2, "workload.parallelism.ep"),
        (TRAINING, "workload.model.params", _DELETE, "workload.model.params"),
        (TRAINING, "workload.model.params", -5, "workload.model.params"),
        (TRAINING, "workload.model.kv_heads", 7, "workload.model.kv_heads"),
        (TRAINING, "workload.model.moe", 8, "workload.model.moe"),
        (TRAINING, "workload.model", 5, "workload.model"),
        (TRAINING, "workload.seq_len", _DELETE, "workload.seq_len"),
        (TRAINING, "workload.global_batch", 1000, "workload.global_batch"),
        (TRAINING, "workload.precision", "fp4", "workload.precision"),
        (TRAINING, "workload.recompute", "some", "workload.recompute"),
        (TRAINING, "workload.parallelism.cp", 3, "workload.parallelism"),
        # Hostile sizes: bounded, so no formula overflows to inf/NaN or divides by zero.
        (TRAINING, "workload.model.layers", 1e308, "workload.model.layers"),
        (TRAINING, "workload.model.hidden", 10**7, "workload.model.hidden"),
        (TRAINING, "workload.model.heads", 10**6, "workload.model.heads"),
        (TRAINING, "workload.model.vocab", 10**9, "workload.model.vocab"),
        (TRAINING, "workload.model.ffn_hidden", 10**8, "workload.model.ffn_hidden"),
        (TRAINING, "workload.model.params", 5e-324, "workload.model.params"),
        (COLLECTIVE, "workload.message_bytes", 0.5, "workload.message_bytes"),
        (COLLECTIVE, "cluster.per_node_gbps", 1e-9, "cluster.per_node_gbps"),
    ],
)
def test_errors_name_the_field(base: dict[str, Any], path: str, value: Any, field: str) -> None:
    with pytest.raises(InputError) as info:
        parse_scenario(_set(base, path, value))
    assert info.value.field == field
    assert info.value.message
    assert str(info.value).startswith(field)


def test_more_field_errors() -> None:
    one_gpu = _set(COLLECTIVE, "cluster.gpus_per_node", 1)
    one_gpu["cluster"]["nodes"] = 1
    with pytest.raises(InputError, match="at least 2 GPUs"):
        parse_scenario(one_gpu)
    vp_no_pp = _set(TRAINING, "workload.parallelism.vp", 2)
    vp_no_pp["workload"]["parallelism"]["pp"] = 1
    with pytest.raises(InputError) as info:
        parse_scenario(vp_no_pp)
    assert info.value.field == "workload.parallelism.vp"
    cp_seq = _set(TRAINING, "workload.parallelism.cp", 2)
    cp_seq["workload"]["seq_len"] = 8191
    with pytest.raises(InputError) as info:
        parse_scenario(cp_seq)
    assert info.value.field == "workload.seq_len"
    with pytest.raises(InputError) as info:
        parse_scenario(
            {
                "cluster": {"gpu": "H100", "gpus_per_node": 1, "nodes": 1},
                "workload": {"kind": "hpc", "step_time_one_node_s": 1, "message_bytes": 1},
            }
        )
    assert info.value.field == "cluster.gpus_per_node"
    with pytest.raises(InputError) as info:
        parse_scenario(
            {
                "cluster": {"gpu": "H100", "nodes": 1},
                "workload": {
                    "kind": "hpc",
                    "step_time_one_node_s": 1,
                    "comm_share": 1.0,
                    "message_bytes": 1,
                },
            }
        )
    assert info.value.field == "workload.comm_share"
    with pytest.raises(InputError) as info:
        parse_scenario(
            {
                "cluster": {"gpu": "H100", "nodes": 1},
                "workload": {"kind": "batch", "gpu_hours": 1, "startup_s": -1},
            }
        )
    assert info.value.field == "workload.startup_s"
    with pytest.raises(InputError) as info:
        parse_scenario(
            {"cluster": {"gpu": "H100", "nodes": 1}, "workload": {"kind": "x"}, "extra": 1}
        )
    assert info.value.field == "extra"
    with pytest.raises(InputError) as info:
        parse_scenario([])  # type: ignore[arg-type]
    assert info.value.field == "scenario"


def test_integral_floats_and_enum_spelling_are_accepted() -> None:
    s = _set(COLLECTIVE, "cluster.nodes", 4.0)
    s["workload"]["op"] = "All-Reduce"
    parsed = parse_scenario(s)
    assert parsed.cluster.nodes == 4


def test_depth_given_width_derived_and_required_numbers() -> None:
    s = copy.deepcopy(TRAINING)
    s["workload"]["model"] = {"params": 7e9, "layers": 32}
    s["workload"]["parallelism"] = {"tp": 8}
    w = parse_scenario(s).workload
    assert isinstance(w, TrainingWorkload)
    assert w.model.hidden == 4224
    with pytest.raises(InputError) as info:
        parse_scenario(
            {
                "cluster": {"gpu": "H100", "nodes": 1},
                "workload": {"kind": "hpc", "message_bytes": 1},
            }
        )
    assert info.value.field == "workload.step_time_one_node_s"


@pytest.mark.parametrize(
    ("workload", "field"),
    [
        ({"kind": "batch", "gpu_hours": 5e-324}, "workload.gpu_hours"),
        (
            {"kind": "batch", "gpu_hours": 1, "storage_gbs_per_node": 1e-300},
            "workload.storage_gbs_per_node",
        ),
        (
            {"kind": "hpc", "step_time_one_node_s": 5e-324, "message_bytes": 1e6},
            "workload.step_time_one_node_s",
        ),
    ],
)
def test_vanishing_positive_values_are_rejected(workload: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError, match="must be at least") as info:
        parse_scenario({"cluster": COLLECTIVE["cluster"], "workload": workload})
    assert info.value.field == field


def test_training_scenarios_take_a_fine_tuning_job() -> None:
    body = copy.deepcopy(DESIGN_TRAINING)
    body["workload"]["job"] = "qlora"
    body["workload"]["lora_rank"] = 64
    work = parse_scenario(body).workload
    assert (work.job.value, work.lora_rank) == ("qlora", 64)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"precision": "int4"}, "workload.precision"),
        ({"job": "inference"}, "workload.job"),
        ({"lora_rank": 8}, "workload.lora_rank"),
        ({"job": "lora", "lora_rank": 0}, "workload.lora_rank"),
    ],
)
def test_fine_tuning_fields_that_do_not_apply_name_the_field(
    extra: dict[str, Any], field: str
) -> None:
    body = copy.deepcopy(DESIGN_TRAINING)
    body["workload"].update(extra)
    with pytest.raises(InputError) as info:
        parse_scenario(body)
    assert info.value.field == field
