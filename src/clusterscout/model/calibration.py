"""Calibration constants of the model, as a frozen value loaded from ``data/calibration.toml``.

The model never reads files: ``clusterscout.catalog.calibration.load_calibration`` builds this
value and passes it in. Every field name carries its unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from clusterscout.domain.models import FabricKind


@dataclass(frozen=True, slots=True)
class FabricCalibration:
    """Constants of one inter-node fabric kind.

    Attributes:
        bus_efficiency: large-message bus bandwidth as a fraction of the node's NIC aggregate.
        latency_s: small-message time of one collective (low-latency protocol).
        ramp_latency_s: effective start-up of the bandwidth protocol; sets how fast bus
            bandwidth approaches its plateau as messages grow.
        busbw_cap_gbs: absolute cap on bus bandwidth per node (socket-based TCP), or None.
        overlap: fraction of data-parallel traffic that hides behind compute on this fabric.
        sources: measurement ids and URLs the values come from.
    """

    bus_efficiency: float
    latency_s: float
    ramp_latency_s: float
    overlap: float
    busbw_cap_gbs: float | None = None
    sources: str = ""


@dataclass(frozen=True, slots=True)
class IntraNodeCalibration:
    """Constants of the scale-up (NVLink / xGMI / PCIe) level inside one node.

    Attributes:
        ring_efficiency: ring bus bandwidth as a fraction of ``scale_up_gbs / 2`` (one direction).
        nvls_efficiency: NVLink-SHARP bus bandwidth (all-reduce) as a fraction of the same.
        nvls_gpus: canonical GPU names whose nodes have NVSwitch with NVLink SHARP.
        pcie_busbw_gbs: bus bandwidth when a GPU has no published scale-up link.
        latency_s: small-message collective time inside a node.
        ramp_latency_s: effective start-up of the bandwidth protocol inside a node.
        overlap: fraction of data-parallel traffic inside one node hidden behind compute.
        sources: measurement ids and URLs.
    """

    ring_efficiency: float
    nvls_efficiency: float
    nvls_gpus: tuple[str, ...]
    pcie_busbw_gbs: float
    latency_s: float
    ramp_latency_s: float
    overlap: float
    sources: str = ""


@dataclass(frozen=True, slots=True)
class UtilisationCurve:
    """Achievable dense-GEMM utilisation of one GPU model as a function of hidden size.

    ``u(h) = u_max * h / (h + hidden_half)``; see ``clusterscout.model.compute.utilisation``.
    """

    u_max: float
    hidden_half: float
    sources: str = ""


@dataclass(frozen=True, slots=True)
class TrainingCalibration:
    """Constants of the training step model.

    Attributes:
        fp8_speedup: step-compute speed-up of FP8 over BF16 on the same GPU.
        tp_overlap: fraction of tensor-parallel traffic hidden behind compute.
        cp_overlap: fraction of context-parallel (ring attention) traffic hidden behind compute.
        dp_bucket_bytes: message size of one data-parallel gradient bucket.
        usable_memory_fraction: share of GPU memory a job can use (allocator, CUDA context).
        sources: measurement ids and URLs.
    """

    fp8_speedup: float
    tp_overlap: float
    cp_overlap: float
    dp_bucket_bytes: float
    usable_memory_fraction: float
    sources: str = ""


@dataclass(frozen=True, slots=True)
class Calibration:
    """All constants of the model; one value per deployment, loaded from data.

    Attributes:
        fabrics: per inter-node fabric kind.
        intra_node: scale-up level.
        utilisation: per canonical GPU name; ``default_utilisation`` for the rest.
        ll_bandwidth_fraction: bandwidth of the low-latency protocol relative to the plateau.
        no_gpudirect_factor: bandwidth factor when a fabric lacks GPUDirect RDMA.
        training: step model constants.
        median_abs_error_pct: median error of check-model at calibration time (in-sample).
        p90_abs_error_pct: 90th-percentile error of check-model (in-sample).
        holdout_median_abs_error_pct: median error on points held out of the fit (K-fold by
            source), when the calibration script measured it.
        holdout_p90_abs_error_pct: 90th-percentile error on held-out points.
    """

    fabrics: Mapping[FabricKind, FabricCalibration]
    intra_node: IntraNodeCalibration
    utilisation: Mapping[str, UtilisationCurve]
    default_utilisation: UtilisationCurve
    training: TrainingCalibration
    ll_bandwidth_fraction: float
    no_gpudirect_factor: float
    median_abs_error_pct: float
    p90_abs_error_pct: float
    sources: Mapping[str, str] = field(default_factory=dict)
    holdout_median_abs_error_pct: float | None = None
    holdout_p90_abs_error_pct: float | None = None

    @property
    def error_band_pct(self) -> float:
        """The planner's error band: the held-out p90 when measured, else the in-sample p90.

        The held-out figure is what a prediction for an unseen job can expect; the in-sample
        one flatters the model because the constants were fitted on those points.
        """
        if self.holdout_p90_abs_error_pct is not None:
            return self.holdout_p90_abs_error_pct
        return self.p90_abs_error_pct

    def curve_for(self, gpu_name: str) -> UtilisationCurve:
        """Utilisation curve of ``gpu_name``, or the default curve when it was not fitted."""
        return self.utilisation.get(gpu_name, self.default_utilisation)
