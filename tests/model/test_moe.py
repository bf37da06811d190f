"""Mixture-of-experts: shapes and presets, memory with ep, the all-to-all, steps and the planner."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clusterscout.domain.errors import InputError
from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.checkmodel import UnexpressibleError, dense_layers_of, express
from clusterscout.model.collectives import all_to_all_split, all_to_all_time_s
from clusterscout.model.compute import model_flops_per_token
from clusterscout.model.inputs import (
    ClusterSpec,
    Parallelism,
    Precision,
    Recompute,
    Routing,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.memory import memory_per_gpu, moe_layer_extra_factor
from clusterscout.model.planner.layouts import ep_choices
from clusterscout.model.planner.plan import plan
from clusterscout.model.planner.request import PlanRequest
from clusterscout.model.planner.results import PlanOffer
from clusterscout.model.presets import PRESETS, shape_params
from clusterscout.model.scenario import parse_scenario
from clusterscout.model.training import permute_s, routing_load, train_step
from clusterscout.web.schemas import plan_json
from tests.model.conftest import GPUS, H100

IB, ETH = FabricKind.INFINIBAND, FabricKind.ETHERNET

# Published totals and active parameters (model cards / papers cited in presets.py).
PUBLISHED = {
    "mixtral-8x7b": (46.7e9, 12.9e9),
    "mixtral-8x22b": (141e9, 39e9),
    "deepseek-v3": (671e9, 37e9),
    "qwen3-235b-a22b": (235e9, 22e9),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_preset_shapes_match_the_published_totals(name: str) -> None:
    total, active = PUBLISHED[name]
    shape = PRESETS[name].shape
    # the shape's own parameter count lands within a few % of the published total
    assert shape_params(shape) == pytest.approx(total, rel=0.03)
    # and the active count implied by the experts within a few % of the published one
    assert shape.active_params == pytest.approx(active, rel=0.04)
    assert shape.active_params < 0.35 * shape.params


def test_compute_uses_active_parameters_and_memory_all_of_them() -> None:
    moe = PRESETS["mixtral-8x7b"].shape
    dense = replace(moe, experts=0, top_k=0, params=moe.active_params)
    # 6 * active per token: a dense model of the active size costs the same FLOPs
    assert model_flops_per_token(moe, 4096) == pytest.approx(model_flops_per_token(dense, 4096))
    assert dense.active_params == dense.params


def _workload(name: str, ep: int, pp: int = 1, tp: int = 1, dp: int = 8) -> TrainingWorkload:
    preset = PRESETS[name]
    return TrainingWorkload(
        model=preset.shape,
        seq_len=4096,
        global_batch=dp * 8,
        micro_batch=1,
        precision=Precision.BF16,
        parallelism=Parallelism(tp=tp, pp=pp, dp=dp, ep=ep, sharding=Sharding.ZERO1),
        recompute=Recompute.FULL,
    )


def test_expert_parallelism_splits_expert_state(cal: Calibration) -> None:
    one = memory_per_gpu(_workload("mixtral-8x7b", ep=1), H100, cal)
    eight = memory_per_gpu(_workload("mixtral-8x7b", ep=8), H100, cal)
    experts = PRESETS["mixtral-8x7b"].shape.routed_expert_params
    # weights: ep = 8 keeps 1/8 of the experts' BF16 weights per GPU
    saved_gib = (one.weights_gib - eight.weights_gib) * 2**30
    assert saved_gib == pytest.approx(2.0 * experts * 7 / 8, rel=1e-6)
    # the distributed optimizer: expert state shards over tp*dp/ep ranks instead of dp, so
    # its per-GPU share is unchanged
    assert eight.optimizer_gib == pytest.approx(one.optimizer_gib)
    assert not one.fits and eight.total_gib < one.total_gib / 2


def test_all_to_all_split_sends_the_off_node_share_over_the_fabric() -> None:
    inside = all_to_all_split(1000.0, ranks_per_node=8, nodes=1)
    assert inside.inter_bytes == 0 and inside.intra_bytes == pytest.approx(1000 * 7 / 8)
    spread = all_to_all_split(1000.0, ranks_per_node=8, nodes=8)
    # 1 - 8/64 of the bytes leave the node, 7/64 stay on NVLink, 1/64 stay on the GPU
    assert spread.inter_bytes == pytest.approx(1000 * 56 / 64)
    assert spread.intra_bytes == pytest.approx(1000 * 7 / 64)


def test_all_to_all_is_slower_off_node_and_on_ethernet(cal: Calibration) -> None:
    ib = ClusterSpec(H100, 8, 8, IB, 3200)
    eth = replace(ib, fabric=ETH)
    size = 256e6
    in_node = all_to_all_time_s(ib, size, 8, 1, cal)
    assert all_to_all_time_s(ib, size, 8, 8, cal) > 3 * in_node
    assert all_to_all_time_s(eth, size, 8, 8, cal) > 3 * all_to_all_time_s(ib, size, 8, 8, cal)
    # an EP group inside one node never touches the fabric
    assert all_to_all_time_s(eth, size, 8, 1, cal) == pytest.approx(in_node)


def test_step_all_to_all_grows_on_ethernet_with_the_same_layout(cal: Calibration) -> None:
    # DeepSeek-V3 as its report trained it: EP 64 over 8 nodes of a 16-stage pipeline
    w = replace(_workload("deepseek-v3", ep=64, pp=16, dp=128), global_batch=1024)
    ib = ClusterSpec(H100, 8, 256, IB, 3200)
    on_ib = train_step(w, ib, cal).breakdown
    on_eth = train_step(w, replace(ib, fabric=ETH), cal).breakdown
    assert on_ib.all_to_all_s > 0
    assert on_eth.all_to_all_s > 3 * on_ib.all_to_all_s
    assert on_eth.total_s > on_ib.total_s
    dense = train_step(
        _workload("70B", ep=1, pp=8, tp=4, dp=8), ClusterSpec(H100, 8, 32, IB, 3200), cal
    )
    assert dense.breakdown.all_to_all_s == 0


def _offer(oid: str, fabric: FabricKind, gpn: int = 8) -> PlanOffer:
    return PlanOffer(oid, "prov", "H100-SXM-80GB", gpn, fabric, 3200, True, 128, 2.5, "on_demand")


def test_plan_of_deepseek_v3_searches_ep_and_shows_the_all_to_all(cal: Calibration) -> None:
    request = PlanRequest(preset="deepseek-v3", tokens=1e12, max_nodes=128)
    result = plan(request, [_offer("ib", IB)], GPUS, cal)
    assert result.options
    out = plan_json(result)
    layouts = [o["layout"] for o in out["options"]]
    assert all(lay["ep"] > 1 for lay in layouts)
    assert all(lay["ep"] <= lay["tp"] * lay["dp"] for lay in layouts)
    assert all(o["breakdown_s"]["all_to_all"] > 0 for o in out["options"])
    # MoE plans carry the MoE held-out band, not the dense one
    assert result.error_band_pct == pytest.approx(cal.moe.figures["holdout"].p90_abs_error_pct)


def test_plan_on_ethernet_keeps_the_all_to_all_inside_nodes(cal: Calibration) -> None:
    request = PlanRequest(preset="deepseek-v3", tokens=1e12, max_nodes=128)
    ib = plan(request, [_offer("ib", IB)], GPUS, cal).options
    eth = plan(request, [_offer("eth", ETH)], GPUS, cal).options
    # the search tries EP groups across nodes (how far the all-to-all hides decides whether
    # InfiniBand wins with them); on Ethernet sockets it keeps them inside a node, slower
    assert eth and all(o.layout.ep <= 8 for o in eth)
    by_nodes = {o.nodes: o for o in ib}
    pairs = [(by_nodes[o.nodes], o) for o in eth if o.nodes in by_nodes]
    assert pairs and all(e.time_hours > i.time_hours for i, e in pairs)


def _scenario(
    model: dict[str, object], par: dict[str, object], **extra: object
) -> dict[str, object]:
    return {
        "cluster": {
            "gpu": "H100",
            "gpus_per_node": 8,
            "nodes": 2,
            "fabric": "infiniband",
            "per_node_gbps": 3200,
        },
        "workload": {
            "kind": "training",
            "model": model,
            "seq_len": 4096,
            "global_batch": 64,
            "parallelism": par,
            **extra,
        },
    }


MIXTRAL = {
    "params": 46.7e9,
    "layers": 32,
    "hidden": 4096,
    "heads": 32,
    "kv_heads": 8,
    "vocab": 32000,
    "ffn_hidden": 14336,
    "experts": 8,
    "top_k": 2,
}


def test_scenario_reads_moe_fields() -> None:
    s = parse_scenario(_scenario({**MIXTRAL, "dense_layers": 2}, {"ep": 8}))
    w = s.workload
    assert isinstance(w, TrainingWorkload)
    assert w.model.experts == 8 and w.model.top_k == 2 and w.model.expert_width == 14336
    assert w.model.moe_layers == 30 and w.parallelism.ep == 8


@pytest.mark.parametrize(
    ("model", "par", "field"),
    [
        ({**MIXTRAL, "top_k": 9}, {}, "workload.model.top_k"),
        ({**MIXTRAL, "top_k": None}, {}, "workload.model.top_k"),
        ({**MIXTRAL, "dense_layers": 32}, {}, "workload.model.dense_layers"),
        ({"params": 7e9, "top_k": 2}, {}, "workload.model.top_k"),
        (MIXTRAL, {"ep": 3}, "workload.parallelism.ep"),
        (MIXTRAL, {"ep": 8, "tp": 2, "pp": 4}, "workload.parallelism.ep"),
        ({"params": 7e9}, {"ep": 2}, "workload.parallelism.ep"),
    ],
)
def test_scenario_rejects_bad_moe_fields(
    model: dict[str, object], par: dict[str, object], field: str
) -> None:
    with pytest.raises(InputError) as err:
        parse_scenario(_scenario(model, par))
    assert err.value.field == field


def test_dense_edges_of_the_moe_helpers(cal: Calibration) -> None:
    dense = PRESETS["70B"].shape
    assert moe_layer_extra_factor(dense) == 1.0
    assert ep_choices(dense.experts, 64) == (1,)
    assert ep_choices(8, 12) == (1, 2, 4)
    # a dense shape's own count is the Llama 3.1 70B total within a few %
    assert shape_params(dense) == pytest.approx(dense.params, rel=0.03)
    ib = ClusterSpec(H100, 8, 2, IB, 3200)
    assert all_to_all_time_s(ib, 1e6, 1, 1, cal) == 0.0
    assert all_to_all_time_s(ib, 0.0, 8, 2, cal) == 0.0


def test_measurement_moe_fields_are_read_or_refused() -> None:
    assert dense_layers_of(None, 61) == 0
    assert dense_layers_of(2, 48) == 24
    assert dense_layers_of("([0]*1+[1]*60)", 61) == 1
    with pytest.raises(UnexpressibleError, match="moe_layer_freq"):
        dense_layers_of("[1,0,1]", 3)
    point = {
        "id": "x",
        "gpu": "H100-SXM-80GB",
        "gpus_per_node": 8,
        "nodes": 1,
        "workload": {
            "type": "training",
            "model": {"params": 47e9, "layers": 32, "active_params": 13e9},
            "seq_len": 4096,
            "global_batch": 8,
            "parallelism": {"tp": 1},
        },
        "metric": "tokens_per_s_per_gpu",
        "value": 1000,
    }
    with pytest.raises(UnexpressibleError, match="expert count"):
        express(point, GPUS)


def test_routing_sets_the_busiest_experts_load(rcal: Calibration) -> None:
    moe = replace(rcal.moe, dropless_imbalance=1.3, permute_bytes=16.0)
    cal = replace(rcal, moe=moe)
    w = _workload("mixtral-8x7b", ep=8)
    assert routing_load(w, cal) == pytest.approx(1.3)
    assert routing_load(replace(w, routing=Routing.BALANCED), cal) == 1.0
    capped = replace(w, routing=Routing.CAPACITY, capacity_factor=1.1)
    assert routing_load(capped, cal) == pytest.approx(1.1)
    loose = replace(w, routing=Routing.CAPACITY, capacity_factor=2.0)
    assert routing_load(loose, cal) == pytest.approx(1.3)  # a loose cap drops nothing
    dense = TrainingWorkload(
        PRESETS["70B"].shape, 4096, 64, 1, Precision.BF16, Parallelism(dp=8), Recompute.NONE
    )
    assert routing_load(dense, cal) == 1.0


def test_imbalance_and_permutation_slow_the_step_only_where_they_apply(rcal: Calibration) -> None:
    w = _workload("mixtral-8x7b", ep=8)
    c = ClusterSpec(replace(H100, hbm_tbps=3.35), 8, 2, IB, 3200, True)
    base = replace(rcal, moe=replace(rcal.moe, dropless_imbalance=1.0, permute_bytes=0.0))
    skewed = replace(rcal, moe=replace(rcal.moe, dropless_imbalance=1.5, permute_bytes=0.0))
    t0 = train_step(w, c, base).step_time_s
    assert train_step(w, c, skewed).step_time_s > t0
    assert train_step(replace(w, routing=Routing.BALANCED), c, skewed).step_time_s == t0
    copies = replace(rcal, moe=replace(rcal.moe, dropless_imbalance=1.0, permute_bytes=16.0))
    model = w.model
    tokens = w.global_batch * w.seq_len / 8
    expected = model.moe_layers * tokens * model.top_k * model.hidden * 16.0 / 3.35e12
    assert permute_s(w, c, copies) == pytest.approx(expected)
    assert train_step(w, c, copies).step_time_s == pytest.approx(t0 + expected)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"routing": "sometimes"}, "workload.routing"),
        ({"capacity_factor": 1.25}, "workload.capacity_factor"),
        ({"routing": "capacity", "capacity_factor": 0}, "workload.capacity_factor"),
    ],
)
def test_scenario_routing_is_checked(extra: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as err:
        parse_scenario(_scenario(MIXTRAL, {"ep": 8}, **extra))
    assert err.value.field == field


def test_scenario_routing_only_for_moe_models() -> None:
    with pytest.raises(InputError) as err:
        parse_scenario(_scenario({"params": 7e9}, {}, routing="balanced"))
    assert err.value.field == "workload.routing"
    s = parse_scenario(_scenario(MIXTRAL, {"ep": 8}, routing="capacity", capacity_factor=1.25))
    assert isinstance(s.workload, TrainingWorkload)
    assert s.workload.routing is Routing.CAPACITY and s.workload.capacity_factor == 1.25
