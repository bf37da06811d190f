"""Check the serving model against published inference measurements (``type: inference``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import GpuSpec
from clusterscout.model.calibration import Calibration, ErrorFigures, InferenceCalibration
from clusterscout.model.checkmodel import (
    CheckReport,
    PointResult,
    Unexpressed,
    dense_layers_of,
    percentile,
    source_group,
    summarise,
)
from clusterscout.model.defaults import complete_shape
from clusterscout.model.inference import (
    ServingHardware,
    ServingLayout,
    decode_step_s,
    hardware_for,
    prefill_s,
)
from clusterscout.model.inputs import ModelShape, Precision

DECODE_METRICS = ("output_tokens_per_s_per_gpu", "output_tokens_per_s", "itl", "tpot")
"""Metrics of steady decoding: throughput, or the time between two tokens (ms)."""
METRICS = (*DECODE_METRICS, "ttft", "batch_latency")
"""Inference metrics the model can predict (``ttft``: time to first token, ms;
``batch_latency``: prefill and decode of one static batch, end to end, ms or s)."""
TIME_METRICS = frozenset({"itl", "tpot", "ttft", "batch_latency"})
"""Metrics that are times (lower is faster)."""
_SECONDS = {"ms": 1e3, "s": 1.0}
LEGACY_ATTENTION = re.compile(r"TensorRT-LLM v0\.[56](\.|\b)")
"""Engines whose decode attention re-read the KV cache per query head (see ``ServingPoint``)."""
KINDS = ("decode", "ttft", "moe")
"""Parts the serving figures are split into: dense decode, time to first token, MoE."""


@dataclass(frozen=True, slots=True)
class ServingPoint:
    """A published serving measurement in the model's terms.

    ``prefilled`` is False for decode-only instances (prefill/decode disaggregation): their
    steps carry no prompt work. ``fitted`` is False for points the data marks
    ``exclude_from_fit`` (checked and reported, never fitted on). ``legacy_attention`` is
    True for runs on TensorRT-LLM 0.5 and 0.6, whose generation-phase attention was not yet
    grouped-query aware (TensorRT-LLM's own Falcon-180B/H200 blog: GQA kernels up to 2.4x
    faster on Llama-70B from v0.7).
    """

    id: str
    group: str
    model: ModelShape
    precision: Precision
    hardware: ServingHardware
    layout: ServingLayout
    concurrency: int
    input_len: int
    output_len: int
    metric: str
    measured: float
    unit: str
    confidence: str
    head_dim: float | None = None
    prefilled: bool = True
    fitted: bool = True
    legacy_attention: bool = False

    @property
    def gpu(self) -> GpuSpec:
        """The accelerator of the point."""
        return self.hardware.gpu

    @property
    def mean_context(self) -> float:
        """Context of an average decode step: the prompt plus half the output."""
        return self.input_len + self.output_len / 2

    @property
    def kind(self) -> str:
        """``moe`` for mixture-of-experts models, else ``ttft`` or ``decode`` by metric."""
        if self.model.is_moe:
            return "moe"
        return "ttft" if self.metric == "ttft" else "decode"


def is_inference(point: Mapping[str, Any]) -> bool:
    """True for points of ``workload.type == "inference"``."""
    work = point.get("workload")
    return isinstance(work, Mapping) and work.get("type") == "inference"


def _int(work: Mapping[str, Any], key: str) -> int:
    value = work.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        msg = f"{key} not stated"
        raise ValueError(msg)
    return value


def _shape(raw: Mapping[str, Any]) -> ModelShape:
    """The model of a point, dense or mixture-of-experts, from the measurement's fields."""
    shape = complete_shape(
        float(raw["params"]),
        layers=raw.get("layers"),
        hidden=raw.get("hidden"),
        heads=raw.get("heads"),
        kv_heads=raw.get("kv_heads"),
        vocab=raw.get("vocab"),
        ffn_hidden=raw.get("ffn_hidden"),
        tied_embeddings=raw.get("tied_embeddings"),
    )
    if not raw.get("experts"):
        return shape
    if not raw.get("top_k") or not raw.get("expert_ffn_hidden"):
        msg = "mixture-of-experts shape without top-k or expert width"
        raise ValueError(msg)
    return replace(
        shape,
        experts=int(raw["experts"]),
        top_k=int(raw["top_k"]),
        expert_ffn=int(raw["expert_ffn_hidden"]),
        shared_experts=int(raw.get("shared_experts") or 0),
        dense_layers=dense_layers_of(raw.get("moe_layer_freq"), shape.layers),
        kv_lora_rank=int(raw.get("kv_lora_rank") or 0),
        qk_rope_head_dim=int(raw.get("qk_rope_head_dim") or 0),
    )


