"""Fixtures of the model tests: datasheet GPUs, the real calibration and a round one."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterscout.catalog.calibration import load_calibration
from clusterscout.domain.models import FabricKind, GpuSpec
from clusterscout.model.calibration import (
    Calibration,
    FabricCalibration,
    FamilyCalibration,
    IntraNodeCalibration,
    StackCalibration,
    TrainingCalibration,
)
from clusterscout.model.inputs import Stack

DATA_DIR = Path(__file__).resolve().parents[2] / "data"

# Public datasheet figures (dense BF16/FP8 TFLOP/s, NVLink GB/s bidirectional).
H100 = GpuSpec(
    name="H100-SXM-80GB",
    vendor="nvidia",
    memory_gib=74.5,
    aliases=("H100", "H100-80GB"),
    bf16_dense_tflops=989.0,
    fp8_dense_tflops=1979.0,
    scale_up_gbs=900.0,
)
A100 = GpuSpec(
    name="A100-SXM-80GB",
    vendor="nvidia",
    memory_gib=74.5,
    aliases=("A100", "A100-80GB"),
    bf16_dense_tflops=312.0,
    scale_up_gbs=600.0,
)
A100_40 = GpuSpec(
    name="A100-SXM-40GB",
    vendor="nvidia",
    memory_gib=37.3,
    aliases=("A100-40GB",),
    bf16_dense_tflops=312.0,
    scale_up_gbs=600.0,
)
H200 = GpuSpec(
    name="H200-SXM-141GB",
    vendor="nvidia",
    memory_gib=131.3,
    aliases=("H200",),
    bf16_dense_tflops=989.0,
    fp8_dense_tflops=1979.0,
    scale_up_gbs=900.0,
)
B200 = GpuSpec(
    name="B200-SXM-180GB",
    vendor="nvidia",
    memory_gib=167.6,
    aliases=("B200",),
    bf16_dense_tflops=2250.0,
    fp8_dense_tflops=4500.0,
    scale_up_gbs=1800.0,
)
MI300X = GpuSpec(
    name="MI300X-192GB",
    vendor="amd",
    memory_gib=178.8,
    aliases=("MI300X",),
    bf16_dense_tflops=1307.4,
    fp8_dense_tflops=2614.9,
    scale_up_gbs=896.0,
)
L40S = GpuSpec(
    name="L40S-48GB",
    vendor="nvidia",
    memory_gib=44.7,
    aliases=("L40S",),
    bf16_dense_tflops=362.05,
    fp8_dense_tflops=733.0,
)
NO_FIGURES = GpuSpec(name="RTX-PRO-6000-96GB", vendor="nvidia", memory_gib=89.4)
GPUS = (H100, A100, A100_40, H200, B200, MI300X, L40S, NO_FIGURES)


def round_calibration() -> Calibration:
    """Round numbers for hand-computed tests."""
    fab = FabricCalibration(bus_efficiency=0.9, latency_s=20e-6, ramp_latency_s=100e-6, overlap=0.5)
    tcp = FabricCalibration(
        bus_efficiency=0.8,
        latency_s=100e-6,
        ramp_latency_s=400e-6,
        overlap=0.25,
        busbw_cap_gbs=20.0,
    )
    return Calibration(
        fabrics={
            FabricKind.INFINIBAND: fab,
            FabricKind.ROCE: fab,
            FabricKind.EFA: fab,
            FabricKind.TCPXO: fab,
            FabricKind.TCPX: tcp,
            FabricKind.ETHERNET: tcp,
        },
        intra_node=IntraNodeCalibration(
            ring_efficiency=0.8,
            nvls_efficiency=1.0,
            nvls_gpus=("H100-SXM-80GB",),
            pcie_busbw_gbs=25.0,
            latency_s=10e-6,
            ramp_latency_s=50e-6,
        ),
        families={
            "H100": FamilyCalibration("H100", ("H100-SXM-80GB",), 0.6, True, points=20),
            "MI300X": FamilyCalibration("MI300X", ("MI300X-192GB",), 0.4, False, points=2),
        },
        default_family=FamilyCalibration("default", (), 0.5, False),
        training=TrainingCalibration(
            fp8_speedup=1.5,
            cp_overlap=0.5,
            dp_bucket_bytes=100e6,
            usable_memory_fraction=0.9,
            hidden_half=1000.0,
        ),
        stacks={
            Stack.MEGATRON: StackCalibration(dp_overlap=0.9, overlap_slowdown=0.0),
            Stack.PYTORCH: StackCalibration(dp_overlap=0.8, overlap_slowdown=0.2, level=0.75),
            Stack.DEEPSPEED: StackCalibration(dp_overlap=0.7, overlap_slowdown=0.0, level=0.5),
        },
        ll_bandwidth_fraction=0.1,
        no_gpudirect_factor=0.5,
        median_abs_error_pct=5.0,
        p90_abs_error_pct=20.0,
    )


@pytest.fixture(scope="session")
def cal() -> Calibration:
    """The project's calibration (data/calibration.toml)."""
    return load_calibration(DATA_DIR)


@pytest.fixture(scope="session")
def rcal() -> Calibration:
    """Round hand-made calibration."""
    return round_calibration()
