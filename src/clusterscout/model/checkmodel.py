"""Check the model against published measurements (``data/measurements.json``).

Every point that states enough is turned into a scenario, predicted, and compared in the
point's own metric. Points that cannot be expressed are listed with the reason. The rules
that read a point, and the few facts taken from the cited source rather than the point
(``INTERPRETATIONS``, ``KNOWN_SHAPES``), are written out here so a reviewer can audit them.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clusterscout.domain.errors import InputError
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.model.calibration import Calibration
from clusterscout.model.estimate import estimate
from clusterscout.model.presets import PRESETS
from clusterscout.model.scenario import Scenario, parse_scenario

LARGE_MESSAGE_BYTES = 8 * 2**30
"""Message size used for 'large message' bus bandwidth when a point gives none (nccl-tests
sweeps usually end at 8-16 GiB, where busbw has reached its plateau)."""

INTERPRETATIONS: Mapping[str, Mapping[str, Any]] = {
    "nccl-ref-dgxa100-multinode": {"nodes": 4, "why": "notes: GTC25 slide says 32 GPUs"},
    "nccl-ref-1node-h100": {"algorithm": "ring", "why": "slide lists NVLS (480) separately"},
    "nccl-ref-1node-b200": {"algorithm": "ring", "why": "slide lists NVLS (850) separately"},
    "nccl-ndr-per-nic-expectation": {
        "gpus_per_node": 1,
        "why": "a per-NIC figure: one GPU with its own 400G NIC per node (one rail)",
    },
}
"""Facts read from a point's notes or its source, applied before expressing it."""

_GPT_VOCAB = 51200
"""Megatron-LM's padded GPT-2 vocabulary (Narayanan et al. 2021, §5.1)."""


def _preset_shape(name: str) -> Mapping[str, Any]:
    """A preset's shape as scenario ``model`` fields (the presets hold the published shapes)."""
    shape = PRESETS[name].shape
    keys = ("params", "layers", "hidden", "heads", "kv_heads", "vocab", "ffn_hidden")
    return {k: getattr(shape, k) for k in keys}


KNOWN_SHAPES: Mapping[str, Mapping[str, Any]] = {
    "llama 3.1 8b": _preset_shape("8B"),
    # Llama 3 and 3.1 70B share one architecture; only the context length changed.
    "llama 3.1 70b": _preset_shape("70B"),
    "llama 3 70b": _preset_shape("70B"),
    "llama 3.1 405b": _preset_shape("405B"),
    "gpt-3 175b": {"layers": 96, "hidden": 12288, "heads": 96},
    "gpt 175b": {"layers": 96, "hidden": 12288, "heads": 96},
    "gpt 22b": {"layers": 48, "hidden": 6144, "heads": 64},
    "gpt 530b": {"layers": 105, "hidden": 20480, "heads": 128},
    "mt-nlg 530b": {"layers": 105, "hidden": 20480, "heads": 128},
    "gpt 1t": {"layers": 128, "hidden": 25600, "heads": 160},
    "mpt-1b": {
        "params": 1.3e9,
        "layers": 24,
        "hidden": 2048,
        "heads": 16,
        "vocab": 50368,
        "tied_embeddings": True,
    },
    "mpt-7b": {
        "params": 6.7e9,
        "layers": 32,
        "hidden": 4096,
        "heads": 32,
        "vocab": 50368,
        "tied_embeddings": True,
    },
    "mpt-13b": {
        "params": 13e9,
        "layers": 40,
        "hidden": 5120,
        "heads": 40,
        "vocab": 50368,
        "tied_embeddings": True,
    },
    "mpt-70b": {
        "params": 70e9,
        "layers": 80,
        "hidden": 8192,
        "heads": 64,
        "vocab": 50368,
        "tied_embeddings": True,
    },
}
"""Published shapes of the models named by points (model cards, the papers' tables)."""

_RECOMPUTE_FLOPS_SOURCES = ("megatron2021-", "megatron-readme-")
"""Points whose TFLOP/s count recomputation (Narayanan et al. 2021 use 96*B*s*l*h^2...)."""


