"""Layout search: the fastest parallel layout that fits memory on a cluster, and node sweeps."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final, TypeVar

from clusterscout.domain.errors import InputError
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import GpuSpec
from clusterscout.model.calibration import Calibration
from clusterscout.model.compute import peak_tflops
from clusterscout.model.inputs import (
    ClusterSpec,
    Parallelism,
    Precision,
    Recompute,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.memory import capacity_gib, total_gib
from clusterscout.model.planner.request import Job
from clusterscout.model.planner.results import Layout
from clusterscout.model.training import (
    StepBreakdown,
    TrainingResult,
    compute_time_s,
    step_breakdown,
    training_result,
)

REFERENCE_NODE_GPUS: Final = 8
_TP_CHOICES: Final = (1, 2, 4, 8)
_PP_CHOICES: Final = (1, 2, 4, 8, 16, 32, 64)
_VP_CHOICES: Final = (4, 2, 1)
_MICRO_BATCHES: Final = (1, 2, 4)
"""Micro-batch sizes tried once a layout fits at 1: a GPU with more memory (H200 against
H100) can hold two or four sequences per micro-batch, which halves or quarters FSDP's
per-micro-step gathers and lengthens each overlap window; the bubble grows with it, so the
step model decides."""
_MAX_GPUS_SEARCH: Final = 1 << 20
STEP_MEMO_ENTRIES: Final = 32_768
"""Most answers of each kind a ``StepMemo`` keeps before it starts over (a few MiB)."""
_STEP_MEMO_CALIBRATIONS: Final = 2
_K = TypeVar("_K")
_V = TypeVar("_V")


def node_counts(cap: int) -> tuple[int, ...]:
    """Powers of two from 1 up to ``cap``, plus ``cap`` itself (the node counts tried).

    >>> node_counts(1), node_counts(8), node_counts(12)
    ((1,), (1, 2, 4, 8), (1, 2, 4, 8, 12))
    """
    counts = [1 << i for i in range(cap.bit_length()) if (1 << i) <= cap]
    if cap not in counts:
        counts.append(cap)
    return tuple(counts)


@dataclass(frozen=True, slots=True)
class GpuChoice:
    """The GPU models a plan considers, and the one the request names (None: all)."""

    index: GpuIndex
    wanted: str | None
    considered: list[GpuSpec]

    def excludes(self, gpu: GpuSpec | None) -> bool:
        """True for a known GPU other than the one asked for."""
        return gpu is not None and self.wanted is not None and gpu.name != self.wanted


def choose_gpus(
    gpus: Sequence[GpuSpec],
    wanted: str | None,
    precision: Precision,
    usable: Callable[[GpuSpec, Precision], bool],
) -> GpuChoice:
    """The GPU models with the figures the job needs, limited to ``wanted`` when given.

    Raises:
        InputError: for an unknown GPU name, or a named GPU without figures at ``precision``.
    """
    index = GpuIndex.of(gpus)
    name = index.require(wanted, "gpu").name if wanted else None
    considered = [g for g in gpus if (name is None or g.name == name) and usable(g, precision)]
    if name is not None and not considered:
        raise InputError("precision", f"{name} has no {precision.value} figures")
    return GpuChoice(index, name, considered)


def has_figures(gpu: GpuSpec, precision: Precision) -> bool:
    """True when the GPU has the peak TFLOP/s the model needs (BF16, and ``precision``)."""
    try:
        peak_tflops(gpu, Precision.BF16)
        peak_tflops(gpu, precision)
    except ValueError:
        return False
    return True


def _workload(
    job: Job,
    tp: int,
    pp: int,
    vp: int,
    dp: int,
    sharding: Sharding,
    recompute: Recompute,
    ep: int = 1,
    micro_batch: int = 1,
) -> TrainingWorkload:
    # The batch must split evenly over data-parallel ranks and micro-batches: the nearest
    # multiple of dp * micro_batch (at least one). The job's tokens stay fixed, so a larger
    # batch means fewer steps (Job.steps_for).
    batch = _workload_batch(job, dp, micro_batch)
    return TrainingWorkload(
        model=job.model,
        seq_len=job.seq_len,
        global_batch=batch,
        micro_batch=micro_batch,
        precision=job.precision,
        parallelism=Parallelism(tp=tp, pp=pp, cp=1, dp=dp, vp=vp, sharding=sharding, ep=ep),
        recompute=recompute,
        stack=job.stack,
        job=job.kind,
        lora_rank=job.lora_rank,
    )


_total_gib = functools.lru_cache(maxsize=16384)(total_gib)
"""Memory of a workload, remembered across GPU models and plans: the search asks it again for
each GPU model it considers, and plans that differ only in tokens or nodes ask the same."""


def _fits(w: TrainingWorkload, capacity: float) -> bool:
    """``memory_per_gpu(w, gpu, calibration).fits`` for a GPU of ``capacity_gib``."""
    return _total_gib(w) <= capacity


def _vp(layers: int, pp: int) -> int:
    if pp == 1:
        return 1
    return next((v for v in _VP_CHOICES if layers % (pp * v) == 0), 1)


def ep_choices(experts: int, non_pp: int) -> tuple[int, ...]:
    """Expert-parallel degrees tried: powers of two that divide the experts and ``tp*dp``.

    >>> ep_choices(8, 64), ep_choices(256, 16), ep_choices(0, 8)
    ((1, 2, 4, 8), (1, 2, 4, 8, 16), (1,))
    """
    if experts <= 1:
        return (1,)
    out = [1]
    while experts % (out[-1] * 2) == 0 and non_pp % (out[-1] * 2) == 0:
        out.append(out[-1] * 2)
    return tuple(out)


def _moe_workloads(
    job: Job, capacity: float, gpus_per_node: int, gpus: int
) -> Iterator[TrainingWorkload]:
    """MoE models: per (tp, recompute, ep), the smallest pipeline depth that fits memory.

    Only the distributed optimizer (ZeRO-1) is tried, as Megatron-Core trains MoE models;
    ``ep`` folds into the ``tp*dp`` ranks of each stage (``Parallelism``).
    """
    model = job.model
    for tp in _TP_CHOICES:
        if tp > gpus_per_node or gpus_per_node % tp or model.heads % tp or gpus % tp:
            continue
        for recompute in (Recompute.NONE, Recompute.FULL):
            for ep in ep_choices(model.experts, gpus // tp):
                for pp in _PP_CHOICES:
                    if pp > model.layers or gpus % (tp * pp):
                        break
                    dp = gpus // (tp * pp)
                    if (tp * dp) % ep:
                        break
                    vp = _vp(model.layers, pp)
                    w = _workload(job, tp, pp, vp, dp, Sharding.ZERO1, recompute, ep)
                    if _fits(w, capacity):
                        yield w
                        break


def fitting_workloads(
    job: Job, gpu: GpuSpec, gpus_per_node: int, gpus: int, calibration: Calibration
) -> list[TrainingWorkload]:
    """Per (tp, sharding, recompute): the smallest pipeline depth that fits memory, at one
    sequence per micro-batch and at 2 and 4 where those fit too.

    FSDP is tried without pipelining only (how it is used in practice); more pipeline
    stages than needed only add bubble, so the first fitting depth is kept. MoE models also
    search the expert-parallel degree (``_moe_workloads``).
    """
    capacity = capacity_gib(gpu, calibration)
    return list(_kept_fitting(_memory_job(job), capacity, gpus_per_node, gpus))


def _memory_job(job: Job) -> Job:
    """``job`` without what memory does not depend on (tokens, steps, deadline)."""
    return replace(job, steps=0, tokens=0.0, deadline_hours=0.0, deadline_is_default=True)


@functools.lru_cache(maxsize=4096)
def _kept_fitting(
    job: Job, capacity: float, gpus_per_node: int, gpus: int
) -> tuple[TrainingWorkload, ...]:
    """``fitting_workloads``, remembered across plans: plans that differ only in tokens,
    deadline, budget or nodes (a buyer trying variants) search the same layouts."""
    return tuple(_fitting(job, capacity, gpus_per_node, gpus))


def _fitting(
    job: Job, capacity: float, gpus_per_node: int, gpus: int
) -> Iterator[TrainingWorkload]:
    """``fitting_workloads`` one at a time, so a caller asking only "does any fit?" can stop."""
    if job.model.is_moe:
        yield from _moe_workloads(job, capacity, gpus_per_node, gpus)
        return
    heads = job.model.heads
    for tp in _TP_CHOICES:
        if tp > gpus_per_node or gpus_per_node % tp or heads % tp or gpus % tp:
            continue
        for sharding in (Sharding.FSDP, Sharding.ZERO1):
            for recompute in (Recompute.NONE, Recompute.FULL):
                pps = (1,) if sharding is Sharding.FSDP else _PP_CHOICES
                for pp in pps:
                    if pp > job.model.layers or gpus % (tp * pp):
                        break
                    dp = gpus // (tp * pp)
                    w = _workload(job, tp, pp, _vp(job.model.layers, pp), dp, sharding, recompute)
                    if _fits(w, capacity):
                        yield w
                        yield from _larger_micro_batches(job, w, capacity)
                        break


def _larger_micro_batches(
    job: Job, fitted: TrainingWorkload, capacity: float
) -> Iterator[TrainingWorkload]:
    """``fitted`` with 2 and 4 sequences per micro-batch, while they fit and the job's batch
    gives every data-parallel rank at least that many sequences."""
    dp = fitted.parallelism.dp
    for mb in _MICRO_BATCHES[1:]:
        if job.global_batch < dp * mb:
            return
        w = replace(fitted, micro_batch=mb, global_batch=_workload_batch(job, dp, mb))
        if not _fits(w, capacity):
            return
        yield w


def _workload_batch(job: Job, dp: int, micro_batch: int) -> int:
    unit = dp * micro_batch
    return max(unit, round(job.global_batch / unit) * unit)


class StepMemo:
    """The step model's answers under one calibration, kept across plans.

    Compute time, step breakdown and training result are pure functions of the layout, the
    cluster and the calibration; never of tokens, deadline, budget or price. Plans that differ
    only in those (a buyer trying variants) or in their node cap ask the same questions, so a
    cold plan after the first few costs a few dictionary look-ups per layout. Each table starts
    over when it reaches ``STEP_MEMO_ENTRIES``, which bounds memory without an LRU's
    bookkeeping on the hot path.
    """

    __slots__ = ("_compute", "_parts", "_results", "calibration")

    def __init__(self, calibration: Calibration) -> None:
        self.calibration = calibration
        self._compute: dict[tuple[TrainingWorkload, ClusterSpec], float] = {}
        self._parts: dict[tuple[TrainingWorkload, ClusterSpec], StepBreakdown] = {}
        self._results: dict[tuple[TrainingWorkload, ClusterSpec], TrainingResult] = {}

    def compute(self, w: TrainingWorkload, cluster: ClusterSpec) -> float:
        """``compute_time_s(w, cluster, calibration)``."""
        key = (w, cluster)
        found = self._compute.get(key)
        if found is None:
            found = compute_time_s(w, cluster, self.calibration)
            _keep(self._compute, key, found)
        return found

    def parts(self, w: TrainingWorkload, cluster: ClusterSpec) -> StepBreakdown:
        """``step_breakdown(w, cluster, calibration)``."""
        key = (w, cluster)
        found = self._parts.get(key)
        if found is None:
            found = step_breakdown(w, cluster, self.calibration, self.compute(w, cluster))
            _keep(self._parts, key, found)
        return found

    def result(self, w: TrainingWorkload, cluster: ClusterSpec) -> TrainingResult:
        """``train_step(w, cluster, calibration)``, from the remembered breakdown."""
        key = (w, cluster)
        found = self._results.get(key)
        if found is None:
            found = training_result(w, cluster, self.parts(w, cluster), self.calibration)
            _keep(self._results, key, found)
        return found


def _keep(table: dict[_K, _V], key: _K, value: _V) -> None:
    if len(table) >= STEP_MEMO_ENTRIES:
        table.clear()
    table[key] = value


_memos: list[StepMemo] = []
"""The latest calibrations' memos, newest first. A calibration holds mappings, so it has no
hash: it is matched by identity, then by equality (each pooled connection parses its own copy
of the same stored calibration). A new data version with other constants gets a fresh memo."""


def step_memo(calibration: Calibration) -> StepMemo:
    """The memo of ``calibration`` (a new one for a calibration not seen lately)."""
    for memo in _memos:
        if memo.calibration is calibration:
            return memo
    for memo in _memos:
        if memo.calibration == calibration:
            return memo
    memo = StepMemo(calibration)
    # Two threads may both create one for a new calibration; either serves, nothing is wrong.
    _memos.insert(0, memo)
    del _memos[_STEP_MEMO_CALIBRATIONS:]
    return memo


@dataclass(frozen=True, slots=True)
class BestLayout:
    """The fastest layout that fits a cluster: its step time, steps and job time.

    ``steps`` trains the job's tokens at this layout's global batch; ``job_seconds`` is
    ``steps * step_time_s``; ``breakdown`` is the step's parts (``step_time_s`` is their sum).
    """

    workload: TrainingWorkload
    step_time_s: float
    steps: int
    breakdown: StepBreakdown

    @property
    def job_seconds(self) -> float:
        """Time to train every token of the job with this layout."""
        return self.steps * self.step_time_s


class LayoutSearch:
    """Layout searches of one job under one calibration, remembering which layouts fit.

    Whether a layout fits memory depends on the job, the calibration, the GPU's memory and
    the GPU counts only, never on the network or the price; one plan asks it again for every
    offer and node count, so the answers are kept for the life of this object (one plan).
    """

    __slots__ = ("_fitting", "calibration", "job", "memo")

    def __init__(self, job: Job, calibration: Calibration) -> None:
        self.job = job
        self.calibration = calibration
        self.memo = step_memo(calibration)
        self._fitting: dict[tuple[str, float, int, int], tuple[TrainingWorkload, ...]] = {}

    def fitting(self, gpu: GpuSpec, gpus_per_node: int, gpus: int) -> tuple[TrainingWorkload, ...]:
        """``fitting_workloads`` of the job, computed once per GPU model and GPU counts."""
        key = (gpu.name, gpu.memory_gib, gpus_per_node, gpus)
        found = self._fitting.get(key)
        if found is None:
            found = tuple(fitting_workloads(self.job, gpu, gpus_per_node, gpus, self.calibration))
            self._fitting[key] = found
        return found

    def best(self, cluster: ClusterSpec) -> BestLayout | None:
        """Fastest layout over TP/PP/sharding/recompute that fits memory on ``cluster``, or None.

        Layouts are compared on the time to train the job's tokens, not on step time: a
        layout whose data parallelism forces a larger batch runs longer steps but fewer of them.
        """
        best: BestLayout | None = None
        for w in self.fitting(cluster.gpu, cluster.gpus_per_node, cluster.gpus):
            steps = self.job.steps_for(w.global_batch)
            compute = self.memo.compute(w, cluster)
            # The other parts of a step are never negative (the calibration bounds its shares
            # to [0, 1]), so a layout whose compute alone is no faster cannot win: skip its
            # communication terms, the costly part of the step model.
            if best is not None and steps * compute >= best.job_seconds:
                continue
            parts = self.memo.parts(w, cluster)
            candidate = BestLayout(w, parts.total_s, steps, parts)
            if best is None or candidate.job_seconds < best.job_seconds:
                best = candidate
        return best

    def fits_on(self, gpu: GpuSpec, gpus: int) -> bool:
        """True when some layout holds the job on ``gpus`` GPUs in nodes of up to 8."""
        return bool(self.fitting(gpu, min(gpus, REFERENCE_NODE_GPUS), gpus))

    def min_gpus_to_fit(self, gpu: GpuSpec) -> int | None:
        """Smallest GPU count whose best layout fits memory (doubling, then bisection)."""
        high = 1
        while not self.fits_on(gpu, high):
            high *= 2
            if high > _MAX_GPUS_SEARCH:
                return None
        low = high // 2
        while high - low > 1:
            mid = (low + high) // 2
            if self.fits_on(gpu, mid):
                high = mid
            else:
                low = mid
        return high


def best_layout(job: Job, cluster: ClusterSpec, calibration: Calibration) -> BestLayout | None:
    """``LayoutSearch.best`` for one cluster (a plan keeps one search for all its offers)."""
    return LayoutSearch(job, calibration).best(cluster)


def layout_of(w: TrainingWorkload) -> Layout:
    """The layout a workload uses."""
    p = w.parallelism
    return Layout(
        p.tp, p.pp, p.dp, p.vp, p.sharding, w.recompute, w.micro_batch, w.global_batch, ep=p.ep
    )
