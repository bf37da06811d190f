#!/usr/bin/env python3
"""Fit the model's calibration constants on data/measurements.json and write data/calibration.toml.

Usage::

    .venv/bin/python scripts/calibrate.py            # fit, measure held-out error, write
    .venv/bin/python scripts/calibrate.py --check    # only report with the current file
    .venv/bin/python scripts/calibrate.py --holdout 8  # held-out error with 8 folds; writes nothing

What it does:
1. Reads the ``points`` of data/measurements.json and the GPUs of data/gpus.toml and expresses
   every point it can (``clusterscout.model.checkmodel.express``).
2. Fits the constants of ``FITTED``, and the level of every GPU family (``families.py``)
   that has points, inside their bounds with ``scipy.optimize.least_squares``
   (robust ``soft_l1`` loss on log errors). Each point is weighted ``1/sqrt(n)`` where ``n`` is
   the number of fitted points of its source group, so a source with many rows (llm-foundry,
   NVIDIA's DGXC tables) counts like a few points, not like dozens. On top of the absolute
   errors, every scaling series adds the error of each point's ratio to the series' smallest
   run: these ratios carry the losses that grow with scale and cancel what the series shares
   (its software vintage). A weak pull towards each constant's start value (its physical
   prior) keeps constants without data where physics puts them, and a pull of each family's
   level towards its prior (a measured ratio to a sibling family, ``families.py``) keeps a
   family with few points near that ratio; a family without points takes its prior.
   Points marked ``exclude_from_fit`` and the source groups of ``TEST_SOURCES`` are never
   fitted. Constants in ``FIXED`` are not fitted; each says where its value comes from.
3. Measures the error on data the fit has not seen: the fitted source groups are dealt into
   ``HOLDOUT_FOLDS`` folds (whole groups, so the rows of one table never straddle the split)
   and each fold is predicted by constants refitted on the others. The ``TEST_SOURCES`` groups
   are predicted by the final constants, which never saw them.
4. Writes data/calibration.toml with a ``sources`` note per group, each family's level, its
   points and whether it is calibrated (at least ``MIN_FAMILY_POINTS`` fitted points), and
   the error figures (in-sample, held out, test; each overall, per stack and per family, with
   the signed bias), re-reads it with the project's loader and prints the per-point table.

Only data/measurements.json is used as evidence. The fit is deterministic.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from clusterscout.catalog.calibration import load_calibration, parse_calibration  # noqa: E402
from clusterscout.domain.models import FabricKind, GpuSpec  # noqa: E402
from clusterscout.model.calibration import (  # noqa: E402
    MIN_FAMILY_POINTS,
    Calibration,
    ErrorFigures,
    FabricCalibration,
    FamilyCalibration,
    IntraNodeCalibration,
    StackCalibration,
    TrainingCalibration,
)
from clusterscout.model.checkmodel import (  # noqa: E402
    CheckReport,
    Expressed,
    PointResult,
    UnexpressibleError,
    check,
    express,
    figures_by_family,
    figures_by_stack,
    predict,
    result_for,
    source_group,
    summarise,
)
from clusterscout.model.collectives import collective  # noqa: E402
from clusterscout.model.inputs import (  # noqa: E402
    Algorithm,
    ClusterSpec,
    CollectiveOp,
    CollectiveWorkload,
    Stack,
)

DATA = ROOT / "data"

from families import DEFAULT_PRIOR, FAMILIES, REFERENCE, family_of, prior_levels  # noqa: E402

# name: (start, low, high). Latencies in microseconds. The start is the physical prior.
FITTED: dict[str, tuple[float, float, float]] = {
    "intra.ring_efficiency": (0.8, 0.5, 1.0),
    "intra.nvls_efficiency": (1.0, 0.7, 1.2),
    "intra.latency_us": (14.0, 5.0, 60.0),
    "intra.ramp_latency_us": (60.0, 5.0, 300.0),
    "protocol.ll_bandwidth_fraction": (0.1, 0.02, 0.5),
    "ib.bus_efficiency": (0.93, 0.7, 1.0),
    "ib.ramp_latency_us": (200.0, 10.0, 1000.0),
    "roce.bus_efficiency": (0.92, 0.7, 1.0),
    "efa.bus_efficiency": (0.93, 0.7, 1.0),
    "efa.latency_us": (50.0, 10.0, 200.0),
    "efa.ramp_latency_us": (450.0, 50.0, 2000.0),
    "tcpxo.bus_efficiency": (0.85, 0.5, 1.0),
    "tcpxo.latency_us": (120.0, 30.0, 400.0),
    "stack.pytorch.level": (1.0, 0.4, 1.3),
    "stack.deepspeed.level": (1.0, 0.4, 1.3),
    "stack.megatron.dp_overlap": (0.9, 0.3, 1.0),
    "stack.pytorch.dp_overlap": (0.8, 0.3, 1.0),
    "stack.deepspeed.dp_overlap": (0.7, 0.3, 1.0),
    "stack.megatron.tp_overlap": (0.5, 0.0, 0.95),
    "stack.pytorch.tp_overlap": (0.2, 0.0, 0.95),
    "stack.deepspeed.tp_overlap": (0.0, 0.0, 0.95),
    "stack.overlap_slowdown": (0.1, 0.0, 1.0),
    "training.gemm_width_half": (100.0, 0.0, 2000.0),
    "training.gemm_tokens_half": (200.0, 0.0, 4000.0),
    "training.hidden_half": (300.0, 50.0, 1000.0),
    "training.attention_efficiency": (0.8, 0.3, 1.0),
    "training.unfused_attention_bytes": (32.0, 0.0, 200.0),
    "training.fp8_speedup": (1.4, 1.0, 2.0),
    "training.straggler_sigma": (0.005, 0.0, 0.05),
}
"""Global constants: name -> (start, low, high). Each family with points adds
``level.<family>`` (``LEVEL_RANGE``)."""

LEVEL_RANGE = (0.6, 0.2, 1.0)
"""Start and bounds of a family's level (``u_max`` under Megatron)."""
ATTENTION_RANGE = (0.8, 0.2, 1.0)
"""Start and bounds of a family's attention efficiency (never faster than its GEMMs)."""

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
    "rdma.overlap": (
        1.0,
        "reference: RDMA fabrics move data without the CPU, so the stack's own overlap applies",
    ),
    "tcp.overlap": (
        0.6,
        "perf-model-notes §3.2 (overlap ~0.5 on TCP-class fabrics against ~0.85 on RDMA); no "
        "training point on a TCP fabric",
    ),
    "intra.pcie_busbw_gbs": (24.0, "nccl-ref-1node-pcie-gen5 slide: PCIe Gen4 24 GB/s"),
    "protocol.no_gpudirect_factor": (
        0.5,
        "assumption: no GPUDirect RDMA A/B in measurements.json (perf-model-notes §4 gap); "
        "staging through host memory roughly halves usable bandwidth",
    ),
    "training.cp_overlap": (
        0.5,
        "assumption: ring attention overlaps KV exchange with attention (Megatron-Core CP "
        "docs); few context-parallel points constrain it",
    ),
    "training.dp_bucket_mb": (80.0, "Megatron-LM DDP bucket of 40M BF16 elements"),
    "training.usable_memory_fraction": (
        0.9,
        "assumption: CUDA context, NCCL buffers and allocator fragmentation take ~10%",
    ),
    "training.roofline_exponent": (
        1.0,
        "the roofline (Williams et al. 2009): memory-bound work costs bytes, GEMMs cost FLOPs, "
        "so their time ratio follows the GPU's FLOPs per byte; fitted freely it moved between "
        "0.8 and 1.5 from one run to the next with the same error (the levels absorb it), so "
        "it is held at the physical value",
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

TEST_SOURCES: tuple[str, ...] = (
    "github.com/NVIDIA-NeMo/Megatron-Bridge",
    "trainy-whitefiber-2025",
    "huggingface.co/bigscience",
    "github.com/coreweave/nccl-tests",
)
"""Source groups never used for fitting: the final test set, one per stack plus nccl-tests logs:
a recent Megatron-Bridge table, Trainy/WhiteFiber's torchtitan runs on H200, the BLOOM model
card and CoreWeave's nccl-tests logs. (The torchtitan team's own benchmarks were the PyTorch
test source at first; they moved into the fit because they are the main PyTorch-on-Hopper
evidence, and the test source became the Trainy runs.)"""

HOLDOUT_FOLDS = 0
"""Folds of the held-out estimate; 0 is one fold per source group (leave one source out)."""

PRIOR_WEIGHT = 0.02
"""Weight of the pull of each fitted constant towards its start, per unit of its range."""

POOLS: tuple[tuple[str, float, float], ...] = (
    ("stack.pytorch.level", 1.0, 0.1),
    ("stack.deepspeed.level", 1.0, 0.1),
)
"""Partial pooling: a weak pull (weight per unit of log ratio) of each stack's level towards
parity with Megatron: a stack with data of its own keeps its own level, one whose only source
is held out falls back to 'stacks are alike' instead of to an arbitrary start."""

FAMILY_POOL = 0.5
"""Weight (per unit of log ratio) of the pull of a family's level towards its prior, the
measured ratio to its sibling's level (``families.py``): a family with many points keeps its
own level, one with few stays near the ratio, one whose only source is held out takes it."""

SERIES_WEIGHT = 1.0
"""Weight of a series' ratio errors relative to the absolute errors of its points."""

RATIO_WEIGHT = 3.0
"""Weight of a published cross-GPU ratio's error (the two points' speed errors apart),
relative to the absolute error of its first point. A same-code pair cancels what the two runs
share (code, model, software vintage) and leaves the ratio of the two families' levels."""

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
        "(nccl-p6b200-4node-16MiB/64MiB) hold together; no_gpudirect_factor: {gdr}"
    ),
    "intra_node": (
        "fitted on nccl-ref-1node-a100/h100/h100-nvls/b200/b200-nvls, nccl-a100-1node-16GiB, "
        "nccl-h200-1node-ring-16GiB, nccl-dgxh100-1node-16GiB (+ the 16 MiB/128 MiB/1 GiB "
        "series in its notes), nccl-dgxh100-1node-latency; nvls_gpus: NVSwitch systems with "
        "NVLink SHARP (NVIDIA HGX H100/H200/B200 docs); pcie_busbw_gbs: {pcie}"
    ),
    "infiniband": (
        "bus_efficiency and ramp fitted on nccl-ref-dgxa100-multinode, "
        "nccl-ref-dgxh100-multinode, nccl-ndr-per-nic-expectation, nccl-a100-3node-4xhdr, "
        "nccl-a100-2node-4x200g, nccl-nvlstree-32gpu-128MiB, nccl-log-issue309-h100-ib-2n "
        "(https://github.com/NVIDIA/nccl-tests/issues/309); latency: {iblat}; overlap: {rdma}"
    ),
    "roce": (
        "bus_efficiency fitted on nccl-gcp-a4-2node-8GiB (2-node tree) and the RoCE training "
        "points (llm-foundry A100 tables); latency and ramp as InfiniBand; overlap: {rdma}"
    ),
    "efa": (
        "fitted on nccl-p6b200-4node-16MiB/64MiB/4GiB, nccl-p6b200-2node-latency and "
        "nccl-log-aws-p4d-a100-efa-2n (nccl-p4dn-4node-nccl299 is a flagged outlier, not "
        "fitted); overlap: {rdma}"
    ),
    "tcpxo": (
        "fitted on nccl-a3mega-2node-allgather-8GiB (per_node_gbps = 1800 as stated, the VM "
        "total) and nccl-a3mega-2node-latency; ramp as EFA; overlap: {rdma}"
    ),
    "tcpx": "bus_efficiency: {tcpx}; latency and ramp as TCPXO; overlap: {tcpov}",
    "ethernet": (
        "bus_efficiency: {eth}; busbw_cap_gbs: {cap}; latency and ramp as TCPXO; overlap: {tcpov}"
    ),
    "stacks.megatron": (
        "the reference stack (level 1); dp_overlap, tp_overlap and the shared "
        "overlap_slowdown fitted on the Megatron/NeMo points (NVIDIA DGXC, NeMo, Megatron-LM "
        "papers, Together AI)"
    ),
    "stacks.pytorch": (
        "level (a factor on every family's level), dp_overlap and tp_overlap fitted on the "
        "PyTorch FSDP points (llm-foundry/Composer A100 and H100 tables, the torchtitan "
        "benchmarks on 500 W H100s, IBM FMS); overlap_slowdown shared by all stacks"
    ),
    "stacks.deepspeed": (
        "level, dp_overlap and tp_overlap fitted on the DeepSpeed points (BigScience tr11 "
        "trials, MT-NLG); overlap_slowdown shared by all stacks"
    ),
    "training": (
        "fp8_speedup fitted on the FP8/BF16 pairs (DGXC, NeMo tables); gemm_width_half, "
        "gemm_tokens_half, hidden_half and attention_efficiency on all training points; "
        "roofline_exponent: {roof}; unfused_attention_bytes on the points whose stack "
        "materialised the "
        "attention scores (Megatron-LM 2021-2022, MT-NLG, BigScience); straggler_sigma on the "
        "weak-scaling series (ratios to each series' smallest run); cp_overlap: {cpov}; "
        "dp_bucket_mb: {bucket}; usable_memory_fraction: {mem}"
    ),
    "check": (
        "in-sample: clusterscout check-model on data/measurements.json at calibration time; "
        "figures.holdout*: each fitted point predicted by constants refitted without its "
        "source group (whole groups dealt into holdout_folds folds); figures.test*: the "
        "test_sources groups, never fitted, predicted by the final constants. optimistic_share "
        "is the share of points predicted faster than measured; the planner's error band is "
        "the held-out p90"
    ),
}


