"""Scenario JSON (docs/design.md §4): validation into frozen model inputs, and GPU name look-up."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, TypeVar

from clusterscout.domain.errors import InputError
from clusterscout.domain.models import FabricKind
from clusterscout.model.defaults import complete_shape
from clusterscout.model.inputs import (
    DEFAULT_LORA_RANK,
    DEFAULT_STACK,
    Algorithm,
    Attention,
    BatchWorkload,
    CollectiveOp,
    CollectiveWorkload,
    HpcWorkload,
    JobKind,
    ModelShape,
    Parallelism,
    Precision,
    Recompute,
    Routing,
    Sharding,
    Stack,
    TrainingWorkload,
)

MAX_NODES = 100_000
MAX_GPUS_PER_NODE = 72
MAX_MESSAGE_BYTES = 1e14
MIN_POSITIVE = 1e-6
"""Smallest value a positive quantity accepts unless the field says otherwise: vanishing
sizes, rates and times underflow the formulas (a division by zero, an infinite time)."""
MAX_MODEL_DIMENSIONS = {
    "layers": 100_000,
    "hidden": 1_000_000,
    "heads": 100_000,
    "kv_heads": 100_000,
    "vocab": 100_000_000,
    "ffn_hidden": 10_000_000,
    "experts": 100_000,
    "top_k": 100_000,
    "expert_ffn": 10_000_000,
    "shared_experts": 100_000,
    "dense_layers": 100_000,
}
"""Upper bounds of the model shape fields: far above any real model, low enough that every
formula stays finite."""
KINDS = ("collective", "training", "batch", "hpc")
MOE_KEYS = ("experts", "top_k", "expert_ffn", "shared_experts", "dense_layers")
"""Mixture-of-experts fields of ``workload.model`` (``experts`` first)."""

E = TypeVar("E", bound=StrEnum)


@dataclass(frozen=True, slots=True)
class ClusterInput:
    """The ``cluster`` object; the GPU is still a name (resolved by the caller)."""

    gpu: str
    gpus_per_node: int
    nodes: int
    fabric: FabricKind | None = None
    per_node_gbps: float | None = None
    gpudirect_rdma: bool | None = None

    @property
    def gpus(self) -> int:
        """Total GPU count."""
        return self.gpus_per_node * self.nodes


Workload = CollectiveWorkload | TrainingWorkload | BatchWorkload | HpcWorkload


@dataclass(frozen=True, slots=True)
class Scenario:
    """A validated scenario."""

    cluster: ClusterInput
    workload: Workload

    @property
    def kind(self) -> str:
        """``collective``, ``training``, ``batch`` or ``hpc``."""
        if isinstance(self.workload, CollectiveWorkload):
            return "collective"
        if isinstance(self.workload, TrainingWorkload):
            return "training"
        if isinstance(self.workload, BatchWorkload):
            return "batch"
        return "hpc"


# --- small typed readers; each raises InputError naming the field -----------------------


def _path(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _object(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(field or "scenario", "must be a JSON object")
    return value


def _no_unknown(obj: Mapping[str, Any], allowed: Iterable[str], prefix: str) -> None:
    allowed_set = set(allowed)
    for key in obj:
        if key not in allowed_set:
            names = ", ".join(sorted(allowed_set))
            raise InputError(_path(prefix, str(key)), f"unknown field (allowed: {names})")


def _required(obj: Mapping[str, Any], key: str, prefix: str) -> Any:
    if key not in obj or obj[key] is None:
        raise InputError(_path(prefix, key), "is required")
    return obj[key]


def _int(
    obj: Mapping[str, Any],
    key: str,
    prefix: str,
    *,
    default: int | None = None,
    minimum: int = 1,
    maximum: int | None = None,
) -> int:
    field = _path(prefix, key)
    value = obj.get(key)
    if value is None:
        if default is None:
            raise InputError(field, "is required")
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(field, "must be an integer")
    if value < minimum:
        raise InputError(field, f"must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise InputError(field, f"must be at most {maximum}")
    return value


def _number(
    obj: Mapping[str, Any],
    key: str,
    prefix: str,
    *,
    default: float | None = None,
    positive: bool = True,
    minimum: float = MIN_POSITIVE,
    maximum: float | None = None,
) -> float:
    field = _path(prefix, key)
    value = obj.get(key)
    if value is None:
        if default is None:
            raise InputError(field, "is required")
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, "must be a number")
    number = float(value)
    if not math.isfinite(number):
        raise InputError(field, "must be a finite number")
    if positive and number <= 0:
        raise InputError(field, "must be greater than 0")
    if positive and number < minimum:
        raise InputError(field, f"must be at least {minimum:g}")
    if not positive and number < 0:
        raise InputError(field, "must not be negative")
    if maximum is not None and number > maximum:
        raise InputError(field, f"must be at most {maximum:g}")
    return number


def _enum(obj: Mapping[str, Any], key: str, prefix: str, enum: type[E], default: E | None) -> E:
    field = _path(prefix, key)
    value = obj.get(key)
    if value is None:
        if default is None:
            raise InputError(field, "is required")
        return default
    allowed = ", ".join(m.value for m in enum)
    if not isinstance(value, str):
        raise InputError(field, f"must be one of: {allowed}")
    key_norm = value.strip().lower().replace("-", "_")
    for member in enum:
        if member.value == key_norm:
            return member
    raise InputError(field, f"{value!r} is not one of: {allowed}")


def _optional_bool(obj: Mapping[str, Any], key: str, prefix: str) -> bool | None:
    value = obj.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise InputError(_path(prefix, key), "must be true, false or null")


# --- cluster -----------------------------------------------------------------------------

_CLUSTER_KEYS = ("gpu", "gpus_per_node", "nodes", "fabric", "per_node_gbps", "gpudirect_rdma")


def parse_cluster(value: Any) -> ClusterInput:
    """Validate the ``cluster`` object.

    ``fabric`` and ``per_node_gbps`` may be null or absent only for one node.
    """
    obj = _object(value, "cluster")
    _no_unknown(obj, _CLUSTER_KEYS, "cluster")
    gpu = _required(obj, "gpu", "cluster")
    if not isinstance(gpu, str) or not gpu.strip():
        raise InputError("cluster.gpu", "must be a GPU name")
    gpn = _int(obj, "gpus_per_node", "cluster", default=8, maximum=MAX_GPUS_PER_NODE)
    nodes = _int(obj, "nodes", "cluster", maximum=MAX_NODES)
    fabric: FabricKind | None = None
    if obj.get("fabric") is not None:
        fabric = _enum(obj, "fabric", "cluster", FabricKind, None)
    gbps = None
    if obj.get("per_node_gbps") is not None:
        gbps = _number(obj, "per_node_gbps", "cluster", minimum=1e-3, maximum=1e6)
    if nodes > 1 and fabric is None:
        raise InputError("cluster.fabric", "is required when nodes > 1")
    if nodes > 1 and gbps is None:
        raise InputError("cluster.per_node_gbps", "is required when nodes > 1")
    return ClusterInput(
        gpu=gpu.strip(),
        gpus_per_node=gpn,
        nodes=nodes,
        fabric=fabric,
        per_node_gbps=gbps,
        gpudirect_rdma=_optional_bool(obj, "gpudirect_rdma", "cluster"),
    )


# --- workloads ---------------------------------------------------------------------------


def parse_collective(obj: Mapping[str, Any], cluster: ClusterInput) -> CollectiveWorkload:
    """Validate a ``collective`` workload (op, message_bytes, optional algorithm)."""
    prefix = "workload"
    _no_unknown(obj, ("kind", "op", "message_bytes", "algorithm"), prefix)
    if cluster.gpus < 2:
        raise InputError("cluster.nodes", "a collective needs at least 2 GPUs")
    return CollectiveWorkload(
        op=_enum(obj, "op", prefix, CollectiveOp, None),
        message_bytes=_number(obj, "message_bytes", prefix, minimum=1, maximum=MAX_MESSAGE_BYTES),
        algorithm=_enum(obj, "algorithm", prefix, Algorithm, Algorithm.AUTO),
    )


_MODEL_KEYS = (
    "params",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "vocab",
    "ffn_hidden",
    "tied_embeddings",
    "head_dim",
    *MOE_KEYS,
)


def _moe_fields(obj: Mapping[str, Any], prefix: str, model: ModelShape) -> ModelShape:
    """Add the MoE fields to a completed shape; a dense model leaves them out (or experts 0/1).

    ``top_k`` is required with ``experts > 1`` and at most ``experts``; ``dense_layers`` must
    leave at least one MoE layer; ``expert_ffn`` defaults to ``ffn_hidden``.
    """
    experts = _int(obj, "experts", prefix, default=0, minimum=0, maximum=100_000)
    if experts <= 1:
        for key in MOE_KEYS[1:]:
            if obj.get(key):
                raise InputError(_path(prefix, key), "needs experts > 1 (a MoE model)")
        return model
    top_k = _int(obj, "top_k", prefix, maximum=experts)
    dense = _int(obj, "dense_layers", prefix, default=0, minimum=0, maximum=model.layers - 1)
    return replace(
        model,
        experts=experts,
        top_k=top_k,
        expert_ffn=_int(obj, "expert_ffn", prefix, default=model.ffn_hidden, maximum=10_000_000),
        shared_experts=_int(obj, "shared_experts", prefix, default=0, minimum=0, maximum=100_000),
        dense_layers=dense,
    )


def parse_model(value: Any) -> ModelShape:
    """Validate ``workload.model``; only ``params`` is required (see ``defaults``).

    MoE fields (``experts``, ``top_k``, ``expert_ffn``, ``shared_experts``, ``dense_layers``)
    are optional; ``params`` is then the total with every expert.
    """
    prefix = "workload.model"
    obj = _object(value, prefix)
    _no_unknown(obj, _MODEL_KEYS, prefix)
    params = _number(obj, "params", prefix, minimum=1, maximum=1e15)

    def opt(key: str) -> int | None:
        if obj.get(key) is None:
            return None
        return _int(obj, key, prefix, maximum=MAX_MODEL_DIMENSIONS[key])

    layers, hidden, heads, kv_heads = opt("layers"), opt("hidden"), opt("heads"), opt("kv_heads")
    if heads is not None and kv_heads is not None and heads % kv_heads:
        raise InputError(f"{prefix}.kv_heads", "must divide heads")
    shape = complete_shape(
        params,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        vocab=opt("vocab"),
        ffn_hidden=opt("ffn_hidden"),
        tied_embeddings=_optional_bool(obj, "tied_embeddings", prefix),
    )
    head_dim = _int(obj, "head_dim", prefix, default=0, minimum=0, maximum=100_000)
    return _moe_fields(obj, prefix, replace(shape, head_dim=head_dim))


_PAR_KEYS = ("tp", "pp", "cp", "vp", "dp", "ep", "sharding")


def _ep(obj: Mapping[str, Any], prefix: str, non_pp: int, experts: int) -> int:
    """``ep``: 1 for a dense model; otherwise it divides the experts and ``tp*cp*dp``."""
    ep = _int(obj, "ep", prefix, default=1)
    if ep == 1:
        return ep
    if experts <= 1:
        raise InputError(f"{prefix}.ep", "expert parallelism needs a MoE model (experts > 1)")
    if experts % ep:
        raise InputError(f"{prefix}.ep", f"must divide the model's {experts} experts")
    if non_pp % ep:
        raise InputError(f"{prefix}.ep", f"must divide tp*cp*dp = {non_pp}")
    return ep


def parse_parallelism(value: Any, gpus: int, layers: int, experts: int = 0) -> Parallelism:
    """Validate ``workload.parallelism``; ``dp = gpus / (tp*pp*cp)`` unless given.

    ``ep`` (default 1) folds into the ``tp*cp*dp`` ranks of a stage (see ``Parallelism``).
    """
    prefix = "workload.parallelism"
    obj = _object(value if value is not None else {}, prefix)
    _no_unknown(obj, _PAR_KEYS, prefix)
    tp = _int(obj, "tp", prefix, default=1)
    pp = _int(obj, "pp", prefix, default=1)
    cp = _int(obj, "cp", prefix, default=1)
    vp = _int(obj, "vp", prefix, default=1)
    if pp > layers:
        raise InputError(f"{prefix}.pp", f"must not exceed the {layers} layers")
    if vp > 1 and pp == 1:
        raise InputError(f"{prefix}.vp", "interleaving (vp > 1) needs pp > 1")
    if pp * vp > layers:
        raise InputError(f"{prefix}.vp", f"pp * vp must not exceed the {layers} layers")
    replica = tp * pp * cp
    if gpus % replica:
        raise InputError(prefix, f"tp*pp*cp = {replica} must divide the cluster's {gpus} GPUs")
    derived = gpus // replica
    dp = _int(obj, "dp", prefix, default=derived)
    if dp != derived:
        raise InputError(f"{prefix}.dp", f"must equal gpus/(tp*pp*cp) = {derived} (got {dp})")
    sharding = _enum(obj, "sharding", prefix, Sharding, Sharding.NONE)
    ep = _ep(obj, prefix, tp * cp * dp, experts)
    return Parallelism(tp=tp, pp=pp, cp=cp, dp=dp, vp=vp, sharding=sharding, ep=ep)


_TRAINING_KEYS = (
    "kind",
    "model",
    "seq_len",
    "global_batch",
    "micro_batch",
    "precision",
    "parallelism",
    "recompute",
    "stack",
    "job",
    "lora_rank",
    "attention",
    "routing",
    "capacity_factor",
)


def parse_training(obj: Mapping[str, Any], cluster: ClusterInput) -> TrainingWorkload:
    """Validate a ``training`` workload.

    Defaults: ``micro_batch`` 1, ``precision`` bf16, every parallel degree 1 (dp derived),
    ``sharding`` none, ``recompute`` none, ``stack`` megatron, ``job`` pretrain (also
    ``full_finetune``, ``lora``, ``qlora``; ``lora_rank`` 16 for the last two), ``attention``
    flash (``unfused`` for stacks that materialise the attention scores); for an MoE model
    ``routing`` dropless (or ``capacity`` with ``capacity_factor``, or ``balanced``).
    ``global_batch`` must be a multiple of ``dp * micro_batch`` and ``seq_len`` a multiple
    of ``cp``.
    """
    prefix = "workload"
    _no_unknown(obj, _TRAINING_KEYS, prefix)
    model = parse_model(_required(obj, "model", prefix))
    seq_len = _int(obj, "seq_len", prefix, maximum=10_000_000)
    global_batch = _int(obj, "global_batch", prefix, maximum=100_000_000)
    micro_batch = _int(obj, "micro_batch", prefix, default=1, maximum=100_000)
    par = parse_parallelism(obj.get("parallelism"), cluster.gpus, model.layers, model.experts)
    if seq_len % par.cp:
        raise InputError("workload.seq_len", f"must be a multiple of cp = {par.cp}")
    if global_batch % (par.dp * micro_batch):
        raise InputError(
            "workload.global_batch",
            f"must be a multiple of dp * micro_batch = {par.dp * micro_batch}",
        )
    precision = _enum(obj, "precision", prefix, Precision, Precision.BF16)
    if precision is Precision.INT4:
        raise InputError("workload.precision", "int4 is for inference only")
    job = _enum(obj, "job", prefix, JobKind, JobKind.PRETRAIN)
    if job is JobKind.INFERENCE:
        raise InputError(
            "workload.job", "a training workload is pretrain, full_finetune, lora or qlora"
        )
    if "lora_rank" in obj and not job.adapters:
        raise InputError("workload.lora_rank", "applies only to the lora and qlora jobs")
    rank = _int(obj, "lora_rank", prefix, default=DEFAULT_LORA_RANK, maximum=4096)
    routing, capacity = _routing(obj, prefix, model)
    return TrainingWorkload(
        model=model,
        seq_len=seq_len,
        global_batch=global_batch,
        micro_batch=micro_batch,
        precision=precision,
        parallelism=par,
        recompute=_enum(obj, "recompute", prefix, Recompute, Recompute.NONE),
        stack=_enum(obj, "stack", prefix, Stack, DEFAULT_STACK),
        job=job,
        lora_rank=rank,
        attention=_enum(obj, "attention", prefix, Attention, Attention.FLASH),
        routing=routing,
        capacity_factor=capacity,
    )


def _routing(obj: Mapping[str, Any], prefix: str, model: ModelShape) -> tuple[Routing, float]:
    """``routing`` (dropless, capacity or balanced) and ``capacity_factor`` of an MoE model.

    Both apply only to mixture-of-experts models; ``capacity_factor`` (default 1, at most 16)
    only with ``routing: capacity``.
    """
    if not model.is_moe:
        for key in ("routing", "capacity_factor"):
            if key in obj:
                raise InputError(_path(prefix, key), "applies only to a mixture-of-experts model")
        return Routing.DROPLESS, 1.0
    routing = _enum(obj, "routing", prefix, Routing, Routing.DROPLESS)
    if "capacity_factor" in obj and routing is not Routing.CAPACITY:
        raise InputError(_path(prefix, "capacity_factor"), "applies only with routing capacity")
    capacity = _number(obj, "capacity_factor", prefix, default=1.0, maximum=16.0)
    return routing, capacity


def parse_batch(obj: Mapping[str, Any]) -> BatchWorkload:
    """Validate a ``batch`` (embarrassingly parallel) workload."""
    prefix = "workload"
    _no_unknown(
        obj,
        ("kind", "gpu_hours", "startup_s", "data_gb_per_node", "storage_gbs_per_node"),
        prefix,
    )
    return BatchWorkload(
        gpu_hours=_number(obj, "gpu_hours", prefix, maximum=1e9),
        startup_s=_number(obj, "startup_s", prefix, default=0.0, positive=False, maximum=1e7),
        data_gb_per_node=_number(
            obj, "data_gb_per_node", prefix, default=0.0, positive=False, maximum=1e9
        ),
        storage_gbs_per_node=_number(obj, "storage_gbs_per_node", prefix, default=1.0, maximum=1e6),
    )


def parse_hpc(obj: Mapping[str, Any], cluster: ClusterInput) -> HpcWorkload:
    """Validate an ``hpc`` (tightly coupled, weak-scaled) workload."""
    prefix = "workload"
    _no_unknown(
        obj,
        ("kind", "step_time_one_node_s", "comm_share", "op", "message_bytes", "steps"),
        prefix,
    )
    if cluster.gpus_per_node < 2:
        raise InputError("cluster.gpus_per_node", "an hpc profile needs at least 2 GPUs")
    share = _number(obj, "comm_share", prefix, default=0.0, positive=False)
    if share >= 1:
        raise InputError("workload.comm_share", "must be below 1")
    return HpcWorkload(
        step_time_one_node_s=_number(
            obj, "step_time_one_node_s", prefix, minimum=1e-9, maximum=1e9
        ),
        comm_share=share,
        op=_enum(obj, "op", prefix, CollectiveOp, CollectiveOp.ALL_REDUCE),
        message_bytes=_number(obj, "message_bytes", prefix, minimum=1, maximum=MAX_MESSAGE_BYTES),
        steps=_int(obj, "steps", prefix, default=1, maximum=10**12),
    )


def parse_scenario(obj: Mapping[str, Any]) -> Scenario:
    """Validate a scenario object (parsed JSON) into a ``Scenario``.

    Raises:
        InputError: naming the first field at fault; unknown keys are errors.
    """
    root = _object(obj, "")
    _no_unknown(root, ("cluster", "workload"), "")
    cluster = parse_cluster(_required(root, "cluster", ""))
    workload = _object(_required(root, "workload", ""), "workload")
    kind = workload.get("kind")
    if kind not in KINDS:
        raise InputError("workload.kind", f"must be one of: {', '.join(KINDS)}")
    parsed: Workload
    if kind == "collective":
        parsed = parse_collective(workload, cluster)
    elif kind == "training":
        parsed = parse_training(workload, cluster)
    elif kind == "batch":
        parsed = parse_batch(workload)
    else:
        parsed = parse_hpc(workload, cluster)
    return Scenario(cluster=cluster, workload=parsed)
