"""Inference sizing: the smallest replica per GPU model, decode speed, time to first token,
nodes for a target, and how much serving evidence stands behind each GPU's figures."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from clusterscout.domain.errors import InputError
from clusterscout.domain.models import GpuSpec
from clusterscout.domain.units import GIB, SECONDS_PER_HOUR, bytes_to_gib
from clusterscout.model.calibration import Calibration, InferenceCalibration
from clusterscout.model.inference import (
    ServingLayout,
    decode_step_s,
    hardware_for,
    kv_bytes_per_token,
    peak_serving_tflops,
    prefill_s,
    serving_memory,
    weight_bytes,
)
from clusterscout.model.inputs import ModelShape, Precision
from clusterscout.model.planner.layouts import REFERENCE_NODE_GPUS, choose_gpus
from clusterscout.model.planner.reasons import SERVING_ASSUMPTIONS, ExclusionReason
from clusterscout.model.planner.request import (
    MAX_CONCURRENCY,
    MAX_PLAN_NODES,
    MAX_SEQ_LEN,
    MAX_TARGET_TOKENS_PER_S,
    PlanRequest,
    model_for,
)
from clusterscout.model.planner.results import (
    MIN_SERVING_POINTS,
    Exclusion,
    GpuVerdict,
    MemoryArithmetic,
    PlanOffer,
    PlanResult,
    ServingOption,
    ServingPlan,
    ServingVerdict,
)

_TP_CHOICES: Final = (1, 2, 4, 8)
SPOT_TIER: Final = "spot"


def _bounded(name: str, value: float | None, default: float, top: float) -> float:
    if value is None:
        return default
    if not 1 <= value <= top:
        raise InputError(name, f"must be between 1 and {top:,.0f}")
    return value


def layouts(gpus_per_node: int, max_gpus: int, layers: int) -> list[ServingLayout]:
    """Replica layouts from the fewest GPUs up: TP inside one node, then PP across nodes.

    >>> [(x.tp, x.pp) for x in layouts(8, 32, 80)]
    [(1, 1), (2, 1), (4, 1), (8, 1), (8, 2), (8, 4)]
    """
    out = [ServingLayout(tp, 1) for tp in _TP_CHOICES if tp <= min(gpus_per_node, max_gpus)]
    top = max((x.tp for x in out), default=1)
    pp = 2
    while top * pp <= max_gpus and pp <= layers:
        out.append(ServingLayout(top, pp))
        pp *= 2
    return out


def smallest_layout(
    model: ModelShape,
    precision: Precision,
    context: int,
    concurrency: int,
    gpu: GpuSpec,
    gpus_per_node: int,
    max_nodes: int,
    usable_fraction: float,
) -> ServingLayout | None:
    """The replica with the fewest GPUs whose weights and KV cache fit, or None."""
    for layout in layouts(gpus_per_node, gpus_per_node * max_nodes, model.layers):
        memory = serving_memory(
            model, precision, context, concurrency, layout, gpu, usable_fraction
        )
        if memory.fits:
            return layout
    return None


def _servable(gpu: GpuSpec, precision: Precision) -> bool:
    return gpu.hbm_tbps is not None and peak_serving_tflops(gpu, precision) is not None


@dataclass(frozen=True, slots=True)
class _Replica:
    """One sized replica: its layout, decode tokens/s and time to first token (s)."""

    layout: ServingLayout
    tokens_per_s: float
    ttft_s: float


class _Sizing:
    """One request's fixed inputs, so each GPU model and offer is sized the same way."""

    def __init__(
        self,
        request: PlanRequest,
        model: ModelShape,
        context: int,
        calibration: Calibration,
        cal: InferenceCalibration,
    ) -> None:
        self.request = request
        self.model = model
        self.context = context
        self.concurrency = int(_bounded("concurrency", request.concurrency, 1, MAX_CONCURRENCY))
        self.calibration = calibration
        self.cal = cal

    def evidence(self, gpu: GpuSpec) -> tuple[int, bool]:
        """Serving points behind ``gpu`` and whether they are enough to call it calibrated."""
        points = self.cal.evidence_for(gpu.name)
        return points, points >= MIN_SERVING_POINTS

    def replica(self, gpu: GpuSpec, gpus_per_node: int, usable: float) -> _Replica | None:
        layout = smallest_layout(
            self.model,
            self.request.precision,
            self.context,
            self.concurrency,
            gpu,
            gpus_per_node,
            self.request.max_nodes,
            usable,
        )
        if layout is None:
            return None
        hardware = hardware_for(gpu, self.calibration)
        step = decode_step_s(
            self.model,
            self.request.precision,
            hardware,
            layout,
            self.concurrency,
            self.context,
            self.cal,
        )
        # Time to first token: one prompt that fills the context, prefilled alone.
        ttft = prefill_s(
            self.model, self.request.precision, hardware, layout, 1, self.context, self.cal
        )
        return _Replica(layout, self.concurrency / step, ttft)

    def replicas(self, tokens_per_s: float) -> int:
        target = self.request.target_tokens_per_s
        return max(1, math.ceil(target / tokens_per_s)) if target else 1


