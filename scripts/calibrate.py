#!/usr/bin/env python3
"""Fit the model's calibration constants on data/measurements.json and write data/calibration.toml.

Usage::

    .venv/bin/python scripts/calibrate.py            # fit, write data/calibration.toml, report
    .venv/bin/python scripts/calibrate.py --check    # only report with the current file
    .venv/bin/python scripts/calibrate.py --holdout 5  # out-of-sample error, writes nothing

What it does:
1. Reads the ``points`` of data/measurements.json and the GPUs of data/gpus.toml.
2. Starts from the values in ``START`` and, by cyclic coordinate search inside the bounds of
   ``FITTED``, minimises the mean absolute log error of ``check()`` over the expressed points,
   leaving out the points the dataset itself marks as not for fitting (``_outlier``), plus the
   intra-node size series quoted in the notes of nccl-dgxh100-1node-16GiB (``SERIES``).
   Constants in ``FIXED`` are not fitted; each says where its value comes from.
3. Writes data/calibration.toml with a ``sources`` note per group and the check-model errors
   (median and p90 over *all* expressed points, outliers included), re-reads it with the
   project's loader and prints the per-point table.

Only data/measurements.json is used as evidence. The fit is deterministic.

``--holdout K`` estimates the error on measurements the fit has not seen: the points are
grouped by where they come from (the repository, paper or talk named first in ``source``, so
several rows of one table never straddle the split), the groups are dealt into K folds, and each
fold is predicted by constants fitted on the other K-1. It prints the held-out median and p90.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from clusterscout.catalog.calibration import load_calibration, parse_calibration  # noqa: E402
from clusterscout.domain.models import FabricKind, GpuSpec  # noqa: E402
from clusterscout.model.calibration import (  # noqa: E402
    Calibration,
    FabricCalibration,
    IntraNodeCalibration,
    TrainingCalibration,
    UtilisationCurve,
)
from clusterscout.model.checkmodel import CheckReport, check, percentile  # noqa: E402
from clusterscout.model.collectives import CollectiveResult, collective  # noqa: E402
from clusterscout.model.inputs import (  # noqa: E402
    Algorithm,
    ClusterSpec,
    CollectiveOp,
    CollectiveWorkload,
)

DATA = ROOT / "data"

# name: (start, low, high). Latencies in microseconds.
FITTED: dict[str, tuple[float, float, float]] = {
    "intra.ring_efficiency": (0.8, 0.5, 1.0),
    "intra.nvls_efficiency": (1.0, 0.7, 1.2),
    "intra.latency_us": (14.0, 5.0, 60.0),
    "intra.ramp_latency_us": (60.0, 5.0, 300.0),
    "protocol.ll_bandwidth_fraction": (0.1, 0.02, 0.5),
    "ib.bus_efficiency": (0.95, 0.7, 1.0),
    "ib.ramp_latency_us": (200.0, 10.0, 1000.0),
    "roce.bus_efficiency": (0.92, 0.7, 1.0),
    "efa.bus_efficiency": (0.95, 0.7, 1.0),
    "efa.latency_us": (50.0, 10.0, 200.0),
    "efa.ramp_latency_us": (450.0, 50.0, 2000.0),
    "tcpxo.bus_efficiency": (0.85, 0.5, 1.0),
    "tcpxo.latency_us": (120.0, 30.0, 400.0),
    "rdma.overlap": (0.85, 0.7, 0.95),
    "intra.overlap": (0.9, 0.7, 0.95),
    "util.a100.u_max": (0.6, 0.3, 1.0),
    "util.a100.hidden_half": (500.0, 0.0, 8000.0),
    "util.h100.u_max": (0.6, 0.3, 1.0),
    "util.h100.hidden_half": (500.0, 0.0, 8000.0),
    "training.fp8_speedup": (1.3, 1.0, 2.0),
    "training.tp_overlap": (0.3, 0.0, 0.95),
}

FIXED: dict[str, tuple[float, str]] = {
    "ib.latency_us": (
        30.0,
        "notes of nccl-nebius-h100-2node-8GiB (small-message time ~30 us; the point itself "
        "lacks the NIC rate)",
    ),
    "tcpx.bus_efficiency": (
        0.55,
        "no TCPX point in measurements.json; perf-model-notes §2.3 (A3 High all-gather "
        "~53.5 GB/s algbw on 4x200G GPU NICs)",
    ),
    "ethernet.bus_efficiency": (0.8, "nccl-ref-100gbe-tcp (10 of 12.5 GB/s, 80% of line rate)"),
    "ethernet.busbw_cap_gbs": (
        19.0,
        "nccl-gcp-a3-no-tcpx-2node (18.97 GB/s busbw over a 1000 Gbit/s VM NIC: sockets, "
        "not the NIC, set the ceiling)",
    ),
    "tcp.overlap": (0.5, "perf-model-notes §3.2 (w ~ 0.5 for TCP-class fabrics); no point"),
    "intra.pcie_busbw_gbs": (24.0, "nccl-ref-1node-pcie-gen5 slide: PCIe Gen4 24 GB/s"),
    "protocol.no_gpudirect_factor": (
        0.5,
        "assumption: no GPUDirect RDMA A/B in measurements.json (perf-model-notes §4 gap); "
        "staging through host memory roughly halves usable bandwidth",
    ),
    "training.cp_overlap": (
        0.5,
        "assumption: ring attention overlaps KV exchange with attention (Megatron-Core CP "
        "docs); only the DGXC cp=2 points constrain it",
    ),
    "training.dp_bucket_mb": (80.0, "Megatron-LM DDP bucket of 40M BF16 elements"),
    "training.usable_memory_fraction": (
        0.9,
        "assumption: CUDA context, NCCL buffers and allocator fragmentation take ~10%",
    ),
}

NVLS_GPUS = (
    "H100-SXM-80GB",
    "H200-SXM-141GB",
    "B200-SXM-180GB",
    "B300-SXM-288GB",
    "GB200-186GB",
    "GB300-288GB",
)

SERIES: tuple[tuple[str, str, float, float], ...] = (
    # (point whose notes quote it, GPU, message bytes, busbw GB/s) — intra-node H100, NVLS.
    ("nccl-dgxh100-1node-16GiB", "H100-SXM-80GB", 16 * 2**20, 237.21),
    ("nccl-dgxh100-1node-16GiB", "H100-SXM-80GB", 128 * 2**20, 400.53),
    ("nccl-dgxh100-1node-16GiB", "H100-SXM-80GB", 2**30, 466.33),
)

SOURCES = {
    "protocol": (
        "ll_bandwidth_fraction fitted so 8-byte latencies (nccl-dgxh100-1node-latency, "
        "nccl-p6b200-2node-latency, nccl-a3mega-2node-latency) and mid-size EFA points "
        "(nccl-p6b200-4node-16MiB/64MiB) hold together (it sits at its lower bound 0.02: the "
        "low-latency protocol only matters for tiny messages); no_gpudirect_factor: {gdr}"
    ),
    "intra_node": (
        "fitted on nccl-ref-1node-a100/h100/h100-nvls/b200/b200-nvls, nccl-a100-1node-16GiB, "
        "nccl-h200-1node-ring-16GiB, nccl-dgxh100-1node-16GiB (+ the 16 MiB/128 MiB/1 GiB "
        "series in its notes), nccl-dgxh100-1node-latency; nvls_gpus: NVSwitch systems with "
        "NVLink SHARP (NVIDIA HGX H100/H200/B200 docs); pcie_busbw_gbs: {pcie}; overlap fitted "
        "on the one-node training points (mpt-*-8, korthikanti-tab5-22B) within 0.7-0.95"
    ),
    "infiniband": (
        "bus_efficiency and ramp fitted on nccl-ref-dgxa100-multinode, "
        "nccl-ref-dgxh100-multinode, nccl-ndr-per-nic-expectation, nccl-a100-3node-4xhdr, "
        "nccl-a100-2node-4x200g, nccl-nvlstree-32gpu-128MiB; latency: {iblat}; overlap shared "
        "by RDMA fabrics, fitted on the multi-node training points within the 0.7-0.95 range "
        "of perf-model-notes §3.2 (the points barely constrain it)"
    ),
    "roce": (
        "bus_efficiency fitted on nccl-gcp-a4-2node-8GiB (2-node tree); latency and ramp as "
        "InfiniBand (no small/mid-size RoCE point); overlap shared by RDMA fabrics"
    ),
    "efa": (
        "fitted on nccl-p6b200-4node-16MiB/64MiB/4GiB and nccl-p6b200-2node-latency "
        "(nccl-p4dn-4node-nccl299 is a flagged outlier, not fitted)"
    ),
    "tcpxo": (
        "fitted on nccl-a3mega-2node-allgather-8GiB (per_node_gbps = 1800 as stated, the VM "
        "total) and nccl-a3mega-2node-latency; ramp as EFA (no mid-size point)"
    ),
    "tcpx": "bus_efficiency: {tcpx}; latency and ramp as TCPXO",
    "ethernet": (
        "bus_efficiency: {eth}; busbw_cap_gbs: {cap}; latency and ramp as TCPXO; overlap: {tcpov}"
    ),
    "utilisation.A100": (
        "fitted on the A100 training points: megatron2021-*, megatron-readme-175B-1024, "
        "mtnlg-*, korthikanti-tab5-*, mpt-7b-a100-40gb-roce-*"
    ),
    "utilisation.H100": (
        "fitted on the H100 training points: dgxc-llama31-*, dgxc-gpt3-175b-bf16-2048, "
        "mpt-7b-h100-8, mpt-13b-h100-noac-8; also used for H200 (same SM)"
    ),
    "utilisation.default": (
        "no training point for other GPUs in measurements.json: the H100 curve is borrowed"
    ),
    "training": (
        "fp8_speedup fitted on dgxc-llama31-70b-fp8-2048 against the BF16 DGXC points; "
        "tp_overlap fitted on all TP points; cp_overlap: {cpov}; dp_bucket_mb: {bucket}; "
        "usable_memory_fraction: {mem}"
    ),
    "check": (
        "clusterscout check-model on data/measurements.json at calibration time; holdout_*: "
        "each point predicted by constants fitted without its source group "
        "(scripts/calibrate.py --holdout, K folds); the planner's error band is the held-out p90"
    ),
}


def load_gpus() -> tuple[GpuSpec, ...]:
    """GPU figures from data/gpus.toml (only the fields the model uses)."""
    raw = tomllib.loads((DATA / "gpus.toml").read_text(encoding="utf-8"))
    return tuple(
        GpuSpec(
            name=g["name"],
            vendor=g.get("vendor", ""),
            memory_gib=g["memory_gib"],
            aliases=tuple(g.get("aliases", ())),
            bf16_dense_tflops=g.get("bf16_dense_tflops"),
            fp8_dense_tflops=g.get("fp8_dense_tflops"),
            scale_up_gbs=g.get("scale_up_gbs"),
        )
        for g in raw["gpus"]
    )


def load_points() -> list[dict[str, Any]]:
    """The measurement points."""
    data = json.loads((DATA / "measurements.json").read_text(encoding="utf-8"))
    points: list[dict[str, Any]] = data["points"]
    return points


def _outlier(point: Mapping[str, Any]) -> bool:
    notes = str(point.get("notes", "")).lower()
    return "do not fit" in notes or "not for fitting" in notes


def build(v: Mapping[str, float]) -> Calibration:
    """A Calibration from fitted values ``v`` and ``FIXED``."""
    f = {k: val for k, (val, _) in FIXED.items()}

    def fab(
        eff: float, lat: float, ramp: float, overlap: float, cap: float | None = None
    ) -> FabricCalibration:
        return FabricCalibration(eff, lat * 1e-6, ramp * 1e-6, overlap, cap)

    rdma, tcp = v["rdma.overlap"], f["tcp.overlap"]
    tcpxo_lat, efa_ramp = v["tcpxo.latency_us"], v["efa.ramp_latency_us"]
    h100 = UtilisationCurve(v["util.h100.u_max"], v["util.h100.hidden_half"])
    return Calibration(
        fabrics={
            FabricKind.INFINIBAND: fab(
                v["ib.bus_efficiency"], f["ib.latency_us"], v["ib.ramp_latency_us"], rdma
            ),
            FabricKind.ROCE: fab(
                v["roce.bus_efficiency"], f["ib.latency_us"], v["ib.ramp_latency_us"], rdma
            ),
            FabricKind.EFA: fab(v["efa.bus_efficiency"], v["efa.latency_us"], efa_ramp, rdma),
            FabricKind.TCPXO: fab(v["tcpxo.bus_efficiency"], tcpxo_lat, efa_ramp, rdma),
            FabricKind.TCPX: fab(f["tcpx.bus_efficiency"], tcpxo_lat, efa_ramp, tcp),
            FabricKind.ETHERNET: fab(
                f["ethernet.bus_efficiency"],
                tcpxo_lat,
                efa_ramp,
                tcp,
                f["ethernet.busbw_cap_gbs"],
            ),
        },
        intra_node=IntraNodeCalibration(
            ring_efficiency=v["intra.ring_efficiency"],
            nvls_efficiency=v["intra.nvls_efficiency"],
            nvls_gpus=NVLS_GPUS,
            pcie_busbw_gbs=f["intra.pcie_busbw_gbs"],
            latency_s=v["intra.latency_us"] * 1e-6,
            ramp_latency_s=v["intra.ramp_latency_us"] * 1e-6,
            overlap=v["intra.overlap"],
        ),
        utilisation={
            "A100-SXM-80GB": UtilisationCurve(v["util.a100.u_max"], v["util.a100.hidden_half"]),
            "A100-SXM-40GB": UtilisationCurve(v["util.a100.u_max"], v["util.a100.hidden_half"]),
            "H100-SXM-80GB": h100,
            "H200-SXM-141GB": h100,
        },
        default_utilisation=h100,
        training=TrainingCalibration(
            fp8_speedup=v["training.fp8_speedup"],
            tp_overlap=v["training.tp_overlap"],
            cp_overlap=f["training.cp_overlap"],
            dp_bucket_bytes=f["training.dp_bucket_mb"] * 1e6,
            usable_memory_fraction=f["training.usable_memory_fraction"],
        ),
        ll_bandwidth_fraction=v["protocol.ll_bandwidth_fraction"],
        no_gpudirect_factor=f["protocol.no_gpudirect_factor"],
        median_abs_error_pct=0.0,
        p90_abs_error_pct=0.0,
    )


def _series_errors(cal: Calibration, gpus: tuple[GpuSpec, ...]) -> list[float]:
    by_name = {g.name: g for g in gpus}
    errors = []
    for _, gpu_name, size, busbw in SERIES:
        cluster = ClusterSpec(gpu=by_name[gpu_name], gpus_per_node=8, nodes=1)
        res: CollectiveResult = collective(
            cluster, CollectiveWorkload(CollectiveOp.ALL_REDUCE, size, Algorithm.AUTO), cal
        )
        errors.append(abs(math.log(res.busbw_gbs / busbw)))
    return errors


def objective(
    v: Mapping[str, float], points: list[dict[str, Any]], gpus: tuple[GpuSpec, ...]
) -> float:
    """Mean absolute log error over fitted points and the notes series."""
    cal = build(v)
    report = check([p for p in points if not _outlier(p)], gpus, cal)
    errors = [abs(math.log(r.predicted / r.measured)) for r in report.results]
    errors += _series_errors(cal, gpus)
    return sum(errors) / len(errors)


def fit(
    points: list[dict[str, Any]], gpus: tuple[GpuSpec, ...], rounds: int = 6
) -> dict[str, float]:
    """Cyclic coordinate search: per parameter try +-step, halve the step when stuck."""
    v = {k: start for k, (start, _, _) in FITTED.items()}
    steps = {k: (hi - lo) / 4 for k, (_, lo, hi) in FITTED.items()}
    best = objective(v, points, gpus)
    for _ in range(rounds):
        for key, (_, lo, hi) in FITTED.items():
            improved = True
            while improved and steps[key] > (hi - lo) / 512:
                improved = False
                for sign in (1.0, -1.0):
                    trial = dict(v)
                    trial[key] = min(hi, max(lo, v[key] + sign * steps[key]))
                    score = objective(trial, points, gpus)
                    if score < best - 1e-9:
                        v, best, improved = trial, score, True
                        break
                if not improved:
                    steps[key] /= 2
                    improved = True
        steps = {k: max(s, (FITTED[k][2] - FITTED[k][1]) / 64) for k, s in steps.items()}
    print(f"objective (mean |log error|): {best:.4f}")
    return v


# Folds of the out-of-sample estimate written with every fit.
HOLDOUT_FOLDS = 5


def source_group(point: Mapping[str, Any]) -> str:
    """Where a point comes from: the first word of ``source`` (a repo, paper or talk)."""
    words = str(point.get("source", "")).replace("'", " ").split()
    return words[0].rstrip(",;:").lower() if words else str(point["id"])


def folds(points: list[dict[str, Any]], k: int) -> list[list[dict[str, Any]]]:
    """Deal whole source groups into ``k`` folds, largest group first, to the smallest fold."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for p in points:
        groups.setdefault(source_group(p), []).append(p)
    out: list[list[dict[str, Any]]] = [[] for _ in range(k)]
    for name in sorted(groups, key=lambda g: (-len(groups[g]), g)):
        min(out, key=len).extend(groups[name])
    return out


