"""Fit the serving model's constants on data/measurements.json; write the [inference] table.

Usage: ``.venv/bin/python scripts/calibrate_inference.py [--dry-run]`` (no network).

1. Expresses every ``type: inference`` point with a stated concurrency, tensor/pipeline
   degree and input/output length (``clusterscout.model.checkinference``).
2. Fits the constants of ``FITTED`` inside their bounds with ``scipy.optimize.least_squares``
   on the log error of every point (each point counts once, as in the error figures) with a
   robust loss: one set for all points, never per point or per GPU. Points marked
   ``exclude_from_fit`` are checked but not fitted on.
3. Held out by source: each source group is predicted by the constants fitted without it.
4. Counts the points behind each GPU (``evidence``) and replaces the ``[inference]`` table of
   data/calibration.toml; the rest of the file is left as is.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from clusterscout.catalog.calibration import load_calibration  # noqa: E402
from clusterscout.catalog.load import load_gpus  # noqa: E402
from clusterscout.model.calibration import ErrorFigures, InferenceCalibration  # noqa: E402
from clusterscout.model.checkinference import (  # noqa: E402
    KINDS,
    ServingPoint,
    expressible,
    predict,
    result_of,
)
from clusterscout.model.checkmodel import PointResult, summarise  # noqa: E402

DATA = ROOT / "data"
FITTED: dict[str, tuple[float, float, float]] = {
    # name: (start, lower, upper); the time constants in microseconds.
    "bandwidth_efficiency": (0.7, 0.2, 1.0),
    "compute_efficiency": (0.4, 0.05, 1.0),
    "prefill_efficiency": (0.4, 0.05, 1.0),
    "layer_overhead_us": (20.0, 0.0, 500.0),
    "moe_layer_overhead_us": (20.0, 0.0, 500.0),
    "prefill_layer_overhead_us": (20.0, 0.0, 500.0),
    "weight_only_bandwidth": (0.7, 0.1, 1.0),
    "kv_bandwidth_efficiency": (0.5, 0.1, 1.0),
    "fp8_math": (0.8, 0.3, 1.0),
    "legacy_gqa_reads": (0.5, 0.0, 1.0),
}
"""The constants the fit moves, with their bounds (physical limits, not targets)."""
ROBUST_SCALE = 0.25
"""Log error beyond which a point's pull on the fit grows like its error, not its square
(``soft_l1``): one engine's odd kernel path must not drag every prediction with it."""


def calibration_of(values: Sequence[float]) -> InferenceCalibration:
    """The constants for the vector ``values`` (in ``FITTED`` order)."""
    named = dict(zip(FITTED, values, strict=True))
    return InferenceCalibration(
        bandwidth_efficiency=named["bandwidth_efficiency"],
        compute_efficiency=named["compute_efficiency"],
        prefill_efficiency=named["prefill_efficiency"],
        layer_overhead_s=named["layer_overhead_us"] * 1e-6,
        moe_layer_overhead_s=named["moe_layer_overhead_us"] * 1e-6,
        prefill_layer_overhead_s=named["prefill_layer_overhead_us"] * 1e-6,
        weight_only_bandwidth=named["weight_only_bandwidth"],
        kv_bandwidth_efficiency=named["kv_bandwidth_efficiency"],
        fp8_math=named["fp8_math"],
        legacy_gqa_reads=named["legacy_gqa_reads"],
    )


def _residuals(values: np.ndarray, points: Sequence[ServingPoint]) -> np.ndarray:
    cal = calibration_of(values)
    return np.asarray([math.log(predict(p, cal) / p.measured) for p in points])


def fit(points: Sequence[ServingPoint]) -> InferenceCalibration:
    """The constants with the least weighted squared log error over ``points``.

    Points marked ``exclude_from_fit`` are left out. A constant none of ``points`` can tell
    apart (no weight-only point, say) keeps its start.
    """
    points = [p for p in points if p.fitted]
    start = np.array([v[0] for v in FITTED.values()])
    bounds = (
        np.array([v[1] for v in FITTED.values()]),
        np.array([v[2] for v in FITTED.values()]),
    )
    solved = least_squares(
        _residuals,
        start,
        bounds=bounds,
        args=(points,),
        x_scale="jac",
        loss="soft_l1",
        f_scale=ROBUST_SCALE,
    )
    return calibration_of(solved.x)


def holdout(points: Sequence[ServingPoint]) -> list[tuple[ServingPoint, PointResult]]:
    """Each source group predicted by constants fitted on the other groups."""
    out: list[tuple[ServingPoint, PointResult]] = []
    for group in sorted({p.group for p in points}):
        rest = [p for p in points if p.group != group]
        if not rest:
            continue
        cal = fit(rest)
        out.extend((p, result_of(p, predict(p, cal))) for p in points if p.group == group)
    return out


def _figures(key: str, fig: ErrorFigures) -> str:
    return (
        f'\n[inference.figures."{key}"]\npoints = {fig.points}\n'
        f"median_abs_error_pct = {fig.median_abs_error_pct:.2f}\n"
        f"p90_abs_error_pct = {fig.p90_abs_error_pct:.2f}\n"
        f"optimistic_share = {fig.optimistic_share:.3f}\n"
        f"median_signed_error_pct = {fig.median_signed_error_pct:.2f}\n"
    )


