"""data/reliability.toml: the sourced defaults of the planner's goodput (failure rate, checkpoint
interval, restart time)."""

from __future__ import annotations

import tomllib
from datetime import date
from functools import cache
from pathlib import Path
from typing import Final

from pydantic import (
    BaseModel,
    ConfigDict,
    HttpUrl,
    NonNegativeFloat,
    PositiveFloat,
    ValidationError,
)

from clusterscout.domain.errors import InputError
from clusterscout.model.goodput import Reliability
from clusterscout.resources import bundled_catalog_dir

RELIABILITY_FILE: Final = "reliability.toml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _RateIn(_Strict):
    failures_per_million_gpu_hours: PositiveFloat
    interruptions: int
    days: PositiveFloat
    gpus: int
    title: str
    note: str
    url: HttpUrl
    checked_on: date


class _CheckpointIn(_Strict):
    checkpoint_minutes: PositiveFloat
    title: str
    url: HttpUrl
    checked_on: date


class _RestartIn(_Strict):
    restart_minutes: NonNegativeFloat
    assumed: bool


class _ReliabilityIn(_Strict):
    failure_rate: _RateIn
    checkpoint: _CheckpointIn
    restart: _RestartIn


def load_reliability(data_dir: Path) -> Reliability:
    """The goodput defaults in ``data_dir``.

    Raises:
        InputError: (field ``reliability``) when the file is missing, does not follow the
            format, or its rate disagrees with the counts it is derived from.
    """
    path = data_dir / RELIABILITY_FILE
    try:
        raw = _ReliabilityIn.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise InputError("reliability", f"{path}: {exc}") from None
    rate = raw.failure_rate
    derived = rate.interruptions / (rate.days * 24 * rate.gpus) * 1e6
    # The rate is written rounded; it must still be the one its counts give.
    if abs(derived - rate.failures_per_million_gpu_hours) > 0.05:
        msg = (
            f"{path}: the rate is not {rate.interruptions} / ({rate.days} days * {rate.gpus} GPUs)"
        )
        raise InputError("reliability", msg)
    return Reliability(
        failures_per_million_gpu_hours=rate.failures_per_million_gpu_hours,
        checkpoint_minutes=raw.checkpoint.checkpoint_minutes,
        restart_minutes=raw.restart.restart_minutes,
        source=rate.title,
        source_url=str(rate.url),
        checkpoint_source_url=str(raw.checkpoint.url),
        restart_assumed=raw.restart.assumed,
    )


@cache
def default_reliability() -> Reliability:
    """The defaults shipped with the package (read once)."""
    return load_reliability(bundled_catalog_dir())