@dataclass(frozen=True, slots=True)
class PointResult:
    """One expressed point: predicted vs measured in the point's metric."""

    id: str
    metric: str
    unit: str
    measured: float
    predicted: float
    confidence: str

    @property
    def abs_error_pct(self) -> float:
        """``|predicted / measured - 1| * 100``."""
        return abs(self.predicted / self.measured - 1.0) * 100.0


@dataclass(frozen=True, slots=True)
class Unexpressed:
    """A point the model cannot express, and why."""

    id: str
    reason: str


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Predicted vs measured for every expressible point, and the summary errors."""

    results: tuple[PointResult, ...]
    unexpressed: tuple[Unexpressed, ...]
    median_abs_error_pct: float
    p90_abs_error_pct: float

    @property
    def total(self) -> int:
        """Points read."""
        return len(self.results) + len(self.unexpressed)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "results": [
                {
                    "id": r.id,
                    "metric": r.metric,
                    "unit": r.unit,
                    "measured": r.measured,
                    "predicted": r.predicted,
                    "abs_error_pct": r.abs_error_pct,
                    "confidence": r.confidence,
                }
                for r in self.results
            ],
            "unexpressed": [{"id": u.id, "reason": u.reason} for u in self.unexpressed],
            "expressed": len(self.results),
            "total": self.total,
            "median_abs_error_pct": self.median_abs_error_pct,
            "p90_abs_error_pct": self.p90_abs_error_pct,
        }


@dataclass(frozen=True, slots=True)
class _Expressed:
    scenario: Scenario
    gpu: GpuSpec
    output_key: str
    scale: float


class UnexpressibleError(Exception):
    """A measurement point states too little for a scenario; ``reason`` says what."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_SIZE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMG]i?B|B)\b", re.IGNORECASE)
_SIZE_UNITS = {"b": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "kb": 1e3, "mb": 1e6, "gb": 1e9}
_PARAMS_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([BT])\b")


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile ``q`` in [0, 100] (numpy's default method)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def parse_size_bytes(text: str) -> float | None:
    """``"16MiB"`` -> 16777216; ``"up to 128MiB"`` -> 134217728; None when no size."""
    match = _SIZE_RE.search(text)
    if match is None:
        return None
    return float(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]


def fabric_kind(text: str | None) -> FabricKind | None:
    """Fabric kind named by a point's free-text ``fabric``; None when not one of ours."""
    if text is None:
        return None
    t = text.lower()
    rules = (
        ("tcpxo", FabricKind.TCPXO),
        ("tcpx", FabricKind.TCPX),
        ("efa", FabricKind.EFA),
        ("roce", FabricKind.ROCE),
        ("infiniband", FabricKind.INFINIBAND),
        ("tcp", FabricKind.ETHERNET),
        ("ethernet", FabricKind.ETHERNET),
    )
    for word, kind in rules:
        if word in t:
            return kind
    return None


def _gpu(point: Mapping[str, Any], gpus: Sequence[GpuSpec]) -> GpuSpec:
    name = point.get("gpu")
    if not name:
        raise UnexpressibleError("GPU model not stated")
    base = re.sub(r"\(.*?\)", "", str(name)).strip()
    gpu = GpuIndex.of(gpus).spec(base)
    if gpu is None:
        raise UnexpressibleError(f"GPU {name!r} is not in the catalog")
    return gpu


def _cluster(point: Mapping[str, Any], interp: Mapping[str, Any]) -> dict[str, Any]:
    nodes = interp.get("nodes", point.get("nodes"))
    if nodes is None:
        raise UnexpressibleError("node count not stated")
    fabric_text = str(point.get("fabric") or "")
    lowered = fabric_text.lower()
    if "nvl72" in lowered:
        raise UnexpressibleError("multi-node NVLink domain (NVL72) is not a scale-out fabric")
    if nodes > 1 and ("sharp" in lowered or "collnet" in lowered):
        raise UnexpressibleError("in-network reduction (SHARP) is not modelled")
    cluster: dict[str, Any] = {
        "gpus_per_node": interp.get("gpus_per_node", point.get("gpus_per_node") or 8),
        "nodes": nodes,
    }
    if nodes > 1:
        kind = fabric_kind(point.get("fabric"))
        if kind is None:
            raise UnexpressibleError(f"fabric not stated or not modelled ({fabric_text!r})")
        if point.get("per_node_gbps") is None:
            raise UnexpressibleError("per-node bandwidth not stated")
        cluster["fabric"] = kind.value
        cluster["per_node_gbps"] = point["per_node_gbps"]
    return cluster


def _collective(point: Mapping[str, Any], interp: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    work = point["workload"]
    size: float | None = None
    raw = work.get("message_bytes", work.get("message"))
    if isinstance(raw, int | float):
        size = float(raw)
    elif isinstance(raw, str):
        size = parse_size_bytes(raw)
    if size is None:
        size = LARGE_MESSAGE_BYTES
    fabric_text = str(point.get("fabric") or "").lower()
    algo = str(work.get("algo", "")).lower()
    algorithm = interp.get("algorithm", "auto")
    if algo == "ring" or "nvls disabled" in fabric_text:
        algorithm = "ring"
    metric = str(point["metric"]).lower()
    if metric.startswith("time"):
        key = "time_s"
    elif metric.startswith(("busbw", "bandwidth")):
        key = "busbw_gbs"
    else:
        raise UnexpressibleError(f"metric {point['metric']!r} is not an nccl-tests output")
    workload = {
        "kind": "collective",
        "op": work.get("op", "all_reduce"),
        "message_bytes": size,
        "algorithm": algorithm,
    }
    return workload, key


def _params_from_name(name: str) -> float | None:
    match = _PARAMS_RE.search(name)
    if match is None:
        return None
    return float(match.group(1)) * (1e12 if match.group(2) == "T" else 1e9)


def _model(work: Mapping[str, Any]) -> dict[str, Any]:
    name = str(work.get("model", ""))
    known = dict(KNOWN_SHAPES.get(name.lower(), {}))
    for key in ("layers", "hidden", "heads", "vocab"):
        if key in work:
            known[key] = work[key]
    if name.upper().startswith(("GPT", "MT-NLG")):
        known.setdefault("vocab", _GPT_VOCAB)
        known.setdefault("tied_embeddings", True)
    if "params" not in known and "layers" in known and "hidden" in known:
        # Narayanan et al. 2021 eq. (2): P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)).
        depth, h, v = known["layers"], known["hidden"], known["vocab"]
        s = work.get("seq_len", 2048)
        known["params"] = 12 * depth * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * depth * h))
    if "params" not in known:
        params = _params_from_name(name)
        if params is None:
            raise UnexpressibleError("model size not stated")
        known["params"] = params
    return known