# --- data ------------------------------------------------------------------------------


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
            hbm_tbps=g.get("hbm_tbps"),
            scale_up_gbs=g.get("scale_up_gbs"),
        )
        for g in raw["gpus"]
    )


def load_points() -> list[dict[str, Any]]:
    """The measurement points."""
    data = json.loads((DATA / "measurements.json").read_text(encoding="utf-8"))
    points: list[dict[str, Any]] = data["points"]
    return points


def load_ratios() -> list[dict[str, Any]]:
    """The published same-benchmark cross-GPU ratios (pairs of point ids)."""
    data = json.loads((DATA / "measurements.json").read_text(encoding="utf-8"))
    ratios: list[dict[str, Any]] = data.get("ratios", [])
    return ratios


@dataclass(frozen=True, slots=True)
class Item:
    """An expressed point with what the fit needs."""

    point: Mapping[str, Any]
    expressed: Expressed
    group: str
    gpus: int

    @property
    def measured(self) -> float:
        """The published value."""
        return float(self.point["value"])


def expressed_items(points: Sequence[Mapping[str, Any]], gpus: tuple[GpuSpec, ...]) -> list[Item]:
    """Every point the model can express (the rest are reported by ``check``)."""
    items = []
    for p in points:
        try:
            e = express(p, gpus)
        except UnexpressibleError:
            continue
        items.append(Item(p, e, source_group(p), e.scenario.cluster.gpus))
    return items


