"""Step-time formulas on hand-computed cases."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.collectives import canonical_network, group_time_s
from clusterscout.model.compute import model_flops_per_token
from clusterscout.model.inputs import (
    Attention,
    ClusterSpec,
    CollectiveOp,
    ModelShape,
    Parallelism,
    Precision,
    Recompute,
    Sharding,
    Stack,
    TrainingWorkload,
)
from clusterscout.model.presets import PRESETS
from clusterscout.model.training import (
    CommTime,
    GroupPlacement,
    bubble_time_s,
    compute_time_s,
    cp_comm,
    dp_comm,
    last_stage_layers,
    place_group,
    pp_comm_time_s,
    reference_shape,
    stage_imbalance_s,
    straggler_time_s,
    tp_comm,
    train_step,
    unfused_attention_s,
    with_parallelism,
)
from tests.model.conftest import A100, H100

TINY = ModelShape(1e9, 2, 1000, 8, 8, 1000, 4000, tied_embeddings=True)


def wl(
    par: Parallelism,
    batch: int = 8,
    recompute: Recompute = Recompute.NONE,
    model: ModelShape = TINY,
) -> TrainingWorkload:
    return TrainingWorkload(model, 1000, batch, 1, Precision.BF16, par, recompute)


def cluster(nodes: int = 1, gpu=A100, fabric=FabricKind.INFINIBAND) -> ClusterSpec:
    return ClusterSpec(gpu, 8, nodes, fabric, 3200, True)


@pytest.mark.parametrize(
    ("size", "stride", "expected"),
    [(8, 1, (8, 1)), (2, 4, (2, 1)), (4, 8, (1, 4)), (16, 1, (8, 2))],
)
def test_place_group(size: int, stride: int, expected: tuple[int, int]) -> None:
    assert place_group(size, stride, 8) == GroupPlacement(*expected)


def test_bubble() -> None:
    assert bubble_time_s(10, 4, 1, 8) == pytest.approx(3.75)
    assert bubble_time_s(10, 4, 2, 8) == pytest.approx(1.875)
    assert bubble_time_s(10, 1, 1, 8) == 0


def test_compute_time_by_hand(rcal: Calibration) -> None:
    w = wl(Parallelism(dp=8))
    flops = 6e9 + 12 * 2 * 1000 * 1000
    # default curve: u_max 0.5, width penalty hidden_half/h = 1000/1000 -> u = 0.25
    expected = flops * 8 * 1000 / (8 * 312 * 0.25 * 1e12)
    assert compute_time_s(w, cluster(), rcal) == pytest.approx(expected)


def test_single_node_dp_is_fully_efficient(rcal: Calibration) -> None:
    res = train_step(wl(Parallelism(dp=8)), cluster(), rcal)
    assert res.scaling_efficiency == 1
    parts = res.breakdown.as_dict()
    assert sum(parts.values()) == pytest.approx(res.step_time_s)
    assert parts["tp_comm"] == parts["pp_comm"] == parts["cp_comm"] == parts["bubble"] == 0
    assert res.tokens_per_s_per_gpu == pytest.approx(8000 / (8 * res.step_time_s))
    assert res.mfu == pytest.approx(res.model_tflops_per_gpu / 312)


def test_tp_comm_by_hand(rcal: Calibration) -> None:
    w = wl(Parallelism(tp=4, dp=2), recompute=Recompute.FULL)
    per_op = group_time_s(cluster(), CollectiveOp.ALL_REDUCE, 1000 * 1000 * 2, 4, 1, rcal)
    expected = 2 * w.microbatches * 6 * per_op
    assert tp_comm(w, cluster(), rcal) == CommTime(pytest.approx(expected), 0.0)  # type: ignore[arg-type]
    # the stack sets how much TP traffic it hides (the workload runs on Megatron)
    stacks = dict(rcal.stacks)
    stacks[Stack.MEGATRON] = replace(stacks[Stack.MEGATRON], tp_overlap=0.25)
    hidden = replace(rcal, stacks=stacks)
    part = tp_comm(w, cluster(), hidden)
    assert part.hidden_s == pytest.approx(expected / 4)
    assert part.exposed_s == pytest.approx(expected * 3 / 4)


def test_cp_and_pp_comm_present_only_when_used(rcal: Calibration) -> None:
    base = wl(Parallelism(dp=8))
    assert cp_comm(base, cluster(), rcal) == CommTime(0.0, 0.0)
    assert pp_comm_time_s(base, cluster(), rcal) == 0
    cp = wl(Parallelism(cp=2, dp=4))
    cp_part = cp_comm(cp, cluster(), rcal)
    assert cp_part.hidden_s > 0
    assert cp_part.exposed_s == pytest.approx(cp_part.hidden_s)  # cp_overlap 0.5
    pp = wl(Parallelism(pp=2, dp=4))
    assert pp_comm_time_s(pp, cluster(), rcal) > 0
    pp_inter = wl(Parallelism(tp=8, pp=2, dp=1), batch=8)
    two = cluster(2)
    assert pp_comm_time_s(pp_inter, two, rcal) > pp_comm_time_s(pp_inter, cluster(1), rcal) * 0


def test_dp_comm_hides_behind_the_window_except_the_tail(rcal: Calibration) -> None:
    w = wl(Parallelism(dp=16), batch=16)
    c = cluster(2)
    long = dp_comm(w, c, 1e6, rcal)  # long compute hides all but the last bucket
    short = dp_comm(w, c, 0.0, rcal)  # nothing to hide behind
    assert short.hidden_s == 0 and short.exposed_s > 0
    total = short.exposed_s
    tail = group_time_s(c, CollectiveOp.ALL_REDUCE, 2e9 / 20, 8, 2, rcal)  # 20 buckets of 100 MB
    assert long.exposed_s == pytest.approx(tail)
    assert long.hidden_s == pytest.approx(total - tail)
    fsdp = with_parallelism(w, Parallelism(dp=16, sharding=Sharding.FSDP))
    assert dp_comm(fsdp, c, 0.0, rcal).exposed_s > 0
    assert dp_comm(wl(Parallelism(tp=8)), cluster(), 0.0, rcal) == CommTime(0.0, 0.0)


def test_dp_overlap_depends_on_stack_and_fabric(rcal: Calibration) -> None:
    w = wl(Parallelism(dp=16), batch=16, model=replace(TINY, params=2e10))
    ib = dp_comm(w, cluster(2), 0.05, rcal)
    eth = dp_comm(w, ClusterSpec(A100, 8, 2, FabricKind.ETHERNET, 3200, None), 0.05, rcal)
    assert eth.exposed_s > ib.exposed_s
    deepspeed = replace(w, stack=Stack.DEEPSPEED)  # dp_overlap 0.7 against megatron's 0.9
    assert dp_comm(deepspeed, cluster(2), 0.05, rcal).hidden_s == pytest.approx(
        ib.hidden_s * 0.7 / 0.9
    )


def test_straggler_grows_with_the_log_of_nodes(rcal: Calibration) -> None:
    sigma = replace(rcal, training=replace(rcal.training, straggler_sigma=0.01))
    assert straggler_time_s(10.0, 1, sigma) == 0
    assert straggler_time_s(10.0, 8, sigma) == pytest.approx(0.1 * math.log(8))
    assert straggler_time_s(10.0, 64, sigma) == pytest.approx(2 * straggler_time_s(10.0, 8, sigma))


def test_weak_scaling_step_time_grows(rcal: Calibration) -> None:
    sigma = replace(rcal, training=replace(rcal.training, straggler_sigma=0.01))
    steps = []
    for nodes in (96, 192, 288):
        w = wl(Parallelism(tp=8, dp=nodes), batch=nodes)
        steps.append(train_step(w, ClusterSpec(H100, 8, nodes, FabricKind.INFINIBAND, 3200), sigma))
    times = [s.step_time_s for s in steps]
    assert times[0] < times[1] < times[2]
    assert steps[2].scaling_efficiency < steps[0].scaling_efficiency < 1


def test_hidden_communication_slows_compute(rcal: Calibration) -> None:
    # the pytorch stack of the round calibration loses 0.2 s of compute per hidden second
    w = replace(wl(Parallelism(dp=16, sharding=Sharding.FSDP), batch=16), stack=Stack.PYTORCH)
    c = cluster(2)
    parts = train_step(w, c, rcal).breakdown
    dp = dp_comm(w, c, parts.compute_s, rcal)
    assert dp.hidden_s > 0
    assert parts.overlap_slowdown_s == pytest.approx(0.2 * dp.hidden_s)
    megatron = train_step(replace(w, stack=Stack.MEGATRON), c, rcal).breakdown
    assert megatron.overlap_slowdown_s == 0


def test_reference_shape(rcal: Calibration) -> None:
    w = wl(Parallelism(tp=8, dp=4), batch=8)
    ref_w, ref_c = reference_shape(w, cluster(4))
    assert ref_c.nodes == 1
    assert ref_w.parallelism.dp == 1
    assert ref_w.microbatches == w.microbatches
    whole = wl(Parallelism(tp=8, pp=2, dp=1), batch=8)
    assert reference_shape(whole, cluster(2)) == (whole, cluster(2))


def test_multi_node_efficiency_below_one(rcal: Calibration) -> None:
    w = wl(Parallelism(dp=32), batch=32, model=replace(TINY, params=5e10))
    res = train_step(w, ClusterSpec(H100, 8, 4, FabricKind.ETHERNET, 100, None), rcal)
    assert 0 < res.scaling_efficiency < 1


@pytest.mark.parametrize("preset", ["70B", "mixtral-8x7b"])
@pytest.mark.parametrize("nodes", [1, 4])
@pytest.mark.parametrize(
    "fabric", [FabricKind.INFINIBAND, FabricKind.EFA, FabricKind.ETHERNET, FabricKind.TCPXO]
)
@pytest.mark.parametrize("rdma", [True, False, None])
def test_the_canonical_network_gets_the_same_estimate(
    cal: Calibration, preset: str, nodes: int, fabric: FabricKind, rdma: bool | None
) -> None:
    # The planner shares one estimate between clusters with equal canonical networks.
    model = PRESETS[preset].shape
    dp = nodes * 8 // (4 * 2)
    ep = 4 if model.is_moe else 1
    par = Parallelism(tp=4, pp=2, dp=dp, vp=2, sharding=Sharding.ZERO1, ep=ep)
    w = TrainingWorkload(model, 4096, 8 * dp, 1, Precision.BF16, par, Recompute.FULL)
    cluster = ClusterSpec(H100, 8, nodes, fabric, 400, rdma)
    seen = canonical_network(cluster)
    assert train_step(w, seen, cal) == train_step(w, cluster, cal)
    if nodes == 1:
        assert (seen.fabric, seen.per_node_gbps, seen.gpudirect_rdma) == (None, None, None)


def test_output_layer_imbalance_is_at_most_about_one_layer_when_stages_are_balanced() -> None:
    # Llama-3 8B shape: a 128k vocabulary's output layer is about two layers of work
    model = ModelShape(8.03e9, 32, 4096, 32, 8, 128256, 14336)
    w = TrainingWorkload(
        model, 8192, 64, 1, Precision.BF16, Parallelism(pp=4, dp=2), Recompute.NONE
    )
    assert stage_imbalance_s(replace(w, parallelism=Parallelism(dp=8)), 10.0) == 0.0
    balanced = stage_imbalance_s(w, 10.0)
    # a layer-even split would leave the whole output layer on the last stage
    output = 6.0 * model.hidden * model.vocab
    even = 10.0 * 3 * output / model_flops_per_token(model, 8192)
    assert 0.0 < balanced < even
    # the busiest stage holds at most about one layer more than the mean stage
    per_layer = (model_flops_per_token(model, 8192) - output) / model.layers
    mean = (model.layers + output / per_layer) / 4
    assert balanced <= 10.0 * (1.0 / mean + 1e-9)


def test_unfused_attention_costs_memory_time_that_grows_with_the_square_of_the_sequence(
    rcal: Calibration,
) -> None:
    model = ModelShape(1e9, 2, 1000, 8, 8, 1000, 4000, tied_embeddings=True)
    cal = replace(rcal, training=replace(rcal.training, unfused_attention_bytes=40.0))
    c = ClusterSpec(replace(A100, hbm_tbps=2.0), 8, 1)

    def cost(seq: int, attention: Attention) -> float:
        w = TrainingWorkload(
            model, seq, 8, 1, Precision.BF16, Parallelism(dp=8), Recompute.NONE, attention=attention
        )
        return unfused_attention_s(w, c, cal)

    assert cost(1000, Attention.FLASH) == 0.0
    # per GPU: 2 layers x 1 sequence x 8 heads x s^2 scores x 40 bytes over 2 TB/s
    assert cost(1000, Attention.UNFUSED) == pytest.approx(2 * 8 * 1000**2 * 40 / 2e12)
    assert cost(2000, Attention.UNFUSED) == pytest.approx(4 * cost(1000, Attention.UNFUSED))


def test_without_pipeline_the_one_stage_holds_every_layer_and_the_output_layer() -> None:
    assert last_stage_layers(32, 1, 2.0) == 34.0
    # with stages, balancing gives the last stage fewer transformer layers, never more work
    assert last_stage_layers(32, 4, 2.0) < 32 / 4 + 2.0
