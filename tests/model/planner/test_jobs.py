"""The planner's jobs on the real catalog figures: fine-tuning verdicts and inference sizing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from clusterscout.catalog.calibration import load_calibration
from clusterscout.catalog.load import load_gpus
from clusterscout.domain.errors import InputError
from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.model.calibration import Calibration
from clusterscout.model.inputs import JobKind, Precision
from clusterscout.model.planner.plan import plan
from clusterscout.model.planner.reasons import Assumption, ExclusionReason
from clusterscout.model.planner.request import PlanRequest, job_for
from clusterscout.model.planner.results import PlanOffer, PlanResult
from clusterscout.web.schemas import plan_json

DATA = Path(__file__).resolve().parents[3] / "data"
GPUS = load_gpus(DATA)
H100, H200 = "H100-SXM-80GB", "H200-SXM-141GB"


@pytest.fixture(scope="module")
def real() -> Calibration:
    return load_calibration(DATA)


def _verdicts(result: PlanResult) -> dict[str, tuple[int | None, bool]]:
    return {v.gpu: (v.min_gpus_to_fit, v.one_node_fits) for v in result.per_gpu}


def test_405b_qlora_fits_one_h100_node(real: Calibration) -> None:
    r = plan(PlanRequest(preset="405B", tokens=1e9, job=JobKind.QLORA), [], GPUS, real)
    assert r.job is JobKind.QLORA and r.lora_rank == 16
    assert _verdicts(r)[H100][1] is True
    assert not r.needs_multi_node
    assert r.memory.bytes_per_param < 0.6
    assert Assumption.QLORA in r.assumptions


def test_405b_lora_needs_two_h100_nodes_but_one_h200_node(real: Calibration) -> None:
    r = plan(PlanRequest(preset="405B", tokens=1e9, job=JobKind.LORA), [], GPUS, real)
    verdicts = _verdicts(r)
    assert verdicts[H100] == (16, False)
    assert verdicts[H200][1] is True
    assert verdicts["A100-SXM-80GB"][1] is False
    assert Assumption.LORA in r.assumptions and Assumption.QLORA not in r.assumptions


def test_full_finetune_needs_what_pretraining_needs(real: Calibration) -> None:
    full = plan(PlanRequest(preset="70B", tokens=1e9, job=JobKind.FULL_FINETUNE), [], GPUS, real)
    pre = plan(PlanRequest(preset="70B", tokens=1e9), [], GPUS, real)
    assert _verdicts(full) == _verdicts(pre)
    assert full.memory == pre.memory


def _h200(price: float = 3.0) -> PlanOffer:
    return PlanOffer("h200", "p", H200, 8, FabricKind.INFINIBAND, 3200, True, 8, price, "on_demand")


def test_405b_fp8_inference_names_nodes_and_tokens_per_gpu_model(real: Calibration) -> None:
    request = PlanRequest(
        preset="405B", job=JobKind.INFERENCE, precision=Precision.FP8, context=32768, concurrency=32
    )
    r = plan(request, [_h200()], GPUS, real)
    assert r.serving is not None and r.options == ()
    by_gpu = {v.gpu: v for v in r.serving.per_gpu}
    assert (by_gpu[H100].nodes, by_gpu[H100].pp) == (2, 2)
    assert (by_gpu[H200].nodes, by_gpu[H200].tp) == (1, 8)
    assert by_gpu[H200].tokens_per_s and by_gpu[H200].tokens_per_s > 0
    # the H200 price is the offer's: USD/h over tokens per hour, per million
    option = r.serving.options[0]
    assert option.usd_per_hour == pytest.approx(3.0 * 8)
    assert option.usd_per_million_tokens == pytest.approx(24 / (option.tokens_per_s * 3600) * 1e6)
    assert Assumption.SERVING_SPEED in r.assumptions
    assert plan_json(r)["serving"]["per_gpu"]


def test_a_target_throughput_adds_replicas_and_nodes(real: Calibration) -> None:
    base = PlanRequest(preset="70B", job=JobKind.INFERENCE, precision=Precision.FP8, concurrency=8)
    one = plan(base, [], GPUS, real).serving
    assert one is not None
    h200 = next(v for v in one.per_gpu if v.gpu == H200)
    target = 3.5 * (h200.tokens_per_s_per_replica or 0)
    more = plan(replace(base, target_tokens_per_s=target), [], GPUS, real).serving
    assert more is not None
    h200_more = next(v for v in more.per_gpu if v.gpu == H200)
    assert h200_more.replicas == 4
    assert (h200_more.tokens_per_s or 0) >= target


def test_inference_offers_are_left_out_with_reasons(real: Calibration) -> None:
    small = PlanOffer("h100-eth", "p", H100, 8, None, None, None, 1, 2.0, "on_demand")
    a100 = PlanOffer("a100", "p", "A100-SXM-80GB", 8, None, None, None, 1, 1.0, "on_demand")
    request = PlanRequest(
        preset="405B", job=JobKind.INFERENCE, precision=Precision.FP8, context=32768, concurrency=32
    )
    r = plan(request, [small, a100], GPUS, real)
    reasons = {e.offer.offer_id: e.reason for e in r.excluded}
    # FP8 on an A100 runs weight-only (no FP8 units): it is sized like any other GPU, and a
    # 405B model with 32 long sequences needs more than the offer's one node
    assert reasons == {
        "h100-eth": ExclusionReason.UNKNOWN_FABRIC,
        "a100": ExclusionReason.UNKNOWN_FABRIC,
    }


def test_an_offer_on_a_gpu_without_tflops_figures_is_left_out_with_the_reason(
    real: Calibration,
) -> None:
    bare = GpuSpec("Bare-GPU", "x", 80.0, hbm_tbps=3.0, scale_up_gbs=900.0)
    offer = PlanOffer("bare", "p", "Bare-GPU", 8, None, None, None, 1, 1.0, "on_demand")
    request = PlanRequest(preset="8B", job=JobKind.INFERENCE, precision=Precision.BF16)
    r = plan(request, [offer], [*GPUS, bare], real)
    assert [(e.offer.offer_id, e.reason) for e in r.excluded] == [
        ("bare", ExclusionReason.NO_BF16_FIGURE)
    ]


def test_fp8_on_a_gpu_without_fp8_units_is_weight_only_and_slower(real: Calibration) -> None:
    request = PlanRequest(preset="8B", job=JobKind.INFERENCE, precision=Precision.FP8)
    bf16 = PlanRequest(preset="8B", job=JobKind.INFERENCE, precision=Precision.BF16)
    fp8_plan, bf16_plan = plan(request, [], GPUS, real).serving, plan(bf16, [], GPUS, real).serving
    assert fp8_plan is not None and bf16_plan is not None
    fp8 = {v.gpu: v.tokens_per_s or 0.0 for v in fp8_plan.per_gpu}
    b16 = {v.gpu: v.tokens_per_s or 0.0 for v in bf16_plan.per_gpu}
    a100 = "A100-SXM-80GB"
    # half the bytes, but dequantised on the fly: faster than BF16, by less than 2x
    assert b16[a100] < fp8[a100] < 2 * b16[a100]


def test_serving_answers_carry_ttft_and_their_evidence(real: Calibration) -> None:
    request = PlanRequest(preset="70B", job=JobKind.INFERENCE, precision=Precision.FP8)
    mi300 = PlanOffer("mi", "p", "MI300X-192GB", 8, None, None, None, 1, 1.0, "on_demand")
    r = plan(request, [_h200(9.0), mi300], GPUS, real)
    assert r.serving is not None
    by_gpu = {v.gpu: v for v in r.serving.per_gpu}
    inference = real.inference
    assert inference is not None
    for v in by_gpu.values():
        assert v.serving_points == inference.evidence.get(v.gpu, 0)
        assert v.calibrated == (v.serving_points >= 5)
    assert by_gpu[H200].calibrated and not by_gpu["MI300X-192GB"].calibrated
    # time to first token of a context-filling prompt: longer on fewer, slower GPUs
    assert by_gpu[H200].ttft_s and by_gpu["A100-SXM-80GB"].ttft_s
    assert by_gpu[H200].ttft_s < by_gpu["A100-SXM-80GB"].ttft_s
    # the cheaper MI300X offer still ranks after the evidenced H200 one
    assert [o.offer.offer_id for o in r.serving.options] == ["h200", "mi"]
    assert r.serving.options[0].usd_per_million_tokens > r.serving.options[1].usd_per_million_tokens
    body = plan_json(r)["serving"]
    assert body["options"][1]["calibrated"] is False
    assert body["per_gpu"][0]["ttft_s"] is not None and body["ttft_band_pct"] > 0


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (PlanRequest(preset="70B", tokens=1e9, precision=Precision.INT4), "precision"),
        (PlanRequest(preset="70B", tokens=1e9, lora_rank=8), "lora_rank"),
        (PlanRequest(preset="70B", tokens=1e9, job=JobKind.LORA, lora_rank=0), "lora_rank"),
        (PlanRequest(preset="70B", tokens=1e9, context=4096), "context"),
        (PlanRequest(preset="70B", job=JobKind.INFERENCE, lora_rank=8), "lora_rank"),
        (PlanRequest(preset="70B", job=JobKind.INFERENCE, concurrency=0), "concurrency"),
        (PlanRequest(preset="70B", job=JobKind.INFERENCE, context=0), "context"),
        (
            PlanRequest(preset="70B", job=JobKind.INFERENCE, target_tokens_per_s=0),
            "target_tokens_per_s",
        ),
    ],
)
def test_job_inputs_that_do_not_apply_are_refused_by_name(
    real: Calibration, request_: PlanRequest, field: str
) -> None:
    with pytest.raises(InputError) as info:
        plan(request_, [], GPUS, real)
    assert info.value.field == field


def _serve(**kw: Any) -> PlanRequest:
    base = {"preset": "405B", "job": JobKind.INFERENCE, "precision": Precision.FP8}
    return PlanRequest(**{**base, **kw})


def test_job_for_refuses_an_inference_request() -> None:
    with pytest.raises(InputError) as info:
        job_for(_serve())
    assert info.value.field == "job"


def test_bf16_and_int4_serving_use_the_bf16_rate(real: Calibration) -> None:
    bf16 = plan(_serve(precision=Precision.BF16), [], GPUS, real).serving
    int4 = plan(_serve(precision=Precision.INT4), [], GPUS, real).serving
    assert bf16 is not None and int4 is not None
    assert int4.weights_gib < bf16.weights_gib / 3
    # A100 has no FP8 figure but serves BF16 and INT4
    assert any(v.gpu == "A100-SXM-80GB" for v in bf16.per_gpu)


def test_a_model_too_big_for_the_node_limit_has_no_replica(real: Calibration) -> None:
    offer = PlanOffer("h100", "p", H100, 8, FabricKind.INFINIBAND, 3200, True, 64, 2.0, "on_demand")
    r = plan(_serve(context=131072, concurrency=64, max_nodes=1), [offer], GPUS, real)
    assert r.serving is not None and r.needs_multi_node
    h100 = next(v for v in r.serving.per_gpu if v.gpu == H100)
    assert h100.tp is None and h100.nodes is None and h100.usd_per_hour is None
    assert [e.reason for e in r.excluded] == [ExclusionReason.DOES_NOT_FIT]


def _offer(oid: str, **kw: Any) -> PlanOffer:
    base: dict[str, Any] = {
        "offer_id": oid,
        "provider": "p",
        "gpu": H100,
        "gpus_per_node": 8,
        "fabric": FabricKind.INFINIBAND,
        "per_node_gbps": 3200.0,
        "gpudirect_rdma": True,
        "max_nodes": 64,
        "usd_per_gpu_hour": 2.0,
        "price_tier": "on_demand",
    }
    return PlanOffer(**{**base, **kw})


def test_every_inference_exclusion_reason(real: Calibration) -> None:
    offers = [
        _offer("gbps", per_node_gbps=None),
        _offer("spot", price_tier="spot"),
        _offer("small", max_nodes=1),
        _offer("unknown-gpu", gpu="TPU-v5"),
        _offer("no-price", usd_per_gpu_hour=None),
        _offer("no-size", gpus_per_node=None),
        _offer("ok"),
    ]
    r = plan(_serve(context=32768, concurrency=32), offers, GPUS, real)
    reasons = {e.offer.offer_id: e.reason for e in r.excluded}
    assert reasons["gbps"] is ExclusionReason.UNKNOWN_GBPS
    assert reasons["spot"] is ExclusionReason.SPOT_MULTI_NODE
    assert reasons["small"] is ExclusionReason.TOO_SMALL
    assert reasons["unknown-gpu"] is ExclusionReason.UNKNOWN_GPU
    assert reasons["no-price"] is ExclusionReason.NO_PRICE
    assert reasons["no-size"] is ExclusionReason.UNKNOWN_GPUS_PER_NODE
    assert [o.offer.offer_id for o in r.serving.options] == ["ok"]  # type: ignore[union-attr]


def test_a_gpu_without_bandwidth_is_left_out_of_serving(real: Calibration) -> None:
    gpus = [replace(g, hbm_tbps=None) if g.name == H100 else g for g in GPUS]
    r = plan(_serve(), [_offer("h100")], gpus, real)
    assert r.excluded[0].reason is ExclusionReason.UNKNOWN_GPU_FIGURES
    assert all(v.gpu != H100 for v in r.serving.per_gpu)  # type: ignore[union-attr]


def test_serving_gpu_filter_and_limits(real: Calibration) -> None:
    r = plan(_serve(gpu="H200"), [_offer("h100")], GPUS, real)
    assert [v.gpu for v in r.per_gpu] == [H200]
    assert r.excluded == ()  # the H100 offer is not this GPU
    for request, field in ((_serve(max_nodes=0), "max_nodes"),):
        with pytest.raises(InputError) as info:
            plan(request, [], GPUS, real)
        assert info.value.field == field
    with pytest.raises(InputError) as info:
        plan(_serve(), [], GPUS, replace(real, inference=None))
    assert info.value.field == "job"


def test_a_larger_adapter_rank_holds_more_state(real: Calibration) -> None:
    r16, r256 = (
        plan(PlanRequest(preset="70B", tokens=1e9, job=JobKind.LORA, lora_rank=r), [], GPUS, real)
        for r in (16, 256)
    )
    assert (r16.lora_rank, r256.lora_rank) == (16, 256)
    assert r256.memory.optimizer_gib == pytest.approx(16 * r16.memory.optimizer_gib)
