"""The planner's jobs on the real catalog figures: fine-tuning verdicts and inference sizing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from clusterscout.catalog.calibration import load_calibration
from clusterscout.catalog.load import load_gpus
from clusterscout.domain.errors import InputError
from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.inputs import JobKind, Precision
from clusterscout.model.planner.plan import plan
from clusterscout.model.planner.reasons import Assumption, ExclusionReason
from clusterscout.model.planner.request import PlanRequest
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
    assert reasons == {
        "h100-eth": ExclusionReason.UNKNOWN_FABRIC,
        "a100": ExclusionReason.NO_FP8_FIGURE,
    }


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