def _layout(work: Mapping[str, Any], gpus_per_node: int) -> ServingLayout:
    par = work.get("parallelism") or {}
    tp, pp = par.get("tp"), par.get("pp") or 1
    if not isinstance(tp, int) or not isinstance(pp, int):
        msg = "tensor/pipeline parallel degree not stated"
        raise ValueError(msg)
    ep, dp = par.get("ep") or 1, par.get("dp") or 1
    if ep > max(tp, 1) or dp > 1:
        # Wide expert parallelism with data-parallel attention puts an all-to-all on every
        # MoE layer, over the fabric once it leaves the node; serving does not model it.
        msg = "expert parallelism beyond the tensor-parallel group is not modelled"
        raise ValueError(msg)
    if tp > gpus_per_node:
        msg = "tensor parallelism across nodes is not modelled"
        raise ValueError(msg)
    return ServingLayout(tp, pp)


def express(
    point: Mapping[str, Any], gpus: Sequence[GpuSpec], calibration: Calibration
) -> ServingPoint:
    """The model's view of one inference point.

    Raises:
        ValueError: with the reason the point cannot be expressed.
    """
    work = point["workload"]
    metric = str(point.get("metric"))
    if metric not in METRICS:
        msg = f"metric {metric!r} is not one of {', '.join(METRICS)}"
        raise ValueError(msg)
    try:
        precision = Precision(str(work.get("precision")))
    except ValueError:
        msg = f"precision {work.get('precision')!r} has no serving bytes"
        raise ValueError(msg) from None
    gpu = GpuIndex.of(gpus).spec(str(point.get("gpu")))
    if gpu is None:
        msg = f"GPU {point.get('gpu')!r} is not in the catalog"
        raise ValueError(msg)
    if metric == "batch_latency" and point.get("unit") not in _SECONDS:
        msg = f"unit {point.get('unit')!r} of a batch latency is not ms or s"
        raise ValueError(msg)
    layout = _layout(work, int(point.get("gpus_per_node") or 8))
    model_raw = work.get("model") or {}
    model = _shape(model_raw)
    phase = work.get("phase")
    return ServingPoint(
        id=str(point["id"]),
        group=source_group(point),
        model=model,
        precision=precision,
        hardware=hardware_for(gpu, calibration),
        layout=layout,
        concurrency=_int(work, "concurrency"),
        input_len=_int(work, "input_len"),
        output_len=_int(work, "output_len"),
        metric=metric,
        measured=float(point["value"]),
        unit=str(point.get("unit")),
        confidence=str(point.get("confidence")),
        head_dim=model_raw.get("head_dim"),
        prefilled=phase != "decode",
        fitted=not point.get("exclude_from_fit"),
        legacy_attention=bool(LEGACY_ATTENTION.search(str(work.get("engine") or ""))),
    )


