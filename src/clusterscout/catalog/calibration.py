"""Read ``data/calibration.toml`` into the model's frozen ``Calibration`` value.

This is the model's only I/O: the file is parsed with ``tomllib``, validated with strict
pydantic models (unknown keys are errors, every group needs a ``sources`` note) and turned into
``clusterscout.model.calibration.Calibration``. ``scripts/calibrate.py`` writes the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import (
    MIN_FAMILY_POINTS,
    Calibration,
    ErrorFigures,
    FabricCalibration,
    FamilyCalibration,
    InferenceCalibration,
    IntraNodeCalibration,
    MoeCalibration,
    StackCalibration,
    TrainingCalibration,
)
from clusterscout.model.inputs import Stack

CALIBRATION_FILE = "calibration.toml"
_US = 1e-6


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Fraction(_Strict):
    sources: str = Field(min_length=1)


class _Fabric(_Fraction):
    bus_efficiency: float = Field(gt=0, le=1.5)
    latency_us: float = Field(gt=0)
    ramp_latency_us: float = Field(ge=0)
    overlap: float = Field(ge=0, le=1)
    busbw_cap_gbs: float | None = Field(default=None, gt=0)


class _IntraNode(_Fraction):
    ring_efficiency: float = Field(gt=0, le=1.5)
    nvls_efficiency: float = Field(gt=0, le=1.5)
    nvls_gpus: list[str]
    pcie_busbw_gbs: float = Field(gt=0)
    latency_us: float = Field(gt=0)
    ramp_latency_us: float = Field(ge=0)


class _Family(_Fraction):
    gpus: list[str]
    level: float = Field(gt=0, le=1)
    calibrated: bool
    points: int = Field(ge=0)
    source_groups: int = Field(ge=0)
    attention_efficiency: float | None = Field(default=None, gt=0, le=2)


class _Stack(_Fraction):
    level: float = Field(gt=0, le=1.5)
    dp_overlap: float = Field(ge=0, le=1)
    tp_overlap: float = Field(ge=0, le=1)
    overlap_slowdown: float = Field(ge=0, le=1)


class _Training(_Fraction):
    fp8_speedup: float = Field(ge=1, le=2)
    cp_overlap: float = Field(ge=0, le=1)
    dp_bucket_mb: float = Field(gt=0)
    usable_memory_fraction: float = Field(gt=0, le=1)
    gemm_width_half: float = Field(ge=0)
    gemm_tokens_half: float = Field(ge=0)
    hidden_half: float = Field(ge=0)
    roofline_exponent: float = Field(ge=0, le=2)
    attention_efficiency: float = Field(gt=0, le=2)
    unfused_attention_bytes: float = Field(ge=0)
    straggler_sigma: float = Field(ge=0, le=1)


class _Figures(_Strict):
    points: int = Field(ge=0)
    median_abs_error_pct: float = Field(ge=0)
    p90_abs_error_pct: float = Field(ge=0)
    optimistic_share: float = Field(ge=0, le=1)
    median_signed_error_pct: float


class _Protocol(_Fraction):
    ll_bandwidth_fraction: float = Field(gt=0, le=1)
    no_gpudirect_factor: float = Field(gt=0, le=1)


class _Check(_Fraction):
    median_abs_error_pct: float = Field(ge=0)
    p90_abs_error_pct: float = Field(ge=0)
    expressed: int = Field(ge=0)
    total: int = Field(ge=0)
    holdout_median_abs_error_pct: float | None = Field(default=None, ge=0)
    holdout_p90_abs_error_pct: float | None = Field(default=None, ge=0)
    holdout_folds: int | None = Field(default=None, ge=2)
    test_sources: list[str] = Field(default_factory=list)
    figures: dict[str, _Figures] = Field(default_factory=dict)


class _Inference(_Fraction):
    bandwidth_efficiency: float = Field(gt=0, le=1)
    compute_efficiency: float = Field(gt=0, le=1)
    prefill_efficiency: float | None = Field(default=None, gt=0, le=1)
    layer_overhead_us: float = Field(default=0.0, ge=0)
    moe_layer_overhead_us: float = Field(default=0.0, ge=0)
    prefill_layer_overhead_us: float = Field(default=0.0, ge=0)
    weight_only_bandwidth: float = Field(default=1.0, gt=0, le=1)
    kv_bandwidth_efficiency: float | None = Field(default=None, gt=0, le=1)
    fp8_math: float = Field(default=1.0, gt=0, le=1)
    legacy_gqa_reads: float = Field(default=0.0, ge=0, le=1)
    evidence: dict[str, int] = Field(default_factory=dict)
    figures: dict[str, _Figures] = Field(default_factory=dict)


class _Moe(_Fraction):
    expert_efficiency: float = Field(gt=0, le=1.5)
    all_to_all_exposed: float = Field(ge=0, le=1)
    dropless_imbalance: float = Field(default=1.0, ge=1, le=4)
    permute_bytes: float = Field(default=0.0, ge=0)
    layer_overhead_us: float = Field(default=0.0, ge=0)
    figures: dict[str, _Figures] = Field(default_factory=dict)


class _File(_Strict):
    schema_version: int = Field(ge=3, le=3)
    note: str = ""
    protocol: _Protocol
    intra_node: _IntraNode
    fabrics: dict[FabricKind, _Fabric]
    families: dict[str, _Family]
    stacks: dict[Stack, _Stack]
    training: _Training
    check: _Check
    inference: _Inference | None = None
    moe: _Moe | None = None


def _figures(table: dict[str, _Figures]) -> dict[str, ErrorFigures]:
    return {
        key: ErrorFigures(
            f.points,
            f.median_abs_error_pct,
            f.p90_abs_error_pct,
            f.optimistic_share,
            f.median_signed_error_pct,
        )
        for key, f in table.items()
    }


def _moe(data: _Moe | None) -> MoeCalibration:
    if data is None:
        return MoeCalibration()
    return MoeCalibration(
        expert_efficiency=data.expert_efficiency,
        all_to_all_exposed=data.all_to_all_exposed,
        dropless_imbalance=data.dropless_imbalance,
        permute_bytes=data.permute_bytes,
        layer_overhead_s=data.layer_overhead_us * _US,
        sources=data.sources,
        figures=_figures(data.figures),
    )


class CalibrationError(ValueError):
    """The calibration file is missing or invalid; the message lists every problem."""


DEFAULT_FAMILY = "default"
"""The family table that holds the prior for GPUs of no family (it lists no GPUs)."""


def _families(table: dict[str, _Family], origin: str) -> dict[str, FamilyCalibration]:
    """The family tables as values; a GPU in two families, a default family that lists GPUs,
    or a family marked calibrated on fewer than ``MIN_FAMILY_POINTS`` points is an error."""
    problems = []
    seen: dict[str, str] = {}
    for name, fam in table.items():
        for gpu in fam.gpus:
            if gpu in seen:
                problems.append(f"families.{name}.gpus: {gpu} is also in {seen[gpu]}")
            seen[gpu] = name
        if fam.calibrated and fam.points < MIN_FAMILY_POINTS:
            problems.append(
                f"families.{name}.calibrated: true needs at least {MIN_FAMILY_POINTS} points "
                f"(has {fam.points})"
            )
    default = table.get(DEFAULT_FAMILY)
    if default is not None and (default.gpus or default.calibrated):
        problems.append(f"families.{DEFAULT_FAMILY}: the prior lists no GPUs and is not calibrated")
    if problems:
        raise CalibrationError(f"{origin}: {'; '.join(problems)}")
    return {
        name: FamilyCalibration(
            name=name,
            gpus=tuple(fam.gpus),
            level=fam.level,
            calibrated=fam.calibrated,
            points=fam.points,
            source_groups=fam.source_groups,
            attention_efficiency=fam.attention_efficiency,
            sources=fam.sources,
        )
        for name, fam in table.items()
    }


def parse_calibration(text: str, origin: str = CALIBRATION_FILE) -> Calibration:
    """Parse calibration TOML text.

    Raises:
        CalibrationError: naming ``origin`` and every invalid key path.
    """
    try:
        raw = tomllib.loads(text)
        data = _File.model_validate(raw)
    except tomllib.TOMLDecodeError as exc:
        msg = f"{origin}: {exc}"
        raise CalibrationError(msg) from exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        msg = f"{origin}: {problems}"
        raise CalibrationError(msg) from exc
    missing = [f"fabrics.{k.value}" for k in FabricKind if k not in data.fabrics]
    missing += [f"stacks.{k.value}" for k in Stack if k not in data.stacks]
    if DEFAULT_FAMILY not in data.families:
        missing.append(f"families.{DEFAULT_FAMILY}")
    if missing:
        msg = f"{origin}: missing {', '.join(missing)}"
        raise CalibrationError(msg)
    families = _families(data.families, origin)
    intra = data.intra_node
    train = data.training
    return Calibration(
        fabrics={
            kind: FabricCalibration(
                bus_efficiency=f.bus_efficiency,
                latency_s=f.latency_us * _US,
                ramp_latency_s=f.ramp_latency_us * _US,
                overlap=f.overlap,
                busbw_cap_gbs=f.busbw_cap_gbs,
                sources=f.sources,
            )
            for kind, f in data.fabrics.items()
        },
        intra_node=IntraNodeCalibration(
            ring_efficiency=intra.ring_efficiency,
            nvls_efficiency=intra.nvls_efficiency,
            nvls_gpus=tuple(intra.nvls_gpus),
            pcie_busbw_gbs=intra.pcie_busbw_gbs,
            latency_s=intra.latency_us * _US,
            ramp_latency_s=intra.ramp_latency_us * _US,
            sources=intra.sources,
        ),
        families={k: v for k, v in families.items() if k != DEFAULT_FAMILY},
        default_family=families[DEFAULT_FAMILY],
        training=TrainingCalibration(
            fp8_speedup=train.fp8_speedup,
            cp_overlap=train.cp_overlap,
            dp_bucket_bytes=train.dp_bucket_mb * 1e6,
            usable_memory_fraction=train.usable_memory_fraction,
            gemm_width_half=train.gemm_width_half,
            gemm_tokens_half=train.gemm_tokens_half,
            hidden_half=train.hidden_half,
            roofline_exponent=train.roofline_exponent,
            attention_efficiency=train.attention_efficiency,
            unfused_attention_bytes=train.unfused_attention_bytes,
            straggler_sigma=train.straggler_sigma,
            sources=train.sources,
        ),
        stacks={
            kind: StackCalibration(
                dp_overlap=st.dp_overlap,
                overlap_slowdown=st.overlap_slowdown,
                level=st.level,
                tp_overlap=st.tp_overlap,
                sources=st.sources,
            )
            for kind, st in data.stacks.items()
        },
        ll_bandwidth_fraction=data.protocol.ll_bandwidth_fraction,
        no_gpudirect_factor=data.protocol.no_gpudirect_factor,
        median_abs_error_pct=data.check.median_abs_error_pct,
        p90_abs_error_pct=data.check.p90_abs_error_pct,
        holdout_median_abs_error_pct=data.check.holdout_median_abs_error_pct,
        holdout_p90_abs_error_pct=data.check.holdout_p90_abs_error_pct,
        figures=_figures(data.check.figures),
        test_sources=tuple(data.check.test_sources),
        inference=(
            InferenceCalibration(
                bandwidth_efficiency=data.inference.bandwidth_efficiency,
                compute_efficiency=data.inference.compute_efficiency,
                prefill_efficiency=data.inference.prefill_efficiency or 0.0,
                layer_overhead_s=data.inference.layer_overhead_us * _US,
                moe_layer_overhead_s=data.inference.moe_layer_overhead_us * _US,
                prefill_layer_overhead_s=data.inference.prefill_layer_overhead_us * _US,
                weight_only_bandwidth=data.inference.weight_only_bandwidth,
                kv_bandwidth_efficiency=data.inference.kv_bandwidth_efficiency or 0.0,
                fp8_math=data.inference.fp8_math,
                legacy_gqa_reads=data.inference.legacy_gqa_reads,
                evidence=dict(data.inference.evidence),
                figures=_figures(data.inference.figures),
                sources=data.inference.sources,
            )
            if data.inference is not None
            else None
        ),
        moe=_moe(data.moe),
        sources={"protocol": data.protocol.sources, "check": data.check.sources},
    )


def load_calibration(data_dir: Path) -> Calibration:
    """Read ``<data_dir>/calibration.toml``.

    Raises:
        CalibrationError: when the file is missing or invalid.
    """
    path = data_dir / CALIBRATION_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        msg = f"{path}: cannot read ({exc.strerror})"
        raise CalibrationError(msg) from exc
    return parse_calibration(text, str(path))