def _parallelism(point: Mapping[str, Any]) -> dict[str, Any]:
    work = point["workload"]
    text = str(work.get("parallelism", "")).lower()
    par: dict[str, Any] = {}
    if "fsdp" in text or "zero-3" in text:
        par["sharding"] = "fsdp"
    elif "model_parallel" in work:
        mp = int(work["model_parallel"])
        gpn = int(point.get("gpus_per_node") or 8)
        # Megatron keeps TP inside the node and pipelines the rest (Narayanan et al., Table 1).
        par["tp"], par["pp"] = min(mp, gpn), max(1, mp // gpn)
    elif not any(k in work for k in ("tp", "pp")):
        raise UnexpressibleError("parallel layout not stated")
    for key in ("tp", "pp", "cp", "vp", "dp"):
        if key in work:
            par[key] = work[key]
    return par


def _recompute(point: Mapping[str, Any]) -> str:
    work = point["workload"]
    text = str(work.get("recompute", "")).lower()
    if "selective" in text:
        return "selective"
    if text == "yes" or work.get("activation_ckpt") is True:
        return "full"
    if str(point["id"]).startswith((*_RECOMPUTE_FLOPS_SOURCES, "mtnlg-")):
        return "full"  # Narayanan et al. 2021 and MT-NLG train with full recomputation
    return "none"


def _training(point: Mapping[str, Any]) -> tuple[dict[str, Any], str, float]:
    work = point["workload"]
    if "seq_len" not in work:
        raise UnexpressibleError("sequence length not stated")
    if "global_batch" not in work:
        raise UnexpressibleError("global batch not stated")
    workload: dict[str, Any] = {
        "kind": "training",
        "model": _model(work),
        "seq_len": work["seq_len"],
        "global_batch": work["global_batch"],
        "micro_batch": work.get("mbs", 1),
        "precision": "fp8" if "fp8" in str(work.get("precision", "")).lower() else "bf16",
        "parallelism": _parallelism(point),
        "recompute": _recompute(point),
    }
    metric = str(point["metric"]).lower()
    scale = 1.0
    if metric.startswith(("step time", "iteration time")):
        key = "step_time_s"
    elif metric.startswith("tokens/s per gpu"):
        key = "tokens_per_s_per_gpu"
    elif metric.startswith("tflop/s per gpu"):
        key = "model_tflops_per_gpu"
        if (
            str(point["id"]).startswith(_RECOMPUTE_FLOPS_SOURCES)
            and workload["recompute"] == "full"
        ):
            scale = 4.0 / 3.0  # the source counts the recomputed forward pass
    else:
        raise UnexpressibleError(f"metric {point['metric']!r} has no absolute model output")
    return workload, key, scale


def express(point: Mapping[str, Any], gpus: Sequence[GpuSpec]) -> _Expressed:
    """Turn one measurement point into a scenario and the output to compare.

    Raises:
        UnexpressibleError: with the reason.
    """
    work = point.get("workload") or {}
    kind = work.get("type")
    if kind not in ("collective", "training"):
        raise UnexpressibleError(f"workload type {kind!r} has no scenario kind")
    value = point.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnexpressibleError(f"value {value!r} is a range or bound")
    if not math.isfinite(value) or value <= 0:
        raise UnexpressibleError(f"value {value!r} is not a positive measurement")
    interp = INTERPRETATIONS.get(str(point["id"]), {})
    gpu = _gpu(point, gpus)
    cluster = _cluster(point, interp)
    cluster["gpu"] = gpu.name
    scale = 1.0
    if kind == "collective":
        workload, key = _collective(point, interp)
        if str(point.get("unit")) == "us":
            scale = 1e6
    else:
        workload, key, scale = _training(point)
    try:
        scenario = parse_scenario({"cluster": cluster, "workload": workload})
    except InputError as exc:
        raise UnexpressibleError(f"inconsistent point: {exc}") from exc
    return _Expressed(scenario=scenario, gpu=gpu, output_key=key, scale=scale)


def check(
    measurements: Sequence[Mapping[str, Any]],
    gpus: Sequence[GpuSpec],
    calibration: Calibration,
) -> CheckReport:
    """Predicted vs measured for every point that can be expressed.

    Args:
        measurements: the ``points`` list of measurements.json.
        gpus: the GPU catalog.
        calibration: model constants.

    Returns:
        Per-point results, the unexpressed points with reasons, and the median and 90th
        percentile of the absolute percentage error over the expressed points.
    """
    results: list[PointResult] = []
    unexpressed: list[Unexpressed] = []
    for point in measurements:
        if not isinstance(point, Mapping):
            unexpressed.append(Unexpressed("?", f"not a JSON object: {point!r:.60}"))
            continue
        pid = str(point.get("id"))
        try:
            expressed = express(point, gpus)
            prediction = estimate(expressed.scenario, expressed.gpu, calibration).result
        except UnexpressibleError as exc:
            unexpressed.append(Unexpressed(pid, exc.reason))
            continue
        except InputError as exc:
            unexpressed.append(Unexpressed(pid, f"inconsistent point: {exc}"))
            continue
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            # A hand-edited file: a missing key or a value of the wrong type is reported per
            # point, like any other point the model cannot express.
            unexpressed.append(Unexpressed(pid, f"malformed point: {type(exc).__name__}: {exc}"))
            continue
        predicted = float(getattr(prediction, expressed.output_key)) * expressed.scale
        results.append(
            PointResult(
                id=pid,
                metric=str(point["metric"]),
                unit=str(point.get("unit")),
                measured=float(point["value"]),
                predicted=predicted,
                confidence=str(point.get("confidence")),
            )
        )
    errors = [r.abs_error_pct for r in results]
    return CheckReport(
        results=tuple(results),
        unexpressed=tuple(unexpressed),
        median_abs_error_pct=statistics.median(errors) if errors else 0.0,
        p90_abs_error_pct=percentile(errors, 90.0),
    )