def holdout(points: list[dict[str, Any]], gpus: tuple[GpuSpec, ...], k: int) -> CheckReport:
    """Predict each fold with constants fitted on the others; one report over all folds."""
    results = []
    unexpressed = []
    for i, held in enumerate(folds(points, k)):
        held_ids = {p["id"] for p in held}
        train = [p for p in points if p["id"] not in held_ids]
        print(f"fold {i + 1}/{k}: fitting on {len(train)} points, holding out {len(held)}")
        report = check(held, gpus, build(fit(train, gpus)))
        results.extend(report.results)
        unexpressed.extend(report.unexpressed)
    errors = [r.abs_error_pct for r in results]
    return CheckReport(
        results=tuple(results),
        unexpressed=tuple(unexpressed),
        median_abs_error_pct=percentile(errors, 50.0),
        p90_abs_error_pct=percentile(errors, 90.0),
    )


def _r(x: float) -> str:
    return f"{x:.4g}"


def render(
    v: Mapping[str, float], report: CheckReport, held: CheckReport | None = None, k: int = 0
) -> str:
    """The TOML text of data/calibration.toml."""
    f = {k: val for k, (val, _) in FIXED.items()}
    why = {k: why for k, (_, why) in FIXED.items()}
    src = {
        k: s.format(
            gdr=why["protocol.no_gpudirect_factor"],
            pcie=why["intra.pcie_busbw_gbs"],
            iblat=why["ib.latency_us"],
            tcpx=why["tcpx.bus_efficiency"],
            eth=why["ethernet.bus_efficiency"],
            cap=why["ethernet.busbw_cap_gbs"],
            tcpov=why["tcp.overlap"],
            cpov=why["training.cp_overlap"],
            bucket=why["training.dp_bucket_mb"],
            mem=why["training.usable_memory_fraction"],
        )
        for k, s in SOURCES.items()
    }
    rdma = _r(v["rdma.overlap"])
    lines = [
        "# Model calibration constants. Written by scripts/calibrate.py from",
        "# data/measurements.json; do not edit by hand (re-run the script). See docs/model.md.",
        "schema_version = 1",
        'note = "Measurement ids refer to data/measurements.json (a copy of '
        'research/measurements.json)."',
        "",
        "[protocol]",
        f"ll_bandwidth_fraction = {_r(v['protocol.ll_bandwidth_fraction'])}",
        f"no_gpudirect_factor = {_r(f['protocol.no_gpudirect_factor'])}",
        f"sources = {json.dumps(src['protocol'])}",
        "",
        "[intra_node]",
        f"ring_efficiency = {_r(v['intra.ring_efficiency'])}",
        f"nvls_efficiency = {_r(v['intra.nvls_efficiency'])}",
        f"nvls_gpus = {json.dumps(list(NVLS_GPUS))}",
        f"pcie_busbw_gbs = {_r(f['intra.pcie_busbw_gbs'])}",
        f"latency_us = {_r(v['intra.latency_us'])}",
        f"ramp_latency_us = {_r(v['intra.ramp_latency_us'])}",
        f"overlap = {_r(v['intra.overlap'])}",
        f"sources = {json.dumps(src['intra_node'])}",
    ]

    def fabric(name: str, eff: float, lat: float, ramp: float, ov: str, cap: float | None) -> None:
        lines.extend(
            [
                "",
                f"[fabrics.{name}]",
                f"bus_efficiency = {_r(eff)}",
                f"latency_us = {_r(lat)}",
                f"ramp_latency_us = {_r(ramp)}",
                f"overlap = {ov}",
            ]
        )
        if cap is not None:
            lines.append(f"busbw_cap_gbs = {_r(cap)}")
        lines.append(f"sources = {json.dumps(src[name])}")

    efa_ramp, tcpxo_lat = v["efa.ramp_latency_us"], v["tcpxo.latency_us"]
    tcp = _r(f["tcp.overlap"])
    fabric(
        "infiniband",
        v["ib.bus_efficiency"],
        f["ib.latency_us"],
        v["ib.ramp_latency_us"],
        rdma,
        None,
    )
    fabric(
        "roce", v["roce.bus_efficiency"], f["ib.latency_us"], v["ib.ramp_latency_us"], rdma, None
    )
    fabric("efa", v["efa.bus_efficiency"], v["efa.latency_us"], efa_ramp, rdma, None)
    fabric("tcpxo", v["tcpxo.bus_efficiency"], tcpxo_lat, efa_ramp, rdma, None)
    fabric("tcpx", f["tcpx.bus_efficiency"], tcpxo_lat, efa_ramp, tcp, None)
    fabric(
        "ethernet",
        f["ethernet.bus_efficiency"],
        tcpxo_lat,
        efa_ramp,
        tcp,
        f["ethernet.busbw_cap_gbs"],
    )

    def curve(name: str, u_max: float, half: float, source: str) -> None:
        lines.extend(
            [
                "",
                f'[utilisation."{name}"]',
                f"u_max = {_r(u_max)}",
                f"hidden_half = {_r(half)}",
                f"sources = {json.dumps(source)}",
            ]
        )

    a100 = (v["util.a100.u_max"], v["util.a100.hidden_half"])
    h100 = (v["util.h100.u_max"], v["util.h100.hidden_half"])
    curve("default", *h100, src["utilisation.default"])
    curve("A100-SXM-80GB", *a100, src["utilisation.A100"])
    curve("A100-SXM-40GB", *a100, src["utilisation.A100"])
    curve("H100-SXM-80GB", *h100, src["utilisation.H100"])
    curve("H200-SXM-141GB", *h100, src["utilisation.H100"])
    lines.extend(
        [
            "",
            "[training]",
            f"fp8_speedup = {_r(v['training.fp8_speedup'])}",
            f"tp_overlap = {_r(v['training.tp_overlap'])}",
            f"cp_overlap = {_r(f['training.cp_overlap'])}",
            f"dp_bucket_mb = {_r(f['training.dp_bucket_mb'])}",
            f"usable_memory_fraction = {_r(f['training.usable_memory_fraction'])}",
            f"sources = {json.dumps(src['training'])}",
            "",
            "[check]",
            f"median_abs_error_pct = {report.median_abs_error_pct:.2f}",
            f"p90_abs_error_pct = {report.p90_abs_error_pct:.2f}",
            f"expressed = {len(report.results)}",
            f"total = {report.total}",
            *(
                [
                    f"holdout_median_abs_error_pct = {held.median_abs_error_pct:.2f}",
                    f"holdout_p90_abs_error_pct = {held.p90_abs_error_pct:.2f}",
                    f"holdout_folds = {k}",
                ]
                if held is not None
                else []
            ),
            f"sources = {json.dumps(src['check'])}",
            "",
        ]
    )
    return "\n".join(lines)


