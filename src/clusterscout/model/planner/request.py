"""What to train and the constraints: the plan request, its bounds, and the job derived from it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from clusterscout.domain.errors import InputError
from clusterscout.model.defaults import complete_shape
from clusterscout.model.inputs import (
    DEFAULT_LORA_RANK,
    DEFAULT_STACK,
    JobKind,
    ModelShape,
    Precision,
    Stack,
)
from clusterscout.model.presets import PRESETS, find_preset
from clusterscout.model.scenario import MAX_NODES

DEFAULT_MAX_NODES: Final = 64
DEFAULT_DEADLINE_HOURS: Final = 90 * 24.0
"""Deadline a plan applies when the request gives none: 90 days (a quarter of a year)."""
DEFAULT_SEQ_LEN: Final = 4096
SMALL_BATCH_TOKENS: Final = 2**22
"""4M tokens per step (Llama 1/2/3 up to 70B)."""
LARGE_BATCH_TOKENS: Final = 2**24
"""16M tokens per step (Llama 3 405B)."""
LARGE_MODEL_PARAMS: Final = 100e9
MIN_PARAMS: Final = 1e6
MAX_PARAMS: Final = 1e14
MAX_TOKENS: Final = 1e16
MAX_STEPS: Final = 10**9
MAX_SEQ_LEN: Final = 10_000_000
"""Longest sequence a plan accepts (as the scenario's ``seq_len``)."""
MAX_BATCH_TOKENS: Final = 1 << 40
"""Most tokens per optimizer step a plan accepts; keeps every derived figure finite."""
MAX_PLAN_NODES: Final = MAX_NODES
MAX_LORA_RANK: Final = 4096
MAX_CONCURRENCY: Final = 1_000_000
MAX_TARGET_TOKENS_PER_S: Final = 1e12


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """What to train and the constraints.

    Exactly one of ``params`` / ``preset``, and of ``tokens`` / ``steps``.
    """

    params: float | None = None
    preset: str | None = None
    tokens: float | None = None
    steps: int | None = None
    precision: Precision = Precision.BF16
    gpu: str | None = None
    max_nodes: int = DEFAULT_MAX_NODES
    budget_usd: float | None = None
    deadline_hours: float | None = None
    seq_len: int | None = None
    batch_tokens: int | None = None
    stack: Stack = DEFAULT_STACK
    allow_spot: bool = False
    job: JobKind = JobKind.PRETRAIN
    lora_rank: int | None = None
    context: int | None = None
    concurrency: int | None = None
    target_tokens_per_s: float | None = None
    failures_per_million_gpu_hours: float | None = None
    checkpoint_minutes: float | None = None
    restart_minutes: float | None = None


@dataclass(frozen=True, slots=True)
class Job:
    """A validated training job: model shape, batch, step count, precision and stack.

    ``deadline_hours`` is the request's deadline, or ``DEFAULT_DEADLINE_HOURS`` when it gave
    none (``deadline_is_default``).
    """

    model: ModelShape
    seq_len: int
    global_batch: int
    steps: int
    tokens: float
    precision: Precision
    stack: Stack = DEFAULT_STACK
    deadline_hours: float = DEFAULT_DEADLINE_HOURS
    deadline_is_default: bool = True
    kind: JobKind = JobKind.PRETRAIN
    lora_rank: int = DEFAULT_LORA_RANK

    def steps_for(self, global_batch: int) -> int:
        """Steps that train the job's tokens with ``global_batch`` sequences per step.

        >>> job = Job(None, 1000, 4, 10, 40_000.0, None)  # type: ignore[arg-type]
        >>> job.steps_for(4), job.steps_for(8), job.steps_for(3)
        (10, 5, 14)
        """
        return max(1, math.ceil(self.tokens / (global_batch * self.seq_len)))


def _sci(value: float) -> str:
    """``1e16`` for 10**16 (bounds in messages, written as users type them).

    >>> _sci(1e6), _sci(10**9)
    ('1e6', '1e9')
    """
    return f"{value:.0e}".replace("e+0", "e").replace("e+", "e")


def model_for(request: PlanRequest) -> tuple[ModelShape, int, int]:
    """The request's model shape, sequence length and batch tokens (preset or params).

    Raises:
        InputError: naming the field at fault.
    """
    if (request.params is None) == (request.preset is None):
        raise InputError("model", "give exactly one of params or preset")
    if request.preset is not None:
        preset = find_preset(request.preset)
        if preset is None:
            raise InputError("model", f"unknown preset (known: {', '.join(PRESETS)})")
        model, seq, batch_tokens = preset.shape, preset.seq_len, preset.batch_tokens
    else:
        params = float(request.params or 0.0)
        if not MIN_PARAMS <= params <= MAX_PARAMS:
            raise InputError("params", f"must be between {_sci(MIN_PARAMS)} and {_sci(MAX_PARAMS)}")
        model = complete_shape(params)
        seq = DEFAULT_SEQ_LEN
        batch_tokens = LARGE_BATCH_TOKENS if params > LARGE_MODEL_PARAMS else SMALL_BATCH_TOKENS
    return model, seq, batch_tokens


def lora_rank_of(request: PlanRequest) -> int:
    """The adapter rank of a LoRA/QLoRA request (default 16).

    Raises:
        InputError: for a rank outside 1..4096, or a rank given to another job.
    """
    if request.lora_rank is None:
        return DEFAULT_LORA_RANK
    if not request.job.adapters:
        raise InputError("lora_rank", "applies only to the lora and qlora jobs")
    if not 1 <= request.lora_rank <= MAX_LORA_RANK:
        raise InputError("lora_rank", f"must be between 1 and {MAX_LORA_RANK:,}")
    return request.lora_rank


def job_for(request: PlanRequest) -> Job:
    """Validate a training request and derive the job (shape, batch, steps, job kind).

    Raises:
        InputError: naming the field at fault.
    """
    if request.job is JobKind.INFERENCE:
        raise InputError("job", "inference has no training steps")
    if request.precision is Precision.INT4:
        raise InputError("precision", "int4 is for inference only (use bf16, fp16 or fp8)")
    for name in ("context", "concurrency", "target_tokens_per_s"):
        if getattr(request, name) is not None:
            raise InputError(name, "applies only to the inference job")
    rank = lora_rank_of(request)
    model, seq, batch_tokens = model_for(request)
    seq = request.seq_len or seq
    batch_tokens = request.batch_tokens or batch_tokens
    if not 1 <= seq <= MAX_SEQ_LEN:
        raise InputError("seq_len", f"must be between 1 and {MAX_SEQ_LEN:,}")
    if not 1 <= batch_tokens <= MAX_BATCH_TOKENS:
        raise InputError("batch_tokens", f"must be between 1 and {MAX_BATCH_TOKENS:,}")
    if batch_tokens < seq:
        raise InputError("seq_len", "must be at most the batch tokens")
    if not 1 <= request.max_nodes <= MAX_PLAN_NODES:
        raise InputError("max_nodes", f"must be between 1 and {MAX_PLAN_NODES:,}")
    global_batch = max(1, batch_tokens // seq)
    tokens_per_step = global_batch * seq
    if (request.tokens is None) == (request.steps is None):
        raise InputError("tokens", "give exactly one of tokens or steps")
    if request.tokens is not None:
        if not 0 < request.tokens <= MAX_TOKENS:
            raise InputError("tokens", f"must be between 1 and {_sci(MAX_TOKENS)}")
        steps = max(1, math.ceil(request.tokens / tokens_per_step))
        tokens = float(request.tokens)
    else:
        if not 0 < (request.steps or 0) <= MAX_STEPS:
            raise InputError("steps", f"must be between 1 and {_sci(MAX_STEPS)}")
        steps = int(request.steps or 0)
        tokens = float(steps * tokens_per_step)
    for name, value in (
        ("budget_usd", request.budget_usd),
        ("deadline_hours", request.deadline_hours),
    ):
        if value is not None and value <= 0:
            raise InputError(name, "must be greater than 0")
    deadline = request.deadline_hours
    return Job(
        model,
        seq,
        global_batch,
        steps,
        tokens,
        request.precision,
        request.stack,
        deadline if deadline is not None else DEFAULT_DEADLINE_HOURS,
        deadline is None,
        request.job,
        rank,
    )