def fittable(item: Item) -> bool:
    """Used for fitting: not flagged by the dataset, not in the test set and not MoE.

    MoE points have their own two constants, fitted by scripts/calibrate_moe.py on top of
    these (ADR 0017), so they neither pull nor measure the dense constants.
    """
    return (
        not item.point.get("exclude_from_fit")
        and item.group not in TEST_SOURCES
        and not item.expressed.moe
    )


# --- calibration from a parameter vector -------------------------------------------------


def family_name(item: Item) -> str:
    """The family of an item's GPU (``default`` for a GPU of no family)."""
    fam = family_of(item.expressed.gpu.name)
    return fam.name if fam else DEFAULT_PRIOR.name


def levels_of(v: Mapping[str, float]) -> dict[str, float]:
    """Every family's level: the fitted one when ``v`` has it, else its prior."""
    fitted = {k.removeprefix("level."): val for k, val in v.items() if k.startswith("level.")}
    return prior_levels(fitted) | fitted


def families_of(
    v: Mapping[str, float], counts: Mapping[str, tuple[int, int]] | None = None
) -> dict[str, FamilyCalibration]:
    """The family tables: level, calibration state and evidence (``counts``: points, groups)."""
    levels = levels_of(v)
    counts = counts or {}
    out = {}
    attention = {
        k.removeprefix("attention."): val for k, val in v.items() if k.startswith("attention.")
    }
    for fam in (*FAMILIES, DEFAULT_PRIOR):
        points, groups = counts.get(fam.name, (0, 0))
        calibrated = fam is not DEFAULT_PRIOR and points >= MIN_FAMILY_POINTS
        out[fam.name] = FamilyCalibration(
            name=fam.name,
            gpus=fam.gpus,
            level=min(1.0, levels[fam.name]),
            calibrated=calibrated,
            points=points,
            source_groups=groups,
            attention_efficiency=attention.get(fam.name),
            sources=family_sources(fam.name, points, groups, calibrated),
        )
    return out