def print_report(report: CheckReport) -> None:
    """Per-point table, unexpressed points, then the summary line."""
    for r in sorted(report.results, key=lambda r: r.abs_error_pct):
        print(
            f"{r.id:42s} {r.measured:>10.4g} {r.predicted:>10.4g} {r.unit:>9s} "
            f"{r.abs_error_pct:6.1f}%  {r.confidence}"
        )
    for u in report.unexpressed:
        print(f"not expressed: {u.id}: {u.reason}")
    print(
        f"expressed {len(report.results)}/{report.total}; "
        f"median {report.median_abs_error_pct:.2f}%, p90 {report.p90_abs_error_pct:.2f}%"
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report, do not fit")
    parser.add_argument(
        "--holdout", type=int, metavar="K", help="K-fold out-of-sample error; writes nothing"
    )
    args = parser.parse_args(argv)
    points, gpus = load_points(), load_gpus()
    if args.holdout is not None:
        if args.holdout < 2:
            parser.error("--holdout: K must be at least 2")
        report = holdout(points, gpus, args.holdout)
        print_report(report)
        print("(held out: every prediction above comes from constants fitted without its group)")
        return 0
    if args.check:
        print_report(check(points, gpus, load_calibration(DATA)))
        return 0
    values = fit(points, gpus)
    report = check(points, gpus, build(values))
    held = holdout(points, gpus, HOLDOUT_FOLDS)
    text = render(values, report, held, HOLDOUT_FOLDS)
    parse_calibration(text)  # the project's loader must accept what we write
    (DATA / "calibration.toml").write_text(text, encoding="utf-8")
    print_report(check(points, gpus, load_calibration(DATA)))
    return 0


_: Callable[..., object] = main

if __name__ == "__main__":
    raise SystemExit(main())
