"""Check the model against published measurements (``data/measurements.json``).

Every structured point that states enough is turned into a scenario, predicted, and compared
in the point's own metric and unit. Points that cannot be expressed are listed with the reason.
The few rules that read more into a point than its fields say (``INTERPRETATIONS``,
``GPU_VARIANTS``) are written out here so a reviewer can audit them.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from clusterscout.domain.errors import InputError
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import GpuSpec
from clusterscout.model.calibration import Calibration, ErrorFigures
from clusterscout.model.compute import hardware_flops_per_token, model_flops_per_token
from clusterscout.model.estimate import cluster_spec, estimate, estimate_training_figures
from clusterscout.model.inputs import TrainingWorkload
from clusterscout.model.scenario import Scenario, parse_scenario
from clusterscout.model.training import step_breakdown, step_speed

LARGE_MESSAGE_BYTES = 8 * 2**30
"""Message size used for a 'large message' bus bandwidth when a point gives none (nccl-tests
sweeps usually end at 8-16 GiB, where busbw has reached its plateau)."""

GPU_VARIANTS: Mapping[str, tuple[str, str]] = {
    "H100-SXM-96GB-HBM2e-500W": (
        "H100-SXM-80GB",
        "Meta's H100 SXM with 96 GB HBM2e at a 500 W limit: same SM count and peak; the lower "
        "power limit is not modelled, so these points read slower than a 700 W H100 (they are "
        "reported, not fitted)",
    ),
    "H100-SXM-95GB-HBM2e-lowTDP": (
        "H100-SXM-80GB",
        "as H100-SXM-96GB-HBM2e-500W (same hosts; the page names it differently)",
    ),
    "A800-SXM4-80GB": (
        "A100-SXM-80GB",
        "the A100 SXM 80 GB with NVLink cut to 400 GB/s for export (NVIDIA A800 datasheet): the "
        "same SMs, clocks, HBM and peak; expressed with the A100's figures and a 400 GB/s "
        "scale-up link",
    ),
    "H800-SXM-80GB": (
        "H100-SXM-80GB",
        "the H100 SXM with NVLink cut to 400 GB/s for export (NVIDIA H800 datasheet): the same "
        "SMs, clocks, HBM and peak; expressed with the H100's figures and a 400 GB/s scale-up link",
    ),
}
"""GPU names of points that are variants of a catalog GPU, and why they are expressed as it."""

VARIANT_SCALE_UP_GBS: Mapping[str, float] = {"A800-SXM4-80GB": 400.0, "H800-SXM-80GB": 400.0}
"""Scale-up (NVLink) bandwidth of the variants whose only difference is a slower link."""

INTERPRETATIONS: Mapping[str, Mapping[str, Any]] = {
    "github.com/pytorch/torchtitan": {
        "fabric": "infiniband",
        "why": "400 Gb/s RDMA per GPU stated, RoCE or InfiniBand not: expressed as InfiniBand "
        "(the two kinds share latencies in the model and differ only in fitted bus efficiency)",
    },
    "trainy-whitefiber-2025": {
        "fabric": "infiniband",
        "why": "as github.com/pytorch/torchtitan: 400 Gb/s RDMA per GPU (CX-7) stated, the "
        "kind not",
    },
    "github.com/bigscience-workshop/bigscience": {
        "fabric": "infiniband",
        "why": "Omni-Path (4 x 100 Gbit/s per node) is not a catalog fabric; expressed as the "
        "InfiniBand kind, the RDMA fabric it descends from",
    },
    "huggingface.co/bigscience": {
        "fabric": "infiniband",
        "why": "as github.com/bigscience-workshop/bigscience (the same Jean Zay Omni-Path nodes)",
    },
    "mlperf-training-v5.1/cisco": {
        "fabric": "roce",
        "why": "eight 400 Gb/s BlueField-3/ConnectX-7 compute NICs per node on an Ethernet "
        "fabric (the submission's system description): NCCL runs RDMA over such NICs, so the "
        "fabric is read as RoCE, not as TCP Ethernet",
    },
    "mbridge2511-llama31-405b-fp8cs-b200-128": {
        "fabric": "infiniband",
        "why": "DGX B200 with 8 x 400 Gb/s ConnectX-7 stated, fabric kind not: NVIDIA's DGX "
        "B200 SuperPOD reference design uses InfiniBand",
    },
    "mcore-modelzoo-qwen3-235b-h100-256-intranode-ep8-pp32-a2a": {
        "vp": 2,
        "why": "the run uses 32 stages x 3 virtual stages = 96 chunks for 94 layers (Megatron's "
        "custom pipeline layout gives the embedding and the loss chunks of their own); the "
        "model splits layers evenly and cannot hold more chunks than layers, so the point is "
        "expressed with vp = 2 (the bubble changes by about 1% of the step)",
    },
    "arxiv.org/abs/2407.21783": {
        "stack": "megatron",
        "sharding": "zero2",
        "why": "Meta's in-house trainer is a tuned TP/CP/PP stack: expressed with the "
        "Megatron-class constants; its FSDP keeps the weights gathered between forward and "
        "backward (no reshard after forward, Llama 3 paper §3.3.2), so the data-parallel "
        "traffic is ZeRO-2-like, once per step, not per micro-batch",
    },
}
"""Facts applied to the points of a source group (or one point id) before expressing them."""

DGX_NETWORK: Mapping[str, Mapping[str, Any]] = {
    "H100-SXM-80GB": {
        "fabric": "infiniband",
        "per_node_gbps": 3200,
        "why": "NVIDIA's performance tables name the system (DGX H100) but not its network: a "
        "DGX H100 has eight single-port 400 Gb/s ConnectX-7 compute adapters (https://docs."
        "nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/"
        "latest/core-components.html) and the DGX SuperPOD joins them with a rail-aligned "
        "InfiniBand compute fabric (https://docs.nvidia.com/dgx-superpod/reference-architecture-"
        "scalable-infrastructure-h100/latest/network-fabrics.html)",
    },
    "B200-SXM-180GB": {
        "fabric": "infiniband",
        "per_node_gbps": 3200,
        "why": "as DGX H100: a DGX B200 has eight single-port 400 Gb/s ConnectX-7 compute "
        "adapters (the same BasePOD core-components page), on an InfiniBand compute fabric in "
        "NVIDIA's reference designs",
    },
}
"""Network of NVIDIA DGX systems, applied to MoE points of NVIDIA's own performance tables
(``DGX_SOURCES``) that name the system but not the fabric. GB200/GB300 rows are not: their
NVLink domain spans 72 GPUs, which the two-level model does not express."""

DGX_SOURCES = frozenset({"docs.nvidia.com/nemo", "docs.nvidia.com/nemo-framework"})
"""Source groups of NVIDIA's NeMo / Megatron-Bridge / AutoModel performance tables."""