def family_sources(name: str, points: int, groups: int, calibrated: bool) -> str:
    """The ``sources`` note of one family table."""
    fam = next(f for f in (*FAMILIES, DEFAULT_PRIOR) if f.name == name)
    prior = (
        f"prior: {fam.ratio:.3g} x the {fam.sibling} level ({fam.why})"
        if fam.sibling
        else f"reference family: {fam.why}"
    )
    if calibrated:
        return f"fitted on {points} dense training points from {groups} source groups; {prior}"
    if points:
        return (
            f"not calibrated: {points} fitted point(s) from {groups} source group(s), fewer "
            f"than {MIN_FAMILY_POINTS}, pulled towards the {prior}"
        )
    return f"not calibrated: no fitted point; {prior}"


def build(
    v: Mapping[str, float], counts: Mapping[str, tuple[int, int]] | None = None
) -> Calibration:
    """A Calibration from fitted values ``v`` and ``FIXED`` (``counts``: see ``families_of``)."""
    f = {k: val for k, (val, _) in FIXED.items()}

    def fab(
        eff: float, lat: float, ramp: float, overlap: float, cap: float | None = None
    ) -> FabricCalibration:
        return FabricCalibration(eff, lat * 1e-6, ramp * 1e-6, overlap, cap)

    rdma, tcp = f["rdma.overlap"], f["tcp.overlap"]
    tcpxo_lat, efa_ramp = v["tcpxo.latency_us"], v["efa.ramp_latency_us"]
    families = families_of(v, counts)
    slowdown = v["stack.overlap_slowdown"]
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
        ),
        families={k: fam for k, fam in families.items() if k != DEFAULT_PRIOR.name},
        default_family=families[DEFAULT_PRIOR.name],
        training=TrainingCalibration(
            fp8_speedup=v["training.fp8_speedup"],
            cp_overlap=f["training.cp_overlap"],
            dp_bucket_bytes=f["training.dp_bucket_mb"] * 1e6,
            usable_memory_fraction=f["training.usable_memory_fraction"],
            gemm_width_half=v["training.gemm_width_half"],
            gemm_tokens_half=v["training.gemm_tokens_half"],
            hidden_half=v["training.hidden_half"],
            roofline_exponent=f["training.roofline_exponent"],
            attention_efficiency=v["training.attention_efficiency"],
            unfused_attention_bytes=v["training.unfused_attention_bytes"],
            straggler_sigma=v["training.straggler_sigma"],
        ),
        stacks={
            stack: StackCalibration(
                dp_overlap=v[f"stack.{stack.value}.dp_overlap"],
                overlap_slowdown=slowdown,
                level=v.get(f"stack.{stack.value}.level", 1.0),
                tp_overlap=v[f"stack.{stack.value}.tp_overlap"],
            )
            for stack in Stack
        },
        ll_bandwidth_fraction=v["protocol.ll_bandwidth_fraction"],
        no_gpudirect_factor=f["protocol.no_gpudirect_factor"],
        median_abs_error_pct=0.0,
        p90_abs_error_pct=0.0,
    )


