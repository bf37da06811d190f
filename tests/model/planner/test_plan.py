"""The planner: verdicts, ranking, exclusions, errors and speed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from clusterscout.domain.errors import InputError
from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.inputs import ClusterSpec, JobKind, Precision, Stack
from clusterscout.model.memory import total_gib
from clusterscout.model.planner import layouts as layouts_module
from clusterscout.model.planner.layouts import (
    LayoutSearch,
    StepMemo,
    best_layout,
    fitting_workloads,
    node_counts,
    step_memo,
)
from clusterscout.model.planner.plan import plan
from clusterscout.model.planner.reasons import Assumption, ExclusionReason
from clusterscout.model.planner.request import PlanRequest, job_for
from clusterscout.model.planner.results import PlanOffer, PlanOption
from clusterscout.model.presets import PRESETS, find_preset
from clusterscout.model.training import compute_time_s, step_breakdown, train_step
from clusterscout.web.schemas import plan_json
from tests.model.conftest import GPUS

IB, ETH = FabricKind.INFINIBAND, FabricKind.ETHERNET


def offer(
    oid: str,
    gpu: str = "H100-SXM-80GB",
    fabric: FabricKind | None = IB,
    gbps: float | None = 3200,
    max_nodes: int | None = 64,
    price: float | None = 2.5,
) -> PlanOffer:
    return PlanOffer(oid, "prov", gpu, 8, fabric, gbps, True, max_nodes, price, "on_demand")


OFFERS = [
    offer("h100-ib"),
    offer("h100-eth", fabric=ETH, gbps=100, price=2.0),
    offer("h100-small", max_nodes=2),
    offer("h100-noprice", price=None),
    offer("h100-nofabric", fabric=None, gbps=None),
    offer("h100-nogbps", gbps=None),
    offer("b200-ib", gpu="B200", price=5.0),
    offer("v100", gpu="V100"),
    offer("l40s", gpu="L40S", fabric=ETH, gbps=100, price=1.0),
]


def test_7b_fits_one_node(cal: Calibration) -> None:
    result = plan(PlanRequest(preset="7B", tokens=2e11), OFFERS, GPUS, cal)
    out = plan_json(result)
    assert out["needs_multi_node"] is False
    assert out["min_gpus_to_fit"] is not None and out["min_gpus_to_fit"] <= 8
    h100 = next(v for v in result.per_gpu if v.gpu == "H100-SXM-80GB")
    assert h100.one_node_fits and h100.one_node_time_hours
    assert out["options"]
    assert {"offer", "nodes", "layout", "time_hours", "cost_usd", "scaling_efficiency"} <= set(
        out["options"][0]
    )
    reasons = {e["offer"]["offer_id"]: e["reason"] for e in out["excluded"]}
    # An offer without a price stays in the answer, priced on request, never among options.
    assert "h100-noprice" not in reasons
    assert {o["offer"]["id"] for o in out["on_request"]} == {"h100-noprice"}
    unpriced = out["on_request"][0]
    assert unpriced["price"] == "on request" and unpriced["gpu_hours"] > 0
    assert "h100-noprice" not in {o["offer"]["id"] for o in out["options"]}
    assert reasons["v100"] == "unknown GPU"
    assert "h100-nofabric" not in reasons  # one node needs no fabric


def test_405b_needs_multi_node_and_ranks_offers(cal: Calibration) -> None:
    result = plan(PlanRequest(preset="405B", tokens=1e12), OFFERS, GPUS, cal)
    out = plan_json(result)
    assert out["needs_multi_node"] is True
    assert out["min_gpus_to_fit"] > 8
    reasons = {e["offer"]["offer_id"]: e["reason"] for e in out["excluded"]}
    assert reasons["h100-small"] == "too small"
    assert reasons["h100-nofabric"] == "unknown fabric"
    assert reasons["h100-nogbps"] == "unknown Gbit/s per node"  # fabric known, rate not
    options = result.options
    assert [o.rank_by_cost for o in options] == list(range(1, len(options) + 1))
    assert sorted(o.rank_by_time for o in options) == list(range(1, len(options) + 1))
    assert any(o.pareto for o in options)
    assert result.by_time[0].time_hours == min(o.time_hours for o in options)
    for o in options:
        assert 0 < o.scaling_efficiency <= 1
        assert o.effective_usd_per_gpu_hour >= (o.offer.usd_per_gpu_hour or 0)
        assert o.layout.tp * o.layout.pp * o.layout.dp == o.nodes * 8
    assert out["error_band_pct"] == cal.error_band_pct
    assert out["memory"]["bytes_per_param"] == 16


def test_an_assumed_network_ranks_by_its_slow_end_and_says_so(cal: Calibration) -> None:
    from datetime import date

    from clusterscout.domain.brackets import AssumedNetwork, FabricBracket, NetworkCase
    from clusterscout.domain.models import Source

    src = Source(id="s", url="https://example.org/s", checked_on=date(2026, 12, 1))
    bracket = FabricBracket(IB, "hopper", ("H100-SXM-80GB",), 1600.0, 3200.0, src, src)
    assumed = AssumedNetwork(
        NetworkCase(IB, 1600.0, False),
        NetworkCase(IB, 3200.0, True),
        ("per_node_gbps", "gpudirect_rdma"),
        (bracket,),
    )
    ranged = replace(offer("h100-ranged", gbps=None), assumed=assumed, price_source="buyer")
    known = offer("h100-ib")
    result = plan(PlanRequest(preset="70B", tokens=1e12), [known, ranged], GPUS, cal)
    by_id = {o.offer.offer_id: o for o in result.options}
    r, k = by_id["h100-ranged"], by_id["h100-ib"]
    assert r.time_hours_best is not None and r.cost_usd_best is not None
    # The slow end (1600 Gbit/s, no GPUDirect) is what ranks; the fast end is the known offer's.
    assert r.time_hours_best < r.time_hours
    assert r.time_hours > k.time_hours and k.time_hours_best is None
    out = plan_json(result)
    ranged_json = next(
        o for o in out["options"] if o["offer"]["id"] == "h100-ranged" and o["nodes"] == r.nodes
    )
    assert ranged_json["assumed"] == "assumed 1600-3200 Gbit/s, GPUDirect RDMA with and without"
    assert ranged_json["time_hours_range"] == [r.time_hours_best, r.time_hours]
    assert ranged_json["offer"]["assumed"]["sources"] == [
        {"url": "https://example.org/s", "checked_on": "2026-12-01"}
    ]
    assert Assumption.NETWORK_BRACKET.value in out["assumptions"]
    assert Assumption.BUYER_PRICE.value in out["assumptions"]
    assert Assumption.PRICE_ON_REQUEST.value not in out["assumptions"]


def test_an_unstated_node_size_is_a_reason_and_billing_steps_round_up(cal: Calibration) -> None:
    unsized = replace(offer("h100-unsized"), gpus_per_node=None)
    hourly = replace(offer("h100-hourly"), billing_increment_hours=24.0, billing_known=True)
    result = plan(PlanRequest(preset="7B", tokens=1e9), [unsized, hourly], GPUS, cal)
    assert [(e.offer.offer_id, e.reason) for e in result.excluded] == [
        ("h100-unsized", ExclusionReason.UNKNOWN_GPUS_PER_NODE)
    ]
    # A short run billed per day pays a whole day on every GPU it uses.
    for o in result.options:
        assert o.time_hours < 24
        assert o.billed_hours == 24.0
        assert o.cost_usd == pytest.approx(2.5 * o.gpus * 24)
    out = plan_json(result)
    assert {o["billing_known"] for o in out["options"]} == {True}


@pytest.mark.parametrize(("held_out", "band"), [(None, 20.0), (31.0, 31.0)])
def test_error_band_is_the_held_out_p90_when_measured(
    cal: Calibration, held_out: float | None, band: float
) -> None:
    c = replace(cal, p90_abs_error_pct=20.0, holdout_p90_abs_error_pct=held_out)
    result = plan(PlanRequest(preset="405B", tokens=1e12), OFFERS[:1], GPUS, c)
    assert result.error_band_pct == band


def test_budget_deadline_and_gpu_filter(cal: Calibration) -> None:
    req = PlanRequest(preset="70B", tokens=1e12, budget_usd=1.0)
    reasons = {e.reason for e in plan(req, OFFERS, GPUS, cal).excluded}
    assert "over budget" in reasons
    req = PlanRequest(preset="70B", tokens=1e12, deadline_hours=0.01, gpu="h100")
    result = plan(req, OFFERS, GPUS, cal)
    assert {e.reason for e in result.excluded} >= {"misses deadline"}
    assert all(v.gpu == "H100-SXM-80GB" for v in result.per_gpu)
    assert result.needs_multi_node


def test_params_and_steps_request(cal: Calibration) -> None:
    result = plan(PlanRequest(params=1.3e9, steps=1000, max_nodes=4), OFFERS, GPUS, cal)
    assert result.steps == 1000
    assert result.tokens == 1000 * plan_json(result)["seq_len"] * (2**22 // 4096)
    fp8 = plan(PlanRequest(preset="8B", steps=10, precision=Precision.FP8), OFFERS, GPUS, cal)
    assert all(v.gpu != "A100-SXM-80GB" for v in fp8.per_gpu)
    with pytest.raises(InputError) as info:
        plan(
            PlanRequest(preset="8B", steps=10, precision=Precision.FP8, gpu="A100"),
            OFFERS,
            GPUS,
            cal,
        )
    assert info.value.field == "precision"


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (PlanRequest(tokens=1e9), "model"),
        (PlanRequest(params=7e9, preset="7B", tokens=1e9), "model"),
        (PlanRequest(preset="3B", tokens=1e9), "model"),
        (PlanRequest(params=10.0, tokens=1e9), "params"),
        (PlanRequest(preset="7B"), "tokens"),
        (PlanRequest(preset="7B", tokens=-1), "tokens"),
        (PlanRequest(preset="7B", steps=0), "steps"),
        (PlanRequest(preset="7B", tokens=1e9, budget_usd=0), "budget_usd"),
        (PlanRequest(preset="7B", tokens=1e9, deadline_hours=-2), "deadline_hours"),
        (PlanRequest(preset="7B", tokens=1e9, max_nodes=0), "max_nodes"),
        (PlanRequest(preset="7B", tokens=1e9, seq_len=10**8), "seq_len"),
        (PlanRequest(preset="7B", tokens=1e9, gpu="TPU"), "gpu"),
        (PlanRequest(preset="7B", tokens=1e9, max_nodes=100_001), "max_nodes"),
        (PlanRequest(preset="7B", tokens=1e9, batch_tokens=2**41), "batch_tokens"),
        (PlanRequest(preset="7B", tokens=1e9, batch_tokens=1024, seq_len=4096), "seq_len"),
    ],
)
def test_bad_requests_name_the_field(cal: Calibration, request_: PlanRequest, field: str) -> None:
    with pytest.raises(InputError) as info:
        plan(request_, OFFERS, GPUS, cal)
    assert info.value.field == field


def test_huge_model_fits_nowhere(cal: Calibration) -> None:
    result = plan(PlanRequest(params=9e13, tokens=1e9, max_nodes=2), OFFERS[:1], GPUS[:1], cal)
    assert result.min_gpus_to_fit is None or result.min_gpus_to_fit > 16
    assert result.needs_multi_node


def test_presets() -> None:
    dense = {"1B", "7B", "8B", "13B", "70B", "405B"}
    moe = {"mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "qwen3-235b-a22b"}
    assert set(PRESETS) == dense | moe
    assert all(PRESETS[name].shape.is_moe for name in moe)
    assert not any(PRESETS[name].shape.is_moe for name in dense)
    found = find_preset("DeepSeek-V3")
    assert found is not None and found.shape.experts == 256
    preset = find_preset("70b")
    assert preset is not None and preset.shape.layers == 80
    assert find_preset("nope") is None


def test_fifty_offers_share_model_evaluations(
    cal: Calibration, monkeypatch: pytest.MonkeyPatch
) -> None:
    fabrics = [IB, FabricKind.ROCE, FabricKind.EFA, ETH, None]
    gpus = ["H100-SXM-80GB", "A100-SXM-80GB", "H200-SXM-141GB", "B200-SXM-180GB", "MI300X"]
    offers = [
        offer(
            f"o{i}",
            gpu=gpus[i % 5],
            fabric=fabrics[i % 5],
            gbps=[3200, 1600, 400, 800][i % 4] if fabrics[i % 5] else None,
            max_nodes=[None, 4, 16, 64][i % 4],
            price=1.0 + i / 10,
        )
        for i in range(50)
    ]
    # Offers with the same GPU, node size and network share one layout search per node count
    # (counted, not timed: the work done is what keeps a plan fast on any machine).
    calls: list[tuple[str, int]] = []
    fits: list[tuple[str, int, int]] = []
    best, fitting = LayoutSearch.best, fitting_workloads

    def counting(search: LayoutSearch, cluster: Any) -> Any:
        calls.append((cluster.gpu.name, cluster.nodes))
        return best(search, cluster)

    def counting_fits(job: Any, gpu: Any, per_node: int, gpus: int, c: Calibration) -> Any:
        fits.append((gpu.name, per_node, gpus))
        return fitting(job, gpu, per_node, gpus, c)

    monkeypatch.setattr(LayoutSearch, "best", counting)
    monkeypatch.setattr(layouts_module, "fitting_workloads", counting_fits)
    result = plan(PlanRequest(preset="405B", tokens=1e12), offers, GPUS, cal)
    shapes = {
        (o.gpu, o.fabric, o.per_node_gbps, n)
        for o in offers
        if o.fabric and o.per_node_gbps
        for n in node_counts(min(64, o.max_nodes or 64))
    }
    assert len(calls) <= len(shapes) + len(offers)  # + one-node checks of unnetworked offers
    assert len(calls) < 5 * len(offers)
    # The memory-fit search ignores the network: once per GPU model and GPU counts per plan,
    # shared by the verdicts and every offer.
    assert len(fits) == len(set(fits))
    assert result.options


def test_odd_node_cap_and_fp8_on_gpus_without_fp8(cal: Calibration) -> None:
    offers = [offer("h100-6", max_nodes=6), offer("a100", gpu="A100")]
    result = plan(
        PlanRequest(preset="70B", tokens=1e11, precision=Precision.FP8), offers, GPUS, cal
    )
    assert {o.nodes for o in result.options} <= {1, 2, 4, 6}
    assert any(o.nodes == 6 for o in result.options)
    assert [e.reason for e in result.excluded] == ["GPU has no fp8 figure"]


def test_the_stack_changes_the_predicted_time(cal: Calibration) -> None:
    request = PlanRequest(preset="8B", tokens=1e11, gpu="H100", max_nodes=8)
    megatron = plan(request, OFFERS, GPUS, cal)
    pytorch = plan(replace(request, stack=Stack.PYTORCH), OFFERS, GPUS, cal)
    fast = {(o.offer.offer_id, o.nodes): o.time_hours for o in megatron.options}
    slow = {(o.offer.offer_id, o.nodes): o.time_hours for o in pytorch.options}
    shared = set(fast) & set(slow)
    assert shared
    # PyTorch FSDP stacks reach a smaller fraction of peak on Hopper than Megatron (fitted)
    assert all(slow[k] > fast[k] for k in shared)


def test_more_gpus_than_the_batch_train_the_same_tokens_in_fewer_steps(cal: Calibration) -> None:
    # Regression (issue 8): when data parallelism exceeds the global batch, the planner raised
    # the batch but kept the step count, so doubling GPUs showed the same wall time and twice
    # the GPU-hours. The steps now follow the tokens and the batch actually used.
    request = PlanRequest(params=1e9, tokens=1e10, batch_tokens=2**17, gpu="H100")
    ib = [offer("h100-ib", max_nodes=64)]

    def fastest(max_nodes: int) -> PlanOption:
        result = plan(replace(request, max_nodes=max_nodes), ib, GPUS, cal)
        return min(result.options, key=lambda o: o.time_hours)

    small, large = fastest(4), fastest(16)
    assert (small.nodes, large.nodes) == (4, 16)
    seq = 4096
    for o in (small, large):
        trained = o.steps * o.layout.global_batch * seq
        assert 1e10 <= trained < 1e10 + o.layout.global_batch * seq
    assert large.layout.global_batch > 32  # the job's batch: 2**17 tokens / 4096
    assert large.steps < small.steps
    # Four times the GPUs: much faster, and not many more GPU-hours.
    assert large.time_hours < small.time_hours / 2
    assert large.time_hours * large.gpus < 1.5 * small.time_hours * small.gpus


def test_layouts_are_compared_on_the_time_to_train_the_tokens(cal: Calibration) -> None:
    from clusterscout.model.inputs import ClusterSpec
    from clusterscout.model.planner.request import job_for

    job = job_for(PlanRequest(params=1e9, tokens=1e10, batch_tokens=2**17))
    h100 = next(g for g in GPUS if g.name == "H100-SXM-80GB")
    best = best_layout(job, ClusterSpec(h100, 8, 16, IB, 3200, True), cal)
    assert best is not None
    assert best.steps == job.steps_for(best.workload.global_batch)
    assert best.job_seconds == pytest.approx(best.steps * best.step_time_s)


def test_default_deadline_excludes_slow_options_and_says_so(cal: Calibration) -> None:
    result = plan(PlanRequest(preset="405B", tokens=15e12, max_nodes=64), OFFERS, GPUS, cal)
    assert result.deadline_is_default and result.deadline_hours == 90 * 24
    assert not result.options  # nothing finishes 405B on 15T tokens within 90 days on 64 nodes
    reasons = {e.offer.offer_id: e.reason for e in result.excluded}
    assert reasons["h100-ib"] is ExclusionReason.MISSES_DEADLINE
    assert result.nodes_for_deadline is None
    assert all(v.nodes_for_deadline is None for v in result.per_gpu)
    given = plan(
        PlanRequest(preset="405B", tokens=15e12, max_nodes=64, deadline_hours=1e6),
        OFFERS,
        GPUS,
        cal,
    )
    assert not given.deadline_is_default and given.options
    assert all(o.time_hours <= 1e6 for o in given.options)


def test_verdict_needs_multi_node_when_one_node_is_too_slow(cal: Calibration) -> None:
    fast = plan(PlanRequest(preset="7B", tokens=1e10), OFFERS, GPUS, cal)
    assert fast.needs_multi_node is False
    slow = plan(PlanRequest(preset="7B", tokens=1e12, gpu="H100"), OFFERS, GPUS, cal)
    h100 = next(v for v in slow.per_gpu if v.gpu == "H100-SXM-80GB")
    assert h100.one_node_fits and h100.one_node_time_hours is not None
    assert h100.one_node_time_hours > 90 * 24  # fits in memory, far too slow
    assert slow.needs_multi_node is True
    assert h100.nodes_for_deadline is not None and h100.nodes_for_deadline > 1
    assert slow.nodes_for_deadline == min(
        v.nodes_for_deadline for v in slow.per_gpu if v.nodes_for_deadline is not None
    )


def test_spot_prices_need_an_opt_in_across_nodes(cal: Calibration) -> None:
    spot = replace(offer("h100-spot", price=1.0), price_tier="spot")
    request = PlanRequest(preset="70B", tokens=1e11, gpu="H100", max_nodes=16)
    refused = plan(request, [spot], GPUS, cal)
    assert not refused.options
    assert [e.reason for e in refused.excluded] == [ExclusionReason.SPOT_MULTI_NODE]
    allowed = plan(replace(request, allow_spot=True), [spot], GPUS, cal)
    assert allowed.allow_spot and allowed.options
    assert all(o.offer.price_tier == "spot" for o in allowed.options)
    # one node needs no synchronisation across machines: spot stays usable there
    small = plan(PlanRequest(preset="1B", tokens=1e9, gpu="H100"), [spot], GPUS, cal)
    assert [o.nodes for o in small.options] == [1]


@pytest.mark.parametrize(
    ("preset", "kind"),
    [("70B", JobKind.PRETRAIN), ("mixtral-8x7b", JobKind.PRETRAIN), ("405B", JobKind.QLORA)],
)
def test_a_search_shared_over_clusters_answers_as_fresh_ones(
    cal: Calibration, preset: str, kind: JobKind
) -> None:
    from clusterscout.model.inputs import ClusterSpec
    from clusterscout.model.planner.request import job_for

    job = job_for(PlanRequest(preset=preset, tokens=1e11, job=kind))
    shared = LayoutSearch(job, cal)
    for gpu in (g for g in GPUS if g.name in {"H100-SXM-80GB", "A100-SXM-40GB"}):
        # Repeated node counts and other fabrics read the memo; the answers must not change.
        for nodes, fabric in ((1, IB), (4, IB), (2, ETH), (4, ETH), (1, None)):
            gbps = 3200 if fabric is IB else 100 if fabric else None
            cluster = ClusterSpec(gpu, 8, nodes, fabric, gbps, True)
            found = shared.best(cluster)
            assert found == best_layout(job, cluster, cal)
            fresh = fitting_workloads(job, gpu, 8, 8 * nodes, cal)
            assert shared.fitting(gpu, 8, 8 * nodes) == tuple(fresh)
            # Skipping layouts on their compute time alone keeps the first fastest one.
            timed = [
                (job.steps_for(w.global_batch) * step_breakdown(w, cluster, cal).total_s, i)
                for i, w in enumerate(fresh)
            ]
            assert (found.workload if found else None) == (fresh[min(timed)[1]] if timed else None)
        assert shared.min_gpus_to_fit(gpu) == LayoutSearch(job, cal).min_gpus_to_fit(gpu)
        for gpus in range(1, 20):
            whole = bool(fitting_workloads(job, gpu, min(gpus, 8), gpus, cal))
            assert LayoutSearch(job, cal).fits_on(gpu, gpus) == whole
            assert shared.fits_on(gpu, gpus) == whole


def test_the_step_memo_answers_as_the_step_model(cal: Calibration) -> None:
    from clusterscout.model.inputs import ClusterSpec
    from clusterscout.model.planner.request import job_for

    job = job_for(PlanRequest(preset="70B", tokens=1e11))
    memo = StepMemo(cal)
    gpu = next(g for g in GPUS if g.name == "H100-SXM-80GB")
    for nodes, fabric in ((2, IB), (4, ETH), (2, IB)):
        cluster = ClusterSpec(gpu, 8, nodes, fabric, 3200 if fabric is IB else 100, True)
        for w in fitting_workloads(job, gpu, 8, 8 * nodes, cal)[:6]:
            assert memo.compute(w, cluster) == compute_time_s(w, cluster, cal)
            assert memo.parts(w, cluster) == step_breakdown(w, cluster, cal)
            assert memo.result(w, cluster) == train_step(w, cluster, cal)


def test_each_calibration_gets_its_own_step_memo(cal: Calibration) -> None:
    from clusterscout.model.calibration import TrainingCalibration

    assert step_memo(cal) is step_memo(cal)
    # Each pooled connection parses its own copy of the stored calibration: equal copies share.
    copy = replace(cal)
    assert copy is not cal and step_memo(copy) is step_memo(cal)
    slower = replace(
        cal, training=replace(cal.training, straggler_sigma=cal.training.straggler_sigma + 0.05)
    )
    assert isinstance(slower.training, TrainingCalibration)
    assert step_memo(slower) is not step_memo(cal)
    request = PlanRequest(preset="405B", tokens=1e12)
    # A plan under other constants must not read the first calibration's answers.
    first = plan(request, OFFERS, GPUS, cal)
    other = plan(request, OFFERS, GPUS, slower)
    fresh = plan(request, OFFERS, GPUS, replace(slower))
    assert other == fresh
    assert [o.time_hours for o in other.options] != [o.time_hours for o in first.options]


def test_the_step_memo_starts_over_at_its_bound(
    cal: Calibration, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clusterscout.model.inputs import ClusterSpec
    from clusterscout.model.planner.request import job_for

    monkeypatch.setattr(layouts_module, "STEP_MEMO_ENTRIES", 3)
    job = job_for(PlanRequest(preset="70B", tokens=1e11))
    gpu = next(g for g in GPUS if g.name == "H100-SXM-80GB")
    cluster = ClusterSpec(gpu, 8, 4, IB, 3200, True)
    memo = StepMemo(cal)
    workloads = fitting_workloads(job, gpu, 8, 32, cal)[:7]
    assert len(workloads) == 7
    for w in workloads:
        assert memo.compute(w, cluster) == compute_time_s(w, cluster, cal)
        assert len(memo._compute) <= 3
    assert memo.compute(workloads[0], cluster) == compute_time_s(workloads[0], cluster, cal)


def test_h200s_memory_buys_lighter_parallelism_than_h100_on_the_same_job(
    cal: Calibration,
) -> None:
    search = LayoutSearch(job_for(PlanRequest(preset="70B", tokens=1e11)), cal)
    h100 = next(g for g in GPUS if g.name == "H100-SXM-80GB")
    h200 = next(g for g in GPUS if g.name == "H200-SXM-141GB")
    lighter = 0
    for nodes in (4, 8, 16, 32, 64):
        a = search.best(ClusterSpec(h100, 8, nodes, IB, 3200, True))
        b = search.best(ClusterSpec(h200, 8, nodes, IB, 3200, True))
        assert a is not None and b is not None
        pa, pb = a.workload.parallelism, b.workload.parallelism
        # the same SMs and clocks, but 141 GB: never more model parallelism, never slower
        assert pb.tp * pb.pp <= pa.tp * pa.pp
        assert b.job_seconds <= a.job_seconds
        ours = (pb.tp * pb.pp, -b.workload.micro_batch)
        lighter += ours < (pa.tp * pa.pp, -a.workload.micro_batch)
    assert lighter >= 1


def test_the_search_tries_larger_micro_batches_only_where_they_fit(cal: Calibration) -> None:
    job = job_for(PlanRequest(preset="8B", tokens=1e11))
    h100 = next(g for g in GPUS if g.name == "H100-SXM-80GB")
    small = replace(h100, memory_gib=30.0)
    roomy = fitting_workloads(job, h100, 8, 64, cal)
    assert {1, 2} <= {w.micro_batch for w in roomy}
    tight = fitting_workloads(job, small, 8, 64, cal)
    # every larger micro-batch tried still fits; less memory leaves fewer of them
    assert all(w.micro_batch == 1 or total_gib(w) <= 30.0 * 0.9 for w in tight)
    assert sum(w.micro_batch > 1 for w in tight) < sum(w.micro_batch > 1 for w in roomy)


def test_a_gpu_without_a_priced_offer_says_so_instead_of_missing_the_deadline(
    cal: Calibration,
) -> None:
    # Only unpriced H100 offers: one node would hold 7B and finish, but nothing can be costed.
    unpriced = [offer("h100-noprice", price=None), offer("b200-ib", gpu="B200", price=5.0)]
    result = plan(PlanRequest(preset="7B", tokens=1e10), unpriced, GPUS, cal)
    h100 = next(v for v in result.per_gpu if v.gpu == "H100-SXM-80GB")
    b200 = next(v for v in result.per_gpu if v.gpu.startswith("B200"))
    assert h100.one_node_fits and h100.nodes_for_deadline is None
    assert h100.priced is False
    assert b200.priced is True and b200.nodes_for_deadline is not None
    by_gpu = {v["gpu"]: v for v in plan_json(result)["per_gpu"]}
    assert by_gpu["H100-SXM-80GB"]["priced"] is False