_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "min": 60.0}
_BANDWIDTH_UNITS = {"GB/s": 1.0, "Gbit/s": 1 / 8}
_TRAINING_METRICS = {
    "step_time": "step_time_s",
    "tokens_per_s_per_gpu": "tokens_per_s_per_gpu",
    "tokens_per_s": "tokens_per_s_per_gpu",
    "model_tflops_per_gpu": "model_tflops_per_gpu",
    "mfu": "mfu",
}
_COLLECTIVE_METRICS = {"busbw": "busbw_gbs", "algbw": "algbw_gbs", "time": "time_s"}
_TIME_OUTPUTS = frozenset({"step_time_s", "time_s"})
_STACKS = ("megatron", "pytorch", "deepspeed")


def source_group(point: Mapping[str, Any]) -> str:
    """The publication a point belongs to, for held-out checks and weights.

    The point's own ``source_group`` when set; otherwise from ``source_url``: the repository
    (``github.com/owner/repo``) or the host and first path segment (``arxiv.org/abs`` keeps
    the paper id without its version). A point without URL is its own group.
    """
    explicit = point.get("source_group")
    if explicit:
        return str(explicit)
    url = urlsplit(str(point.get("source_url") or ""))
    parts = [p for p in url.path.split("/") if p]
    if not url.netloc:
        return str(point.get("id"))
    if url.netloc == "github.com":
        return "/".join([url.netloc, *parts[:2]])
    if url.netloc == "arxiv.org" and len(parts) >= 2:
        return f"arxiv.org/abs/{parts[1].split('v')[0]}"
    return "/".join([url.netloc, *parts[:1]])


