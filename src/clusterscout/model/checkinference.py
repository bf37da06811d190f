"""Check the serving roofline against published inference measurements (``type: inference``)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import GpuSpec
from clusterscout.model.calibration import InferenceCalibration
from clusterscout.model.checkmodel import (
    CheckReport,
    PointResult,
    Unexpressed,
    percentile,
    source_group,
)
from clusterscout.model.defaults import complete_shape
from clusterscout.model.inference import ServingLayout, decode_step_s
from clusterscout.model.inputs import ModelShape, Precision

METRICS = ("output_tokens_per_s_per_gpu", "output_tokens_per_s", "itl")
"""Inference metrics the roofline can predict."""


@dataclass(frozen=True, slots=True)
class ServingPoint:
    """A published serving measurement in the roofline's terms."""

    id: str
    group: str
    model: ModelShape
    precision: Precision
    gpu: GpuSpec
    layout: ServingLayout
    concurrency: int
    input_len: int
    output_len: int
    metric: str
    measured: float
    unit: str
    confidence: str

    @property
    def mean_context(self) -> float:
        """Context of an average decode step: the prompt plus half the output."""
        return self.input_len + self.output_len / 2


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


def express(point: Mapping[str, Any], gpus: Sequence[GpuSpec]) -> ServingPoint:
    """The roofline's view of one inference point.

    Raises:
        ValueError: with the reason the point cannot be expressed.
    """
    work = point["workload"]
    metric = str(point.get("metric"))
    if metric not in METRICS:
        msg = f"metric {metric!r} is not one of {', '.join(METRICS)}"
        raise ValueError(msg)
    model_raw = work.get("model") or {}
    if model_raw.get("experts"):
        msg = "mixture-of-experts shape (active parameters are not modelled here)"
        raise ValueError(msg)
    try:
        precision = Precision(str(work.get("precision")))
    except ValueError:
        msg = f"precision {work.get('precision')!r} has no serving bytes"
        raise ValueError(msg) from None
    par = work.get("parallelism") or {}
    tp, pp = par.get("tp"), par.get("pp") or 1
    if not isinstance(tp, int) or not isinstance(pp, int):
        msg = "tensor/pipeline parallel degree not stated"
        raise ValueError(msg)
    gpu = GpuIndex.of(gpus).spec(str(point.get("gpu")))
    if gpu is None:
        msg = f"GPU {point.get('gpu')!r} is not in the catalog"
        raise ValueError(msg)
    model = complete_shape(
        float(model_raw["params"]),
        layers=model_raw.get("layers"),
        hidden=model_raw.get("hidden"),
        heads=model_raw.get("heads"),
        kv_heads=model_raw.get("kv_heads"),
        vocab=model_raw.get("vocab"),
        ffn_hidden=model_raw.get("ffn_hidden"),
        tied_embeddings=model_raw.get("tied_embeddings"),
    )
    return ServingPoint(
        id=str(point["id"]),
        group=source_group(point),
        model=model,
        precision=precision,
        gpu=gpu,
        layout=ServingLayout(tp, pp),
        concurrency=_int(work, "concurrency"),
        input_len=_int(work, "input_len"),
        output_len=_int(work, "output_len"),
        metric=metric,
        measured=float(point["value"]),
        unit=str(point.get("unit")),
        confidence=str(point.get("confidence")),
    )


def predict(point: ServingPoint, calibration: InferenceCalibration) -> float:
    """The roofline's value in the point's metric.

    Prefill of each request is spread over its decode steps: ``n * input_len / output_len``
    prompt tokens per step (exact for static batches, the steady state of continuous batching).
    """
    step = decode_step_s(
        point.model,
        point.precision,
        point.gpu,
        point.layout,
        point.concurrency,
        point.mean_context,
        calibration,
        prefill_tokens_per_step=point.concurrency * point.input_len / point.output_len,
    )
    if point.metric == "itl":
        return step * 1e3
    tokens_per_s = point.concurrency / step
    if point.metric == "output_tokens_per_s_per_gpu":
        return tokens_per_s / point.layout.gpus
    return tokens_per_s


def result_of(point: ServingPoint, predicted: float) -> PointResult:
    """The comparison row (ITL is a time: lower is faster)."""
    return PointResult(
        id=point.id,
        metric=point.metric,
        unit=point.unit,
        measured=point.measured,
        predicted=predicted,
        confidence=point.confidence,
        speed_metric=point.metric != "itl",
        stack=None,
        group=point.group,
    )


def expressible(
    measurements: Sequence[Any], gpus: Sequence[GpuSpec]
) -> tuple[list[ServingPoint], list[Unexpressed]]:
    """The inference points the roofline can express, and the others with reasons."""
    points: list[ServingPoint] = []
    skipped: list[Unexpressed] = []
    for raw in measurements:
        if not isinstance(raw, Mapping) or not is_inference(raw):
            continue
        try:
            points.append(express(raw, gpus))
        except (KeyError, TypeError, ValueError) as exc:
            skipped.append(Unexpressed(str(raw.get("id")), str(exc)))
    return points, skipped


def check(
    measurements: Sequence[Any], gpus: Sequence[GpuSpec], calibration: InferenceCalibration
) -> CheckReport:
    """Predicted vs measured for every expressible inference point."""
    points, skipped = expressible(measurements, gpus)
    results = tuple(result_of(p, predict(p, calibration)) for p in points)
    errors = [r.abs_error_pct for r in results]
    return CheckReport(
        results=results,
        unexpressed=tuple(skipped),
        median_abs_error_pct=statistics.median(errors) if errors else 0.0,
        p90_abs_error_pct=percentile(errors, 90.0),
    )