# --- objective -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Space:
    """The constants one fit moves: ``FITTED`` plus the level of each family with points."""

    names: tuple[str, ...]
    start: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def of(cls, families: Sequence[str]) -> Space:
        """``FITTED`` and ``level.<family>`` for each of ``families``."""
        table = dict(FITTED) | {f"level.{name}": LEVEL_RANGE for name in sorted(families)}
        table |= {f"attention.{name}": ATTENTION_RANGE for name in sorted(families)}
        names = tuple(table)
        return cls(
            names,
            np.array([table[k][0] for k in names]),
            np.array([table[k][1] for k in names]),
            np.array([table[k][2] for k in names]),
        )

    def values(self, x: Sequence[float]) -> dict[str, float]:
        """Parameter vector to named values."""
        return dict(zip(self.names, (float(a) for a in x), strict=True))


def _series_busbw(cal: Calibration, gpus: tuple[GpuSpec, ...]) -> list[float]:
    by_name = {g.name: g for g in gpus}
    errors = []
    for _, gpu_name, size, busbw in SERIES:
        cluster = ClusterSpec(gpu=by_name[gpu_name], gpus_per_node=8, nodes=1)
        res = collective(
            cluster, CollectiveWorkload(CollectiveOp.ALL_REDUCE, size, Algorithm.AUTO), cal
        )
        errors.append(math.log(res.busbw_gbs / busbw))
    return errors


@dataclass(frozen=True, slots=True)
class Problem:
    """The items one fit uses, with their weights, scaling series and constants."""

    items: tuple[Item, ...]
    weights: np.ndarray
    series: tuple[tuple[int, tuple[int, ...], float], ...]
    """(index of the series' smallest run, indices of the others, weight of each ratio)."""
    space: Space
    pairs: tuple[tuple[int, int, float], ...] = ()
    """Published cross-GPU ratios: (index of point a, index of point b, weight)."""
    speed_sign: np.ndarray | None = None
    """+1 for points whose metric is a speed, -1 for times (log errors as speed errors)."""


def problem(items: Sequence[Item], ratios: Sequence[Mapping[str, Any]] = ()) -> Problem:
    """Weights ``1/sqrt(n_group)``, the scaling series, the cross-GPU ratios whose two points
    are both in ``items``, and the constants of ``items``."""
    counts: dict[str, int] = {}
    for it in items:
        counts[it.group] = counts.get(it.group, 0) + 1
    weights = np.array([1.0 / math.sqrt(counts[it.group]) for it in items])
    by_series: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        name = it.point.get("series")
        if name and it.expressed.stack is not None:
            by_series.setdefault(str(name), []).append(i)
    series = []
    for idx in by_series.values():
        if len(idx) < 2:
            continue
        idx.sort(key=lambda i: items[i].gpus)
        base, rest = idx[0], tuple(idx[1:])
        # the series shares its group's weight with the absolute errors
        series.append((base, rest, SERIES_WEIGHT * float(weights[base])))
    families = {family_name(it) for it in items if it.expressed.stack is not None}
    families.discard(DEFAULT_PRIOR.name)
    index = {it.point["id"]: i for i, it in enumerate(items)}
    pairs = tuple(
        (index[r["a"]], index[r["b"]], RATIO_WEIGHT * float(weights[index[r["a"]]]))
        for r in ratios
        if r.get("a") in index and r.get("b") in index
    )
    sign = np.array(
        [-1.0 if it.expressed.output_key in ("step_time_s", "time_s") else 1.0 for it in items]
    )
    space = Space.of(sorted(families | {REFERENCE}))
    return Problem(tuple(items), weights, tuple(series), space, pairs, sign)


def predictions(items: Sequence[Item], cal: Calibration) -> np.ndarray:
    """Predicted values of ``items`` in their own units."""
    return np.array([predict(it.expressed, cal) for it in items])