@dataclass(frozen=True, slots=True)
class PointResult:
    """One expressed point: predicted vs measured in the point's metric and unit.

    Attributes:
        speed_metric: True when a larger value is faster (throughput, bandwidth), False for
            times; sets the sign of ``signed_error_pct``.
        stack: the training stack used, None for collectives.
        group: the source group (``source_group``).
        moe: a mixture-of-experts training point (reported and fitted apart from dense).
        gpu: the canonical GPU the point was expressed on.
    """

    id: str
    metric: str
    unit: str
    measured: float
    predicted: float
    confidence: str
    speed_metric: bool = True
    stack: str | None = None
    group: str = ""
    moe: bool = False
    gpu: str = ""

    @property
    def abs_error_pct(self) -> float:
        """``|predicted / measured - 1| * 100``."""
        return abs(self.predicted / self.measured - 1.0) * 100.0

    @property
    def signed_error_pct(self) -> float:
        """Predicted over measured speed, minus 1, in %: positive means optimistic."""
        ratio = self.predicted / self.measured
        return ((ratio if self.speed_metric else 1.0 / ratio) - 1.0) * 100.0


@dataclass(frozen=True, slots=True)
class Unexpressed:
    """A point the model cannot express, and why."""

    id: str
    reason: str


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile ``q`` in [0, 100] (numpy's default method)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summarise(results: Iterable[PointResult]) -> ErrorFigures:
    """Median and p90 absolute error, share of optimistic points and median signed error."""
    rows = list(results)
    errors = [r.abs_error_pct for r in rows]
    signed = [r.signed_error_pct for r in rows]
    return ErrorFigures(
        points=len(rows),
        median_abs_error_pct=percentile(errors, 50.0),
        p90_abs_error_pct=percentile(errors, 90.0),
        optimistic_share=sum(s > 0 for s in signed) / len(rows) if rows else 0.0,
        median_signed_error_pct=percentile(signed, 50.0),
    )


def figures_by_stack(results: Iterable[PointResult]) -> dict[str, ErrorFigures]:
    """``summarise`` per training stack (collective points have none and are left out)."""
    rows = list(results)
    return {
        stack: summarise(r for r in rows if r.stack == stack)
        for stack in _STACKS
        if any(r.stack == stack for r in rows)
    }


def figures_by_family(
    results: Iterable[PointResult], calibration: Calibration
) -> dict[str, ErrorFigures]:
    """``summarise`` per GPU family of the training points, in the calibration's family order
    (collective points are left out)."""
    by_family: dict[str, list[PointResult]] = {}
    for r in results:
        if r.stack is not None:
            by_family.setdefault(calibration.family_for(r.gpu).name, []).append(r)
    order = [*calibration.families, calibration.default_family.name]
    return {name: summarise(by_family[name]) for name in order if name in by_family}


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

    @property
    def dense_results(self) -> tuple[PointResult, ...]:
        """Collective and dense training points (the figures and fit of issue 8)."""
        return tuple(r for r in self.results if not r.moe)

    @property
    def moe_results(self) -> tuple[PointResult, ...]:
        """Mixture-of-experts training points, reported apart."""
        return tuple(r for r in self.results if r.moe)

    @property
    def figures(self) -> ErrorFigures:
        """Error figures over the expressed dense and collective points."""
        return summarise(self.dense_results)

    @property
    def moe_figures(self) -> ErrorFigures:
        """Error figures over the expressed MoE points (in-sample)."""
        return summarise(self.moe_results)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        overall = self.figures
        return {
            "results": [
                {
                    "id": r.id,
                    "metric": r.metric,
                    "unit": r.unit,
                    "measured": r.measured,
                    "predicted": r.predicted,
                    "abs_error_pct": r.abs_error_pct,
                    "signed_error_pct": r.signed_error_pct,
                    "stack": r.stack,
                    "source_group": r.group,
                    "confidence": r.confidence,
                    "moe": r.moe,
                    "gpu": r.gpu,
                }
                for r in self.results
            ],
            "unexpressed": [{"id": u.id, "reason": u.reason} for u in self.unexpressed],
            "expressed": len(self.results),
            "total": self.total,
            "median_abs_error_pct": self.median_abs_error_pct,
            "p90_abs_error_pct": self.p90_abs_error_pct,
            "optimistic_share": overall.optimistic_share,
            "median_signed_error_pct": overall.median_signed_error_pct,
            "moe": _figures_dict(self.moe_figures),
        }


def _figures_dict(fig: ErrorFigures) -> dict[str, Any]:
    return {
        "points": fig.points,
        "median_abs_error_pct": fig.median_abs_error_pct,
        "p90_abs_error_pct": fig.p90_abs_error_pct,
        "optimistic_share": fig.optimistic_share,
        "median_signed_error_pct": fig.median_signed_error_pct,
    }


@dataclass(frozen=True, slots=True)
class RatioResult:
    """A published same-benchmark speed ratio of two GPU families against the model's.

    Attributes:
        id: the ratio's id (``ratios`` of measurements.json).
        benchmark: what ran on both GPUs.
        gpu_a: the numerator point's GPU; ``gpu_b`` the denominator's.
        published: the published speed ratio a/b per GPU.
        predicted: the model's ratio for the same two points.
        confidence: the ratio record's confidence.
    """

    id: str
    benchmark: str
    gpu_a: str
    gpu_b: str
    published: float
    predicted: float
    confidence: str = ""

    @property
    def error_pct(self) -> float:
        """Predicted over published ratio minus 1, in % (positive: the model favours ``a``)."""
        return (self.predicted / self.published - 1.0) * 100.0


def _speed_factor(row: PointResult) -> float:
    """Predicted over measured speed of one point (1 + its signed error)."""
    return 1.0 + row.signed_error_pct / 100.0


def ratio_checks(
    ratios: Sequence[Mapping[str, Any]], results: Sequence[PointResult]
) -> tuple[tuple[RatioResult, ...], tuple[Unexpressed, ...]]:
    """The model's ratio for each published same-benchmark ratio whose two points it expresses.

    Formula: ``predicted = published * s_a / s_b`` with ``s`` each point's predicted over
    measured speed: the model's speed ratio of the two points, on the published scale (the
    two points' measured values reproduce the published ratio up to rounding).

    Returns:
        The ratios checked, and those skipped with the reason (a point not expressed).
    """
    rows = {r.id: r for r in results}
    checked: list[RatioResult] = []
    skipped: list[Unexpressed] = []
    for ratio in ratios:
        rid = str(ratio.get("id"))
        a, b = rows.get(str(ratio.get("a"))), rows.get(str(ratio.get("b")))
        value = ratio.get("value")
        if a is None or b is None:
            missing = ratio.get("a") if a is None else ratio.get("b")
            skipped.append(Unexpressed(rid, f"point {missing} is not expressed"))
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            skipped.append(Unexpressed(rid, f"value {value!r} is not a positive ratio"))
            continue
        checked.append(
            RatioResult(
                id=rid,
                benchmark=str(ratio.get("benchmark", "")),
                gpu_a=a.gpu,
                gpu_b=b.gpu,
                published=float(value),
                predicted=float(value) * _speed_factor(a) / _speed_factor(b),
                confidence=str(ratio.get("confidence", "")),
            )
        )
    return tuple(checked), tuple(skipped)


@dataclass(frozen=True, slots=True)
class Expressed:
    """A point as a scenario: the output to read and how to bring it to the point's unit.

    ``predicted = output * scale``.
    """

    scenario: Scenario
    gpu: GpuSpec
    output_key: str
    scale: float
    stack: str | None
    moe: bool = False


class UnexpressibleError(Exception):
    """A measurement point states too little for a scenario; ``reason`` says what."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def interpretation(point: Mapping[str, Any]) -> Mapping[str, Any]:
    """The audited facts applied to ``point`` (by id, else by source group), or none."""
    pid = str(point.get("id"))
    found = INTERPRETATIONS.get(pid) or INTERPRETATIONS.get(source_group(point), {})
    if not found and is_moe_point(point) and source_group(point) in DGX_SOURCES:
        return DGX_NETWORK.get(str(point.get("gpu")), {})
    return found


def is_moe_point(point: Mapping[str, Any]) -> bool:
    """True for a mixture-of-experts training point (experts, active params or ep > 1)."""
    work = point.get("workload") or {}
    if not isinstance(work, Mapping) or work.get("type") != "training":
        return False
    raw = work.get("model") or {}
    par = work.get("parallelism") or {}
    return bool(raw.get("experts") or raw.get("active_params") or (par.get("ep") or 1) > 1)


def _gpu(point: Mapping[str, Any], gpus: Sequence[GpuSpec]) -> GpuSpec:
    name = point.get("gpu")
    if not name:
        raise UnexpressibleError("GPU model not stated")
    catalog = GPU_VARIANTS.get(str(name), (str(name), ""))[0]
    gpu = GpuIndex.of(gpus).spec(catalog)
    if gpu is None:
        raise UnexpressibleError(f"GPU {point['gpu']!r} is not in the catalog")
    link = VARIANT_SCALE_UP_GBS.get(str(name))
    return gpu if link is None else replace(gpu, scale_up_gbs=link)


def _cluster(point: Mapping[str, Any], interp: Mapping[str, Any]) -> dict[str, Any]:
    nodes = point.get("nodes")
    if nodes is None:
        raise UnexpressibleError("node count not stated")
    gpn = point.get("gpus_per_node")
    if gpn is None:
        raise UnexpressibleError("GPUs per node not stated")
    if point.get("nvlink_domain_gpus"):
        raise UnexpressibleError("multi-node NVLink domain (NVL72) is not a scale-out fabric")
    cluster: dict[str, Any] = {"gpus_per_node": gpn, "nodes": nodes}
    if nodes > 1:
        fabric = interp.get("fabric", point.get("fabric"))
        if fabric is None:
            raise UnexpressibleError("fabric not stated or not a modelled kind")
        gbps = interp.get("per_node_gbps", point.get("per_node_gbps"))
        if gbps is None:
            raise UnexpressibleError("per-node bandwidth not stated")
        cluster["fabric"] = fabric
        cluster["per_node_gbps"] = gbps
    return cluster


def _unit_factor(table: Mapping[str, float], unit: str, metric: str) -> float:
    if unit not in table:
        raise UnexpressibleError(f"unit {unit!r} of {metric} is not converted")
    return table[unit]


def _collective(
    point: Mapping[str, Any], work: Mapping[str, Any]
) -> tuple[dict[str, Any], str, float]:
    if work.get("in_network_reduction"):
        raise UnexpressibleError("in-network reduction (SHARP) is not modelled")
    metric = str(point.get("metric"))
    if metric not in _COLLECTIVE_METRICS:
        raise UnexpressibleError(f"metric {metric!r} is not an nccl-tests output")
    key = _COLLECTIVE_METRICS[metric]
    unit = str(point.get("unit"))
    if key == "time_s":
        scale = 1.0 / _unit_factor(_TIME_UNITS, unit, metric)
    else:
        scale = 1.0 / _unit_factor(_BANDWIDTH_UNITS, unit, metric)
    size = work.get("message_bytes")
    workload = {
        "kind": "collective",
        "op": work.get("op") or "all_reduce",
        "message_bytes": size if size is not None else LARGE_MESSAGE_BYTES,
        "algorithm": work.get("algorithm") or "auto",
    }
    return workload, key, scale


def dense_layers_of(freq: Any, layers: int) -> int:
    """Dense layers from a point's ``moe_layer_freq``.

    An integer ``k`` means every k-th layer is MoE (``layers - layers // k`` dense); Megatron's
    list pattern ``([0]*N+[1]*M)`` means the first ``N`` are dense.

    >>> dense_layers_of(1, 94), dense_layers_of(2, 48), dense_layers_of("([0]*3+[1]*58)", 61)
    (0, 24, 3)
    """
    if freq is None:
        return 0
    if isinstance(freq, int) and not isinstance(freq, bool) and freq >= 1:
        return layers - layers // freq
    found = re.fullmatch(r"\(?\[0\]\*(\d+)\s*\+\s*\[1\]\*(\d+)\)?", str(freq).strip())
    if found is None:
        raise UnexpressibleError(f"moe_layer_freq {freq!r} is not a form the model reads")
    return int(found.group(1))


def _moe_model(raw: Mapping[str, Any], model: dict[str, Any]) -> None:
    """Copy a point's MoE fields into the scenario's model (names of the scenario JSON)."""
    if not raw.get("experts"):
        raise UnexpressibleError("MoE point without its expert count")
    if raw.get("top_k") is None or model.get("layers") is None:
        raise UnexpressibleError("MoE point without top-k or layers")
    model["experts"] = raw["experts"]
    model["top_k"] = raw["top_k"]
    if raw.get("expert_ffn_hidden") is not None:
        model["expert_ffn"] = raw["expert_ffn_hidden"]
    model["shared_experts"] = raw.get("shared_experts") or 0
    model["dense_layers"] = dense_layers_of(raw.get("moe_layer_freq"), int(model["layers"]))


def _model(work: Mapping[str, Any]) -> dict[str, Any]:
    raw = work.get("model") or {}
    keys = ("params", "layers", "hidden", "heads", "kv_heads", "vocab", "ffn_hidden", "head_dim")
    model = {k: raw[k] for k in keys if raw.get(k) is not None}
    if raw.get("experts") or raw.get("active_params"):
        _moe_model(raw, model)
    if raw.get("tied_embeddings") is not None:
        model["tied_embeddings"] = raw["tied_embeddings"]
    if "params" not in model and {"layers", "hidden", "vocab"} <= set(model):
        # Narayanan et al. 2021 eq. (2): P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)).
        depth, h, v = model["layers"], model["hidden"], model["vocab"]
        s = work.get("seq_len") or 2048
        model["params"] = 12 * depth * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * depth * h))
    if "params" not in model:
        raise UnexpressibleError("model size not stated")
    return model


def _stack(work: Mapping[str, Any], interp: Mapping[str, Any]) -> str:
    stack = str(interp.get("stack", work.get("stack") or "megatron"))
    if stack not in _STACKS:
        raise UnexpressibleError(f"stack {stack!r} has no fitted constants")
    return stack


def _training(
    point: Mapping[str, Any], work: Mapping[str, Any], interp: Mapping[str, Any]
) -> tuple[dict[str, Any], str, str]:
    for field in ("seq_len", "global_batch"):
        if work.get(field) is None:
            raise UnexpressibleError(f"{field.replace('_', ' ')} not stated")
    par = work.get("parallelism")
    if not par:
        raise UnexpressibleError("parallel layout not stated")
    precision = work.get("precision") or "bf16"
    if precision not in ("bf16", "fp16", "fp8"):
        raise UnexpressibleError(f"precision {precision!r} is not modelled")
    layout = {k: par[k] for k in ("tp", "pp", "cp", "vp", "dp", "ep") if par.get(k) is not None}
    if "vp" in interp:
        layout["vp"] = interp["vp"]
    layout["sharding"] = interp.get("sharding", par.get("sharding") or "none")
    stack = _stack(work, interp)
    workload = {
        "kind": "training",
        "model": _model(work),
        "seq_len": work["seq_len"],
        "global_batch": work["global_batch"],
        "micro_batch": work.get("micro_batch") or 1,
        "precision": precision,
        "parallelism": layout,
        "recompute": work.get("recompute") or "none",
        "stack": stack,
        "attention": work.get("attention") or "flash",
    }
    workload.update(_routing(work))
    if work.get("job"):
        workload["job"] = work["job"]
        if work.get("lora_rank") is not None:
            workload["lora_rank"] = work["lora_rank"]
    metric = str(point.get("metric"))
    if metric not in _TRAINING_METRICS:
        raise UnexpressibleError(f"metric {metric!r} has no absolute model output")
    return workload, _TRAINING_METRICS[metric], stack


def _routing(work: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario's MoE routing from a point's ``workload.moe`` (nothing for dense points).

    Forced balance reads as ``balanced``; ``dropless: false`` as ``capacity`` with its stated
    factor (1 when unstated: each expert takes its fair share); anything else as dropless.
    """
    moe = work.get("moe")
    raw = work.get("model") or {}
    if not isinstance(moe, Mapping) or not (raw.get("experts") or 0) > 1:
        return {}
    if moe.get("force_balanced"):
        return {"routing": "balanced"}
    if moe.get("dropless") is False:
        factor = moe.get("capacity_factor")
        numeric = isinstance(factor, int | float) and not isinstance(factor, bool)
        return {"routing": "capacity", "capacity_factor": factor if numeric else 1.0}
    return {"routing": "dropless"}


def _training_scale(point: Mapping[str, Any], scenario: Scenario, work: TrainingWorkload) -> float:
    """Factor from the model's output to the point's metric and unit."""
    metric, unit = str(point["metric"]), str(point.get("unit"))
    if metric == "step_time":
        return 1.0 / _unit_factor(_TIME_UNITS, unit, metric)
    if metric == "tokens_per_s":
        return float(scenario.cluster.gpus)
    if metric == "mfu":
        return 100.0 if unit == "%" else 1.0
    if metric == "model_tflops_per_gpu" and point.get("flops_include_recompute"):
        # the source counts the recomputed forward pass: compare hardware FLOPs
        hw = hardware_flops_per_token(work.model, work.seq_len, work.recompute)
        return hw / model_flops_per_token(work.model, work.seq_len)
    return 1.0


def express(point: Mapping[str, Any], gpus: Sequence[GpuSpec]) -> Expressed:
    """Turn one measurement point into a scenario and the output to compare.

    Raises:
        UnexpressibleError: with the reason.
    """
    work = point.get("workload") or {}
    kind = work.get("type")
    if kind == "inference":
        raise UnexpressibleError("inference point: checked in the serving section below")
    if kind not in ("collective", "training"):
        raise UnexpressibleError(f"workload type {kind!r} has no scenario kind")
    value = point.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnexpressibleError(f"value {value!r} is a range or bound")
    if not math.isfinite(value) or value <= 0:
        raise UnexpressibleError(f"value {value!r} is not a positive measurement")
    interp = interpretation(point)
    gpu = _gpu(point, gpus)
    cluster = _cluster(point, interp)
    cluster["gpu"] = gpu.name
    stack: str | None = None
    if kind == "collective":
        workload, key, scale = _collective(point, work)
    else:
        workload, key, stack = _training(point, work, interp)
        scale = 1.0
    try:
        scenario = parse_scenario({"cluster": cluster, "workload": workload})
    except InputError as exc:
        raise UnexpressibleError(f"inconsistent point: {exc}") from exc
    if isinstance(scenario.workload, TrainingWorkload):
        scale = _training_scale(point, scenario, scenario.workload)
    moe = is_moe_point(point)
    return Expressed(scenario=scenario, gpu=gpu, output_key=key, scale=scale, stack=stack, moe=moe)


_STEP_OUTPUTS = frozenset({"step_time_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu"})


def predict(expressed: Expressed, calibration: Calibration) -> float:
    """The model's value for an expressed point, in the point's metric and unit.

    A training point whose metric follows from the step time alone skips the rest of the
    estimate (memory, scaling efficiency): the same numbers, at half the cost, which the
    calibration's thousands of refits need.
    """
    work = expressed.scenario.workload
    if isinstance(work, TrainingWorkload) and expressed.output_key in _STEP_OUTPUTS:
        estimate_training_figures(work, expressed.gpu)
        cluster = cluster_spec(expressed.scenario.cluster, expressed.gpu)
        step = step_breakdown(work, cluster, calibration).total_s
        if expressed.output_key == "step_time_s":
            return step * expressed.scale
        value = getattr(step_speed(work, cluster, step), expressed.output_key)
        return float(value) * expressed.scale
    result = estimate(expressed.scenario, expressed.gpu, calibration).result
    return float(getattr(result, expressed.output_key)) * expressed.scale


def result_for(point: Mapping[str, Any], expressed: Expressed, predicted: float) -> PointResult:
    """The comparison row of one expressed point."""
    return PointResult(
        id=str(point["id"]),
        metric=str(point["metric"]),
        unit=str(point.get("unit")),
        measured=float(point["value"]),
        predicted=predicted,
        confidence=str(point.get("confidence")),
        speed_metric=expressed.output_key not in _TIME_OUTPUTS,
        stack=expressed.stack,
        group=source_group(point),
        moe=expressed.moe,
        gpu=expressed.gpu.name,
    )


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
            predicted = predict(expressed, calibration)
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
        results.append(result_for(point, expressed, predicted))
    # the headline figures stay those of the dense and collective points (MoE reported apart)
    errors = [r.abs_error_pct for r in results if not r.moe]
    return CheckReport(
        results=tuple(results),
        unexpressed=tuple(unexpressed),
        median_abs_error_pct=statistics.median(errors) if errors else 0.0,
        p90_abs_error_pct=percentile(errors, 90.0),
    )


REFERENCE_SHAPES: Mapping[str, tuple[Mapping[str, Any], int]] = {
    "Llama-3 8B": (
        {
            "params": 8.03e9,
            "layers": 32,
            "hidden": 4096,
            "heads": 32,
            "kv_heads": 8,
            "vocab": 128256,
            "ffn_hidden": 14336,
        },
        4,
    ),
    "Llama-3 70B": (
        {
            "params": 70.6e9,
            "layers": 80,
            "hidden": 8192,
            "heads": 64,
            "kv_heads": 8,
            "vocab": 128256,
            "ffn_hidden": 28672,
        },
        8,
    ),
}
"""The reference jobs of the cross-GPU check (shape, nodes of 8 GPUs): Meta's Llama 3 shapes,
BF16, sequence 8,192, 256 sequences per step, InfiniBand at 3,200 Gbit/s per node, the
scenario's default layout (data parallel)."""

REFERENCE_PAIRS: tuple[tuple[str, str], ...] = (
    ("H100-SXM-80GB", "A100-SXM-80GB"),
    ("H200-SXM-141GB", "H100-SXM-80GB"),
    ("B200-SXM-180GB", "H100-SXM-80GB"),
    ("MI300X-192GB", "H100-SXM-80GB"),
)
"""GPU pairs whose per-GPU speed ratio the check prints for the reference jobs."""


@dataclass(frozen=True, slots=True)
class ReferenceRatio:
    """The model's per-GPU speed ratio of two GPUs on one reference job under one stack."""

    job: str
    stack: str
    gpu_a: str
    gpu_b: str
    ratio: float
    calibrated_a: bool
    calibrated_b: bool


def reference_ratios(
    gpus: Sequence[GpuSpec], calibration: Calibration
) -> tuple[ReferenceRatio, ...]:
    """The same job predicted on two GPU families, for every reference job, stack and pair.

    The stack scales every family's level by one factor, so a pair's ratio moves between
    stacks only through communication (which weighs more on the faster GPU).
    """
    index = GpuIndex.of(gpus)
    out = []
    for job, (shape, nodes) in REFERENCE_SHAPES.items():
        for stack in _STACKS:
            speed: dict[str, float] = {}
            for a, b in REFERENCE_PAIRS:
                for name in (a, b):
                    gpu = index.spec(name)
                    if name not in speed and gpu is not None:
                        speed[name] = _reference_speed(gpu, shape, nodes, stack, calibration)
                if a in speed and b in speed:
                    out.append(
                        ReferenceRatio(
                            job,
                            stack,
                            a,
                            b,
                            speed[a] / speed[b],
                            calibration.family_for(a).calibrated,
                            calibration.family_for(b).calibrated,
                        )
                    )
    return tuple(out)


def _reference_speed(
    gpu: GpuSpec, shape: Mapping[str, Any], nodes: int, stack: str, calibration: Calibration
) -> float:
    scenario = parse_scenario(
        {
            "cluster": {
                "gpu": gpu.name,
                "gpus_per_node": 8,
                "nodes": nodes,
                "fabric": "infiniband",
                "per_node_gbps": 3200,
                "gpudirect_rdma": True,
            },
            "workload": {
                "kind": "training",
                "model": dict(shape),
                "seq_len": 8192,
                "global_batch": 256,
                "precision": "bf16",
                "stack": stack,
            },
        }
    )
    work = scenario.workload
    if not isinstance(work, TrainingWorkload):  # pragma: no cover - built as training above
        msg = "the reference job is a training scenario"
        raise TypeError(msg)
    cluster = cluster_spec(scenario.cluster, gpu)
    step = step_breakdown(work, cluster, calibration).total_s
    return step_speed(work, cluster, step).tokens_per_s_per_gpu