def predict(point: ServingPoint, calibration: InferenceCalibration) -> float:
    """The model's value in the point's metric.

    Time to first token is the prefill of the ``concurrency`` prompts sent together; a
    batch's latency adds its ``output_len - 1`` decode steps after the first token. For
    the decode metrics, prefill of each request is spread over its decode steps:
    ``n / output_len`` prompts per step (exact for static batches, the steady state of
    continuous batching).
    """
    if point.metric == "batch_latency":
        first = prefill_s(
            point.model,
            point.precision,
            point.hardware,
            point.layout,
            point.concurrency,
            point.input_len,
            calibration,
        )
        step = decode_step_s(
            point.model,
            point.precision,
            point.hardware,
            point.layout,
            point.concurrency,
            point.mean_context,
            calibration,
            head_dim=point.head_dim,
            legacy_attention=point.legacy_attention,
        )
        return (first + (point.output_len - 1) * step) * _SECONDS[point.unit]
    if point.metric == "ttft":
        seconds = prefill_s(
            point.model,
            point.precision,
            point.hardware,
            point.layout,
            point.concurrency,
            point.input_len,
            calibration,
        )
        return seconds * 1e3
    prefill = (
        (point.concurrency / point.output_len, float(point.input_len))
        if point.prefilled
        else (0.0, 0.0)
    )
    step = decode_step_s(
        point.model,
        point.precision,
        point.hardware,
        point.layout,
        point.concurrency,
        point.mean_context,
        calibration,
        prefill=prefill,
        head_dim=point.head_dim,
        legacy_attention=point.legacy_attention,
    )
    if point.metric in ("itl", "tpot"):
        return step * 1e3
    tokens_per_s = point.concurrency / step
    if point.metric == "output_tokens_per_s_per_gpu":
        return tokens_per_s / point.layout.gpus
    return tokens_per_s


def result_of(point: ServingPoint, predicted: float) -> PointResult:
    """The comparison row (ITL and TTFT are times: lower is faster)."""
    return PointResult(
        id=point.id,
        metric=point.metric,
        unit=point.unit,
        measured=point.measured,
        predicted=predicted,
        confidence=point.confidence,
        speed_metric=point.metric not in TIME_METRICS,
        stack=None,
        group=point.group,
        moe=point.model.is_moe,
    )


def expressible(
    measurements: Sequence[Any], gpus: Sequence[GpuSpec], calibration: Calibration
) -> tuple[list[ServingPoint], list[Unexpressed]]:
    """The inference points the model can express, and the others with reasons."""
    points: list[ServingPoint] = []
    skipped: list[Unexpressed] = []
    for raw in measurements:
        if not isinstance(raw, Mapping) or not is_inference(raw):
            continue
        try:
            points.append(express(raw, gpus, calibration))
        except (KeyError, TypeError, ValueError) as exc:
            skipped.append(Unexpressed(str(raw.get("id")), str(exc)))
    return points, skipped


def figures_by(
    points: Sequence[ServingPoint], results: Sequence[PointResult], key: str
) -> dict[str, ErrorFigures]:
    """``summarise`` of the results grouped by ``kind`` or ``gpu`` of their points."""
    groups: dict[str, list[PointResult]] = {}
    for point, result in zip(points, results, strict=True):
        name = point.kind if key == "kind" else point.gpu.name
        groups.setdefault(name, []).append(result)
    return {name: summarise(rows) for name, rows in sorted(groups.items())}


@dataclass(frozen=True, slots=True)
class ServingCheck:
    """The serving check: every expressed point, and the figures by part and by GPU."""

    report: CheckReport
    by_kind: Mapping[str, ErrorFigures]
    by_gpu: Mapping[str, ErrorFigures]


def check(
    measurements: Sequence[Any], gpus: Sequence[GpuSpec], calibration: Calibration
) -> ServingCheck:
    """Predicted vs measured for every expressible inference point.

    Raises:
        ValueError: when ``calibration`` has no inference constants.
    """
    if calibration.inference is None:
        msg = "the calibration has no inference constants"
        raise ValueError(msg)
    points, skipped = expressible(measurements, gpus, calibration)
    results = tuple(result_of(p, predict(p, calibration.inference)) for p in points)
    errors = [r.abs_error_pct for r in results]
    report = CheckReport(
        results=results,
        unexpressed=tuple(skipped),
        median_abs_error_pct=percentile(errors, 50.0),
        p90_abs_error_pct=percentile(errors, 90.0),
    )
    return ServingCheck(
        report,
        figures_by(points, results, "kind"),
        figures_by(points, results, "gpu"),
    )