def residuals(x: np.ndarray, prob: Problem, gpus: tuple[GpuSpec, ...]) -> np.ndarray:
    """Weighted log errors, series ratio errors, notes series, priors and pools."""
    space = prob.space
    named = space.values(x)
    cal = build(named)
    pred = predictions(prob.items, cal)
    meas = np.array([it.measured for it in prob.items])
    logs = np.log(pred / meas)
    parts = [prob.weights * logs]
    ratios = [w * (logs[i] - logs[base]) for base, rest, w in prob.series for i in rest]
    parts.append(np.array(ratios))
    if prob.speed_sign is not None:
        speed = prob.speed_sign * logs
        parts.append(np.array([w * (speed[a] - speed[b]) for a, b, w in prob.pairs]))
    parts.append(np.array(_series_busbw(cal, gpus)))
    parts.append(PRIOR_WEIGHT * (x - space.start) / (space.high - space.low))
    parts.append(np.array([w * math.log(named[a] / b) for a, b, w in POOLS]))
    # each fitted family is pulled towards its prior: the measured ratio to its sibling
    fitted = {k.removeprefix("level."): val for k, val in named.items() if k.startswith("level.")}
    priors = prior_levels(fitted)
    parts.append(
        np.array(
            [
                FAMILY_POOL * math.log(level / priors[name])
                for name, level in fitted.items()
                if name != REFERENCE
            ]
        )
    )
    # and its attention efficiency towards the shared one
    shared = named["training.attention_efficiency"]
    parts.append(
        np.array(
            [
                FAMILY_POOL * math.log(val / shared)
                for key, val in named.items()
                if key.startswith("attention.")
            ]
        )
    )
    return np.concatenate(parts)


def fit(items: Sequence[Item], gpus: tuple[GpuSpec, ...], quiet: bool = False) -> dict[str, float]:
    """Least-squares fit of ``FITTED`` and the families' levels on the fittable ``items`` (and
    the published cross-GPU ratios between them)."""
    prob = problem([it for it in items if fittable(it)], load_ratios())
    space = prob.space
    result = least_squares(
        residuals,
        space.start,
        bounds=(space.low, space.high),
        args=(prob, gpus),
        loss="soft_l1",
        f_scale=0.1,
        x_scale=space.high - space.low,
        diff_step=1e-4,
        max_nfev=400,
    )
    if not quiet:
        print(f"fit on {len(prob.items)} points: cost {result.cost:.4f}, {result.nfev} evaluations")
    return space.values(result.x)


def family_counts(items: Sequence[Item]) -> dict[str, tuple[int, int]]:
    """Fitted dense training points and source groups per family."""
    points: dict[str, int] = {}
    groups: dict[str, set[str]] = {}
    for it in items:
        if not fittable(it) or it.expressed.stack is None:
            continue
        name = family_name(it)
        points[name] = points.get(name, 0) + 1
        groups.setdefault(name, set()).add(it.group)
    return {name: (n, len(groups[name])) for name, n in points.items()}


# --- held-out error --------------------------------------------------------------------------


def folds(items: Sequence[Item], k: int) -> list[list[Item]]:
    """Deal whole source groups into ``k`` folds, largest group first, to the smallest fold.

    ``k = 0`` gives one fold per source group.
    """
    groups: dict[str, list[Item]] = {}
    for it in items:
        groups.setdefault(it.group, []).append(it)
    if k == 0:
        return [groups[name] for name in sorted(groups)]
    out: list[list[Item]] = [[] for _ in range(k)]
    for name in sorted(groups, key=lambda g: (-len(groups[g]), g)):
        min(out, key=len).extend(groups[name])
    return out


def holdout(items: Sequence[Item], gpus: tuple[GpuSpec, ...], k: int) -> list[PointResult]:
    """Predict each fold of the fitted items with constants refitted on the other folds."""
    results = []
    candidates = [it for it in items if fittable(it)]
    dealt = folds(candidates, k)
    for i, held in enumerate(dealt):
        held_ids = {it.point["id"] for it in held}
        train = [it for it in items if it.point["id"] not in held_ids]
        print(f"fold {i + 1}/{len(dealt)}: holding out {len(held)} points of {held[0].group}...")
        cal = build(fit(train, gpus, quiet=True))
        results.extend(
            result_for(it.point, it.expressed, predict(it.expressed, cal)) for it in held
        )
    return results


def test_results(items: Sequence[Item], cal: Calibration) -> list[PointResult]:
    """The test-set points, predicted by constants that never saw them."""
    return [
        result_for(it.point, it.expressed, predict(it.expressed, cal))
        for it in items
        if it.group in TEST_SOURCES
        and not it.point.get("exclude_from_fit")
        and not it.expressed.moe
    ]


# --- output ----------------------------------------------------------------------------------


def _r(x: float) -> str:
    return f"{x:.4g}"