def _by_kind(prefix: str, pairs: Sequence[tuple[ServingPoint, PointResult]]) -> str:
    """Figures of all points, then per part (``.decode``/``.ttft``/``.moe``) and per GPU
    (``.gpu.<name>``)."""
    text = _figures(prefix, summarise(r for _, r in pairs))
    for kind in KINDS:
        rows = [r for p, r in pairs if p.kind == kind]
        if rows:
            text += _figures(f"{prefix}.{kind}", summarise(rows))
    for name in sorted({p.gpu.name for p, _ in pairs}):
        rows = [r for p, r in pairs if p.gpu.name == name]
        text += _figures(f"{prefix}.gpu.{name}", summarise(rows))
    return text


def table(fitted: InferenceCalibration, points: Sequence[ServingPoint]) -> str:
    """The ``[inference]`` table for ``fitted`` with its in-sample and held-out figures."""
    in_sample = [(p, result_of(p, predict(p, fitted))) for p in points]
    held = holdout(points)
    groups = sorted({p.group for p in points})
    evidence = Counter(p.gpu.name for p in points)
    lines = "\n".join(f'"{name}" = {count}' for name, count in sorted(evidence.items()))
    return (
        "\n[inference]\n"
        f"bandwidth_efficiency = {fitted.bandwidth_efficiency:.4f}\n"
        f"compute_efficiency = {fitted.compute_efficiency:.4f}\n"
        f"prefill_efficiency = {fitted.prefill_efficiency:.4f}\n"
        f"layer_overhead_us = {fitted.layer_overhead_s * 1e6:.2f}\n"
        f"moe_layer_overhead_us = {fitted.moe_layer_overhead_s * 1e6:.2f}\n"
        f"prefill_layer_overhead_us = {fitted.prefill_layer_overhead_s * 1e6:.2f}\n"
        f"weight_only_bandwidth = {fitted.weight_only_bandwidth:.4f}\n"
        f"kv_bandwidth_efficiency = {fitted.kv_bandwidth_efficiency:.4f}\n"
        f"fp8_math = {fitted.fp8_math:.4f}\n"
        f"legacy_gqa_reads = {fitted.legacy_gqa_reads:.4f}\n"
        f'sources = "fitted by scripts/calibrate_inference.py on the {len(points)} inference '
        f"points of data/measurements.json with a stated concurrency, layout and lengths "
        f"({', '.join(groups)}): robust least squares on the log error, one set for all "
        "points; figures.holdout: each source group predicted by the constants "
        'fitted on the others; evidence: points per GPU"\n'
        + "\n[inference.evidence]\n"
        + lines
        + "\n"
        + _by_kind("in_sample", in_sample)
        + _by_kind("holdout", held)
    )


def write(text: str) -> None:
    """Replace the ``[inference]`` table (and its sub-tables) of data/calibration.toml in
    place; a file without one gets it at the end."""
    path = DATA / "calibration.toml"
    kept: list[str] = []
    at: int | None = None
    inside = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            inside = line == "[inference]" or line.startswith("[inference.")
            if inside and at is None:
                at = len(kept)
        if not inside:
            kept.append(line)
    if at is None:
        at = len(kept)
    head = "\n".join(kept[:at]).rstrip("\n") + "\n"
    tail = "\n".join(kept[at:]).strip("\n")
    path.write_text(head + text + ("\n" + tail + "\n" if tail else ""), encoding="utf-8")
    load_calibration(DATA)  # the project's loader must accept what we wrote


def main(argv: Sequence[str] | None = None) -> int:
    """Fit, report and (unless ``--dry-run``) write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print, do not write")
    args = parser.parse_args(argv)
    problems: list = []  # type: ignore[type-arg]
    gpus = load_gpus(DATA, problems)
    calibration = load_calibration(DATA)
    raw = json.loads((DATA / "measurements.json").read_text(encoding="utf-8"))["points"]
    points, skipped = expressible(raw, gpus, calibration)
    fitted = fit(points)
    held = {p.id: r for p, r in holdout(points)}
    for p in points:
        r = result_of(p, predict(p, fitted))
        h = held[p.id]
        print(
            f"{p.id:58s} {p.kind:6s} {r.measured:10.2f} {r.predicted:10.2f} "
            f"{r.signed_error_pct:+7.1f}% held {h.signed_error_pct:+7.1f}%"
        )
    print("fitted:", replace(fitted, figures={}, evidence={}))
    print("in sample", summarise(result_of(p, predict(p, fitted)) for p in points))
    print("held out by source", summarise(held.values()))
    for kind in KINDS:
        rows = [held[p.id] for p in points if p.kind == kind]
        if rows:
            print(f"  held out {kind}", summarise(rows))
    print(f"not expressed: {len(skipped)}")
    if not args.dry_run:
        write(table(fitted, points))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