def _per_million(usd_per_hour: float, tokens_per_s: float) -> float:
    return usd_per_hour / (tokens_per_s * SECONDS_PER_HOUR) * 1e6


def _verdict(
    sizing: _Sizing, gpu: GpuSpec, offers: Sequence[PlanOffer], usable: float
) -> ServingVerdict:
    found = sizing.replica(gpu, REFERENCE_NODE_GPUS, usable)
    points, calibrated = sizing.evidence(gpu)
    if found is None:
        return ServingVerdict(
            gpu=gpu.name,
            memory_gib=gpu.memory_gib,
            tp=None,
            pp=None,
            gpus_per_replica=None,
            nodes_per_replica=None,
            weights_gib_per_gpu=None,
            kv_cache_gib_per_gpu=None,
            tokens_per_s_per_replica=None,
            replicas=None,
            nodes=None,
            tokens_per_s=None,
            serving_points=points,
            calibrated=calibrated,
        )
    layout, tps = found.layout, found.tokens_per_s
    memory = serving_memory(
        sizing.model,
        sizing.request.precision,
        sizing.context,
        sizing.concurrency,
        layout,
        gpu,
        usable,
    )
    replicas = sizing.replicas(tps)
    nodes = math.ceil(replicas * layout.gpus / REFERENCE_NODE_GPUS)
    priced = [o for o in offers if o.usd_per_gpu_hour is not None]
    cheapest = min(priced, key=lambda o: o.usd_per_gpu_hour or 0.0) if priced else None
    per_hour = (
        (cheapest.usd_per_gpu_hour or 0.0) * nodes * REFERENCE_NODE_GPUS if cheapest else None
    )
    return ServingVerdict(
        gpu=gpu.name,
        memory_gib=gpu.memory_gib,
        tp=layout.tp,
        pp=layout.pp,
        gpus_per_replica=layout.gpus,
        nodes_per_replica=math.ceil(layout.gpus / REFERENCE_NODE_GPUS),
        weights_gib_per_gpu=memory.weights_gib,
        kv_cache_gib_per_gpu=memory.kv_cache_gib,
        tokens_per_s_per_replica=tps,
        replicas=replicas,
        nodes=nodes,
        tokens_per_s=tps * replicas,
        usd_per_hour=per_hour,
        usd_per_million_tokens=_per_million(per_hour, tps * replicas) if per_hour else None,
        offer_id=cheapest.offer_id if cheapest else None,
        ttft_s=found.ttft_s,
        serving_points=points,
        calibrated=calibrated,
    )


def _option(
    sizing: _Sizing, offer: PlanOffer, gpu: GpuSpec, usable: float
) -> ServingOption | ExclusionReason:
    per_node = offer.gpus_per_node or 0
    found = sizing.replica(gpu, per_node, usable)
    if found is None:
        return ExclusionReason.DOES_NOT_FIT
    layout, tps = found.layout, found.tokens_per_s
    replicas = sizing.replicas(tps)
    nodes = math.ceil(replicas * layout.gpus / per_node)
    if nodes > 1 and (offer.fabric is None or offer.per_node_gbps is None):
        return (
            ExclusionReason.UNKNOWN_FABRIC if offer.fabric is None else ExclusionReason.UNKNOWN_GBPS
        )
    if nodes > 1 and offer.price_tier == SPOT_TIER and not sizing.request.allow_spot:
        return ExclusionReason.SPOT_MULTI_NODE
    if nodes > min(sizing.request.max_nodes, offer.max_nodes or sizing.request.max_nodes):
        return ExclusionReason.TOO_SMALL
    per_hour = (offer.usd_per_gpu_hour or 0.0) * nodes * per_node
    points, calibrated = sizing.evidence(gpu)
    return ServingOption(
        offer=offer,
        nodes=nodes,
        tp=layout.tp,
        pp=layout.pp,
        replicas=replicas,
        tokens_per_s=tps * replicas,
        usd_per_hour=per_hour,
        usd_per_million_tokens=_per_million(per_hour, tps * replicas),
        ttft_s=found.ttft_s,
        serving_points=points,
        calibrated=calibrated,
    )