def figure_table(
    name: str, rows: Sequence[PointResult], cal: Calibration
) -> dict[str, ErrorFigures]:
    """``name`` overall, ``name.<stack>`` per stack and ``name.family.<family>`` per family
    (training points only)."""
    out = {name: summarise(rows)} if rows else {}
    for stack, fig in figures_by_stack(rows).items():
        out[f"{name}.{stack}"] = fig
    for family, fig in figures_by_family(rows, cal).items():
        out[f"{name}.family.{family}"] = fig
    return out


def family_lines(fam: FamilyCalibration) -> list[str]:
    """The table of one family."""
    attention = (
        [f"attention_efficiency = {_r(fam.attention_efficiency)}"]
        if fam.attention_efficiency is not None
        else []
    )
    return [
        "",
        f'[families."{fam.name}"]',
        f"gpus = {json.dumps(list(fam.gpus))}",
        f"level = {_r(fam.level)}",
        *attention,
        f"calibrated = {'true' if fam.calibrated else 'false'}",
        f"points = {fam.points}",
        f"source_groups = {fam.source_groups}",
        f"sources = {json.dumps(fam.sources)}",
    ]


def render(
    v: Mapping[str, float],
    cal: Calibration,
    report: CheckReport,
    figures: Mapping[str, ErrorFigures],
    k: int,
) -> str:
    """The TOML text of data/calibration.toml, without the tables other scripts write."""
    f = {k: val for k, (val, _) in FIXED.items()}
    why = {k: why for k, (_, why) in FIXED.items()}
    src = {
        key: s.format(
            gdr=why["protocol.no_gpudirect_factor"],
            pcie=why["intra.pcie_busbw_gbs"],
            iblat=why["ib.latency_us"],
            tcpx=why["tcpx.bus_efficiency"],
            eth=why["ethernet.bus_efficiency"],
            cap=why["ethernet.busbw_cap_gbs"],
            rdma=why["rdma.overlap"],
            tcpov=why["tcp.overlap"],
            cpov=why["training.cp_overlap"],
            bucket=why["training.dp_bucket_mb"],
            mem=why["training.usable_memory_fraction"],
            roof=why["training.roofline_exponent"],
        )
        for key, s in SOURCES.items()
    }
    lines = [
        "# Model calibration constants. Written by scripts/calibrate.py from",
        "# data/measurements.json; do not edit by hand (re-run the script). See docs/model.md.",
        "schema_version = 3",
        'note = "Measurement ids refer to data/measurements.json."',
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
        f"sources = {json.dumps(src['intra_node'])}",
    ]

    def fabric(
        name: str, eff: float, lat: float, ramp: float, ov: float, cap: float | None
    ) -> None:
        lines.extend(
            [
                "",
                f"[fabrics.{name}]",
                f"bus_efficiency = {_r(eff)}",
                f"latency_us = {_r(lat)}",
                f"ramp_latency_us = {_r(ramp)}",
                f"overlap = {_r(ov)}",
            ]
        )
        if cap is not None:
            lines.append(f"busbw_cap_gbs = {_r(cap)}")
        lines.append(f"sources = {json.dumps(src[name])}")

    efa_ramp, tcpxo_lat = v["efa.ramp_latency_us"], v["tcpxo.latency_us"]
    rdma, tcp = f["rdma.overlap"], f["tcp.overlap"]
    ib_lat, ib_ramp = f["ib.latency_us"], v["ib.ramp_latency_us"]
    fabric("infiniband", v["ib.bus_efficiency"], ib_lat, ib_ramp, rdma, None)
    fabric("roce", v["roce.bus_efficiency"], ib_lat, ib_ramp, rdma, None)
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

    for fam in cal.families.values():
        lines.extend(family_lines(fam))
    lines.extend(family_lines(cal.default_family))
    for stack in Stack:
        st = cal.stack(stack)
        lines.extend(
            [
                "",
                f"[stacks.{stack.value}]",
                f"level = {_r(st.level)}",
                f"dp_overlap = {_r(st.dp_overlap)}",
                f"tp_overlap = {_r(st.tp_overlap)}",
                f"overlap_slowdown = {_r(st.overlap_slowdown)}",
                f"sources = {json.dumps(src[f'stacks.{stack.value}'])}",
            ]
        )
    held = figures.get("holdout")
    lines.extend(
        [
            "",
            "[training]",
            f"fp8_speedup = {_r(v['training.fp8_speedup'])}",
            f"cp_overlap = {_r(f['training.cp_overlap'])}",
            f"dp_bucket_mb = {_r(f['training.dp_bucket_mb'])}",
            f"usable_memory_fraction = {_r(f['training.usable_memory_fraction'])}",
            f"gemm_width_half = {_r(v['training.gemm_width_half'])}",
            f"gemm_tokens_half = {_r(v['training.gemm_tokens_half'])}",
            f"hidden_half = {_r(v['training.hidden_half'])}",
            f"roofline_exponent = {_r(f['training.roofline_exponent'])}",
            f"attention_efficiency = {_r(v['training.attention_efficiency'])}",
            f"unfused_attention_bytes = {_r(v['training.unfused_attention_bytes'])}",
            f"straggler_sigma = {_r(v['training.straggler_sigma'])}",
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
            f"test_sources = {json.dumps(list(TEST_SOURCES))}",
            f"sources = {json.dumps(src['check'])}",
        ]
    )
    for key, fig in figures.items():
        lines.extend(
            [
                "",
                f'[check.figures."{key}"]',
                f"points = {fig.points}",
                f"median_abs_error_pct = {fig.median_abs_error_pct:.2f}",
                f"p90_abs_error_pct = {fig.p90_abs_error_pct:.2f}",
                f"optimistic_share = {fig.optimistic_share:.3f}",
                f"median_signed_error_pct = {fig.median_signed_error_pct:.2f}",
            ]
        )
    lines.append("")
    return "\n".join(lines)


