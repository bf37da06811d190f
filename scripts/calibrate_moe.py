#!/usr/bin/env python3
"""Fit the four mixture-of-experts constants on the MoE points and write ``[moe]`` of calibration.

Usage::

    .venv/bin/python scripts/calibrate_moe.py          # fit, held-out error, write [moe]
    .venv/bin/python scripts/calibrate_moe.py --check  # report with the current file only

What it does (ADR 0017):
1. Expresses every MoE training point of data/measurements.json (``checkmodel.express``).
2. Keeps every dense constant of data/calibration.toml as it is and fits only
   ``moe.expert_efficiency`` (grouped-GEMM rate), ``moe.all_to_all_exposed``,
   ``moe.dropless_imbalance`` (busiest expert over the mean with a learned router) and
   ``moe.permute_bytes`` (token permutation traffic) with the same robust log-error least
   squares as scripts/calibrate.py, each point weighted ``1/sqrt(n)`` by source group.
   Dense and collective predictions do not depend on these constants, so the dense figures
   cannot move.
3. Leaves one source group out at a time, refits, and predicts it: the held-out error.
4. Rewrites the ``[moe]`` tables at the end of data/calibration.toml (scripts/calibrate.py
   keeps them when it rewrites the rest).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

from calibrate import (  # noqa: E402
    Item,
    expressed_items,
    load_gpus,
    load_points,
    print_figures,
    print_rows,
)

from clusterscout.catalog.calibration import load_calibration, parse_calibration  # noqa: E402
from clusterscout.model.calibration import Calibration, ErrorFigures, MoeCalibration  # noqa: E402
from clusterscout.model.checkmodel import (  # noqa: E402
    PointResult,
    predict,
    result_for,
    summarise,
)

DATA = ROOT / "data"
NAMES = (
    "expert_efficiency",
    "all_to_all_exposed",
    "dropless_imbalance",
    "permute_bytes",
    "layer_overhead_us",
)
START = np.array([0.7, 0.5, 1.2, 16.0, 200.0])
LOW = np.array([0.05, 0.0, 1.0, 0.0, 0.0])
HIGH = np.array([1.0, 1.0, 3.0, 64.0, 1000.0])
"""Physical bounds: experts never faster than dense GEMMs of their own shape; at most 64
bytes per hidden element of a token copy (four BF16 passes each way); at most 1 ms of fixed
work per MoE layer and micro-batch."""
PRIOR_WEIGHT = 0.02
"""Weak pull towards the start (as scripts/calibrate.py), so a constant the data cannot see
stays at its physical prior: experts a little slower than dense GEMMs, half the all-to-all
hidden, the busiest expert 20 % above the mean (dropless runs of Megatron-MoE-ModelZoo give
237 against 295 TFLOP/s with forced balance on the same row), 16 bytes per hidden element of
each token copy (a BF16 write and read, forward and backward, at dispatch and combine), 200 us
of fixed work per MoE layer and micro-batch (a few dozen kernels at a few microseconds each)."""


def with_moe(cal: Calibration, x: Sequence[float]) -> Calibration:
    """``cal`` with the MoE constants set to ``x`` (in ``NAMES`` order; the overhead in us)."""
    values = {name: float(v) for name, v in zip(NAMES, x, strict=True)}
    values["layer_overhead_s"] = values.pop("layer_overhead_us") * 1e-6
    return replace(cal, moe=replace(cal.moe, **values))


def residuals(x: np.ndarray, items: Sequence[Item], base: Calibration) -> np.ndarray:
    """Weighted log errors of ``items`` and the prior pull."""
    cal = with_moe(base, x)
    counts: dict[str, int] = {}
    for it in items:
        counts[it.group] = counts.get(it.group, 0) + 1
    errs = [
        math.log(predict(it.expressed, cal) / it.measured) / math.sqrt(counts[it.group])
        for it in items
    ]
    return np.concatenate([np.array(errs), PRIOR_WEIGHT * (x - START) / (HIGH - LOW)])


def fit(items: Sequence[Item], base: Calibration) -> np.ndarray:
    """Least-squares fit of the two constants on ``items``."""
    result = least_squares(
        residuals,
        START,
        bounds=(LOW, HIGH),
        args=(items, base),
        loss="soft_l1",
        f_scale=0.1,
        diff_step=1e-3,
        x_scale=HIGH - LOW,
    )
    return np.asarray(result.x)


def holdout(items: Sequence[Item], base: Calibration) -> list[PointResult]:
    """Each source group predicted by constants fitted on the other groups."""
    rows: list[PointResult] = []
    for group in sorted({it.group for it in items}):
        train = [it for it in items if it.group != group]
        held = [it for it in items if it.group == group]
        cal = with_moe(base, fit(train, base) if train else START)
        print(f"holding out {len(held)} points of {group}")
        rows.extend(result_for(it.point, it.expressed, predict(it.expressed, cal)) for it in held)
    return rows


def _figures(key: str, fig: ErrorFigures) -> list[str]:
    return [
        "",
        f'[moe.figures."{key}"]',
        f"points = {fig.points}",
        f"median_abs_error_pct = {fig.median_abs_error_pct:.2f}",
        f"p90_abs_error_pct = {fig.p90_abs_error_pct:.2f}",
        f"optimistic_share = {fig.optimistic_share:.3f}",
        f"median_signed_error_pct = {fig.median_signed_error_pct:.2f}",
    ]


def render(x: Sequence[float], figures: Mapping[str, ErrorFigures], groups: Sequence[str]) -> str:
    """The ``[moe]`` tables."""
    sources = (
        "expert_efficiency, all_to_all_exposed, dropless_imbalance, permute_bytes and "
        "layer_overhead_us fitted together by scripts/calibrate_moe.py on the expressed MoE "
        "training points (source groups: "
        + ", ".join(groups)
        + "); dense constants untouched; held-out: leave one source group out"
    )
    lines = ["[moe]", *(f"{name} = {float(v):.4g}" for name, v in zip(NAMES, x, strict=True))]
    lines.append(f"sources = {json.dumps(sources)}")
    for key, fig in figures.items():
        lines.extend(_figures(key, fig))
    return "\n".join(lines) + "\n"


def write(tail: str) -> None:
    """Replace the ``[moe]`` tables of data/calibration.toml with ``tail``."""
    path = DATA / "calibration.toml"
    text = path.read_text(encoding="utf-8")
    start = text.find("\n[moe]")
    head = text[: start + 1] if start >= 0 else text.rstrip("\n") + "\n"
    new = head + "\n" + tail if not head.endswith("\n\n") else head + tail
    parse_calibration(new)  # the project's loader must accept what we write
    path.write_text(new, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report, do not fit")
    args = parser.parse_args(argv)
    base = load_calibration(DATA)
    items = [
        it
        for it in expressed_items(load_points(), load_gpus())
        if it.expressed.moe and not it.point.get("exclude_from_fit")
    ]
    if args.check:
        rows = [result_for(it.point, it.expressed, predict(it.expressed, base)) for it in items]
        print_rows(rows)
        print_figures("moe in-sample", rows, base)
        return 0
    x = fit(items, base)
    held = holdout(items, base)
    cal = with_moe(base, x)
    rows = [result_for(it.point, it.expressed, predict(it.expressed, cal)) for it in items]
    figures = {"in_sample": summarise(rows), "holdout": summarise(held)}
    groups = sorted({it.group for it in items})
    write(render(x, figures, groups))
    print_rows(rows)
    print("held out:")
    print_rows(held)
    print(", ".join(f"{name} {float(v):.4g}" for name, v in zip(NAMES, x, strict=True)))
    print_figures("moe in-sample", rows, cal)
    print_figures("moe holdout", held, cal)
    return 0


_ = MoeCalibration  # the type whose two fields this script fits

if __name__ == "__main__":
    raise SystemExit(main())