def plan_serving(
    request: PlanRequest,
    offers: Sequence[PlanOffer],
    gpus: Sequence[GpuSpec],
    calibration: Calibration,
) -> PlanResult:
    """Size serving ``request``'s model: per GPU model and per offer.

    Per GPU model (8-GPU nodes): the replica with the fewest GPUs that holds the weights and
    the KV cache of ``concurrency`` sequences of ``context`` tokens (TP inside a node, PP
    across nodes), its decode tokens/s at the full context and its time to first token for
    a prompt that fills the context (``clusterscout.model.inference``), the replicas and nodes
    a target tokens/s needs, and the cost per hour and per million output tokens at the
    cheapest price of that GPU. Per offer: the same on its own node size, if its reach allows.
    Each answer carries how many serving points stand behind its GPU; offers on GPUs with
    fewer than ``MIN_SERVING_POINTS`` rank after every calibrated one (then by cost).
    Training inputs (tokens, steps, batch, deadline, budget) do not apply and are ignored.

    Raises:
        InputError: naming the field at fault.
    """
    if request.lora_rank is not None:
        raise InputError("lora_rank", "applies only to the lora and qlora jobs")
    if not 1 <= request.max_nodes <= MAX_PLAN_NODES:
        raise InputError("max_nodes", f"must be between 1 and {MAX_PLAN_NODES:,}")
    cal = calibration.inference
    if cal is None:
        raise InputError("job", "this server's calibration has no inference constants")
    model, seq, _ = model_for(request)
    context = int(_bounded("context", request.context, seq, MAX_SEQ_LEN))
    if request.target_tokens_per_s is not None and not (
        0 < request.target_tokens_per_s <= MAX_TARGET_TOKENS_PER_S
    ):
        raise InputError("target_tokens_per_s", "must be greater than 0")
    sizing = _Sizing(request, model, context, calibration, cal)
    choice = choose_gpus(gpus, request.gpu, request.precision, _servable)
    index = choice.index
    usable = calibration.training.usable_memory_fraction
    verdicts = tuple(
        _verdict(sizing, g, [o for o in offers if index.spec(o.gpu) == g], usable)
        for g in choice.considered
    )
    options: list[ServingOption] = []
    excluded: list[Exclusion] = []
    for offer in offers:
        gpu = index.spec(offer.gpu)
        if choice.excludes(gpu):
            continue
        reason: ServingOption | ExclusionReason
        if gpu is None:
            reason = ExclusionReason.UNKNOWN_GPU
        elif peak_serving_tflops(gpu, request.precision) is None:
            reason = ExclusionReason.no_figure(request.precision)
        elif not _servable(gpu, request.precision):
            reason = ExclusionReason.UNKNOWN_GPU_FIGURES
        elif offer.usd_per_gpu_hour is None:
            reason = ExclusionReason.NO_PRICE
        elif offer.gpus_per_node is None:
            reason = ExclusionReason.UNKNOWN_GPUS_PER_NODE
        else:
            reason = _option(sizing, offer, gpu, usable)
        if isinstance(reason, ExclusionReason):
            excluded.append(Exclusion(offer, reason))
        else:
            options.append(reason)
    options.sort(key=lambda o: (not o.calibrated, o.usd_per_million_tokens, o.offer.offer_id))
    weights = weight_bytes(model, request.precision)
    per_token = kv_bytes_per_token(model, request.precision)
    kv = per_token * context * sizing.concurrency
    fitting = [v for v in verdicts if v.gpus_per_replica is not None]
    band = _band(cal, "holdout.decode", calibration.error_band_pct)
    ttft_band = _band(cal, "holdout.ttft", band)
    return PlanResult(
        model=model,
        seq_len=context,
        tokens=0.0,
        steps=0,
        needs_multi_node=not any(v.nodes_per_replica == 1 for v in fitting),
        min_gpus_to_fit=min((v.gpus_per_replica or 0) for v in fitting) if fitting else None,
        memory=MemoryArithmetic(
            model.params, bytes_to_gib(weights), 0.0, 0.0, (weights + kv) / GIB
        ),
        per_gpu=tuple(
            GpuVerdict(
                gpu=v.gpu,
                memory_gib=v.memory_gib,
                min_gpus_to_fit=v.gpus_per_replica,
                one_node_fits=v.nodes_per_replica == 1,
                one_node_time_hours=None,
                one_node_layout=None,
            )
            for v in verdicts
        ),
        options=(),
        excluded=tuple(excluded),
        error_band_pct=band,
        assumptions=SERVING_ASSUMPTIONS,
        deadline_hours=None,
        deadline_is_default=False,
        allow_spot=request.allow_spot,
        job=request.job,
        serving=ServingPlan(
            precision=request.precision,
            context=context,
            concurrency=sizing.concurrency,
            target_tokens_per_s=request.target_tokens_per_s,
            weights_gib=bytes_to_gib(weights),
            kv_cache_gib=bytes_to_gib(kv),
            kv_bytes_per_token=per_token,
            per_gpu=verdicts,
            options=tuple(options),
            error_band_pct=band,
            ttft_band_pct=ttft_band,
        ),
    )


def _band(cal: InferenceCalibration, key: str, fallback: float) -> float:
    """Held-out p90 error of one part of the serving figures (``holdout.decode`` or
    ``holdout.ttft``), else of all serving points, else ``fallback``."""
    held = cal.figures.get(key) or cal.figures.get("holdout")
    return held.p90_abs_error_pct if held is not None else fallback