KEPT_TABLES = ("\n[inference]", "\n[moe]")
"""Tables written by other scripts (scripts/calibrate_inference.py, scripts/calibrate_moe.py):
kept as they are, in their order, when this script rewrites the rest."""


def kept_tail() -> str:
    """The current file from the first of ``KEPT_TABLES`` to its end ('' when none)."""
    path = DATA / "calibration.toml"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    starts = [i for i in (text.find(t) for t in KEPT_TABLES) if i >= 0]
    return "\n" + text[min(starts) + 1 :] if starts else ""


def print_rows(rows: Sequence[PointResult]) -> None:
    """Per-point table, best first."""
    for r in sorted(rows, key=lambda r: r.abs_error_pct):
        print(
            f"{r.id:46s} {r.measured:>10.4g} {r.predicted:>10.4g} {r.unit:>12s} "
            f"{r.signed_error_pct:+7.1f}%  {r.stack or '-':9s} {r.confidence}"
        )


def print_figures(label: str, rows: Sequence[PointResult], cal: Calibration) -> None:
    """One summary line overall, one per stack and one per family."""
    for key, fig in figure_table(label, rows, cal).items():
        print(
            f"{key:22s} n={fig.points:3d}  median {fig.median_abs_error_pct:5.1f}%  "
            f"p90 {fig.p90_abs_error_pct:5.1f}%  optimistic {fig.optimistic_share:4.0%}  "
            f"median signed {fig.median_signed_error_pct:+5.1f}%"
        )


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report, do not fit")
    parser.add_argument(
        "--holdout", type=int, metavar="K", help="K-fold held-out error only; writes nothing"
    )
    args = parser.parse_args(argv)
    points, gpus = load_points(), load_gpus()
    items = expressed_items(points, gpus)
    if args.check:
        cal = load_calibration(DATA)
        report = check(points, gpus, cal)
        print_rows(report.results)
        for u in report.unexpressed:
            print(f"not expressed: {u.id}: {u.reason}")
        print_figures("in-sample", report.dense_results, cal)
        print_figures("moe in-sample", report.moe_results, cal)
        return 0
    counts = family_counts(items)
    if args.holdout is not None:
        if args.holdout == 1 or args.holdout < 0:
            parser.error("--holdout: K must be 0 (one fold per source) or at least 2")
        rows = holdout(items, gpus, args.holdout)
        print_rows(rows)
        print_figures("holdout", rows, build(fit(items, gpus, quiet=True), counts))
        return 0
    fitted = fit(items, gpus)
    held = holdout(items, gpus, HOLDOUT_FOLDS)
    used = len(folds([it for it in items if fittable(it)], HOLDOUT_FOLDS))
    # The file rounds each constant to 4 digits: the in-sample and test figures are measured
    # with the constants as written, so check-model on the file reproduces them exactly.
    cal = build(fitted, counts)
    final = check(points, gpus, cal)
    # The serving ([inference]) and MoE ([moe]) tables are written by their own scripts.
    tail = kept_tail()
    for _ in range(2):
        figures = (
            figure_table("in_sample", final.dense_results, cal)
            | figure_table("holdout", held, cal)
            | figure_table("test", test_results(items, cal), cal)
        )
        text = render(fitted, cal, final, figures, used) + tail
        cal = parse_calibration(text)  # the project's loader must accept what we write
        final = check(points, gpus, cal)
    (DATA / "calibration.toml").write_text(text, encoding="utf-8")
    cal = load_calibration(DATA)
    tested = test_results(items, cal)
    print_rows(final.results)
    print("held out:")
    print_rows(held)
    print_figures("in-sample", final.dense_results, cal)
    print_figures("holdout", held, cal)
    print_figures("test", tested, cal)
    print(f"expressed {len(final.results)}/{final.total}")
    return 0


_: Callable[..., object] = main

if __name__ == "__main__":
    raise SystemExit(main())
