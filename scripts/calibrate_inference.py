"""Fit the serving roofline's two efficiencies on data/measurements.json; write [inference].

Usage: ``.venv/bin/python scripts/calibrate_inference.py`` (no network).

1. Expresses every ``type: inference`` point with a stated concurrency, tensor/pipeline
   degree and input/output length (``clusterscout.model.checkinference``).
2. Fits ``bandwidth_efficiency`` and ``compute_efficiency`` on a grid (0.01 steps) by the
   least sum of squared log errors: one pair for all points, never per point.
3. Held out by source: each source group is predicted by the pair fitted without it.
4. Replaces the ``[inference]`` table of data/calibration.toml (the rest is left as is).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import json  # noqa: E402

from clusterscout.catalog.calibration import load_calibration  # noqa: E402
from clusterscout.catalog.load import load_gpus  # noqa: E402
from clusterscout.model.calibration import ErrorFigures, InferenceCalibration  # noqa: E402
from clusterscout.model.checkinference import (  # noqa: E402
    ServingPoint,
    expressible,
    predict,
    result_of,
)
from clusterscout.model.checkmodel import PointResult, summarise  # noqa: E402

DATA = ROOT / "data"
GRID = [i / 100 for i in range(5, 101)]


def _loss(points: Sequence[ServingPoint], cal: InferenceCalibration) -> float:
    return sum(math.log(predict(p, cal) / p.measured) ** 2 for p in points)


def fit(points: Sequence[ServingPoint]) -> InferenceCalibration:
    """The grid pair with the least squared log error over ``points``."""
    best = min(
        ((_loss(points, InferenceCalibration(bw, c)), bw, c) for bw in GRID for c in GRID),
    )
    return InferenceCalibration(best[1], best[2])


def holdout(points: Sequence[ServingPoint]) -> list[PointResult]:
    """Each source group predicted by constants fitted on the other groups."""
    out: list[PointResult] = []
    for group in sorted({p.group for p in points}):
        rest = [p for p in points if p.group != group]
        if not rest:
            continue
        cal = fit(rest)
        out.extend(result_of(p, predict(p, cal)) for p in points if p.group == group)
    return out


def _figures(key: str, fig: ErrorFigures) -> str:
    return (
        f'\n[inference.figures."{key}"]\npoints = {fig.points}\n'
        f"median_abs_error_pct = {fig.median_abs_error_pct:.2f}\n"
        f"p90_abs_error_pct = {fig.p90_abs_error_pct:.2f}\n"
        f"optimistic_share = {fig.optimistic_share:.3f}\n"
        f"median_signed_error_pct = {fig.median_signed_error_pct:.2f}\n"
    )


def main() -> int:
    """Fit, report and write the table."""
    problems: list = []  # type: ignore[type-arg]
    gpus = load_gpus(DATA, problems)
    raw = json.loads((DATA / "measurements.json").read_text(encoding="utf-8"))["points"]
    points, skipped = expressible(raw, gpus)
    fitted = fit(points)
    in_sample = [result_of(p, predict(p, fitted)) for p in points]
    held = holdout(points)
    for r in in_sample:
        print(f"{r.id:60s} {r.measured:10.2f} {r.predicted:10.2f} {r.signed_error_pct:+6.1f}%")
    groups = sorted({p.group for p in points})
    print(f"fitted: bw {fitted.bandwidth_efficiency} compute {fitted.compute_efficiency}")
    print("in sample", summarise(in_sample))
    print("held out by source", summarise(held))
    print(f"not expressed: {len(skipped)}")
    table = (
        "\n[inference]\n"
        f"bandwidth_efficiency = {fitted.bandwidth_efficiency}\n"
        f"compute_efficiency = {fitted.compute_efficiency}\n"
        f'sources = "fitted by scripts/calibrate_inference.py on the {len(points)} inference '
        f"points of data/measurements.json with a stated concurrency ({', '.join(groups)}): "
        "least squared log error, one pair for all points; figures.holdout: each source "
        'group predicted by the pair fitted on the others"\n'
        + _figures("in_sample", summarise(in_sample))
        + _figures("holdout", summarise(held))
    )
    path = DATA / "calibration.toml"
    text = path.read_text(encoding="utf-8").split("\n[inference]", 1)[0].rstrip("\n") + "\n"
    path.write_text(text + table, encoding="utf-8")
    load_calibration(DATA)  # the project's loader must accept what we wrote
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
