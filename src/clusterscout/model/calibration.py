"""Calibration constants of the model, as a frozen value loaded from ``data/calibration.toml``.

The model never reads files: ``clusterscout.catalog.calibration.load_calibration`` builds this
value and passes it in. Every field name carries its unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from clusterscout.domain.models import FabricKind
from clusterscout.model.inputs import Stack


@dataclass(frozen=True, slots=True)
class FabricCalibration:
    """Constants of one inter-node fabric kind.

    Attributes:
        bus_efficiency: large-message bus bandwidth as a fraction of the node's NIC aggregate.
        latency_s: small-message time of one collective (low-latency protocol).
        ramp_latency_s: effective start-up of the bandwidth protocol; sets how fast bus
            bandwidth approaches its plateau as messages grow.
        busbw_cap_gbs: absolute cap on bus bandwidth per node (socket-based TCP), or None.
        overlap: how much of a stack's overlap window this fabric keeps (1 on RDMA fabrics;
            below 1 where the CPU moves the data, TCP-class fabrics).
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
        sources: measurement ids and URLs.
    """

    ring_efficiency: float
    nvls_efficiency: float
    nvls_gpus: tuple[str, ...]
    pcie_busbw_gbs: float
    latency_s: float
    ramp_latency_s: float
    sources: str = ""


@dataclass(frozen=True, slots=True)
class FamilyCalibration:
    """The achievable fraction of dense BF16 peak of one GPU family, and the evidence behind it.

    A family is a set of catalog GPUs sharing one die and software (A100 SXM 40/80 GB; H100
    SXM and H800; B200 and B300; ...). Its ``level`` is ``u_max`` under the reference stack
    (Megatron); another stack scales it by that stack's ``level`` (``StackCalibration``), the
    same factor on every family, so a stack never changes the ratio between two families.

    Attributes:
        name: the family's name (``"A100"``, ``"H100"``, ``"MI300X"``, ...).
        gpus: canonical GPU names of the family.
        level: ``u_max`` under the reference stack, before the GEMM-shape penalty.
        calibrated: True when ``level`` was fitted on at least ``MIN_FAMILY_POINTS`` of the
            family's own measurements; False when it is a prior (and every answer says so).
        points: the family's fitted dense training points.
        source_groups: how many publications those points come from.
        attention_efficiency: the family's attention-kernel rate relative to its GEMMs, when
            fitted on its own points (None: the shared ``training.attention_efficiency``).
        sources: what the level rests on (measurement ids, or the prior's source).
    """

    name: str
    gpus: tuple[str, ...]
    level: float
    calibrated: bool
    points: int = 0
    source_groups: int = 0
    attention_efficiency: float | None = None
    sources: str = ""


MIN_FAMILY_POINTS = 5
"""Fitted points a family needs before its level counts as calibrated (issue 25)."""


@dataclass(frozen=True, slots=True)
class StackCalibration:
    """Constants of one training software stack.

    Attributes:
        dp_overlap: share of its overlap window the stack fills with data-parallel / FSDP
            traffic (bucketing, prefetch, stream priorities).
        overlap_slowdown: seconds of compute lost per second of communication hidden behind it
            (collective kernels take SMs and memory bandwidth from the GEMMs).
        level: factor on every family's ``level`` (1 for the reference stack, Megatron): the
            stack's kernels reach this share of the reference stack's rate on any GPU.
        tp_overlap: share of tensor-parallel traffic the stack hides behind compute.
        sources: measurement ids and URLs.
    """

    dp_overlap: float
    overlap_slowdown: float
    level: float = 1.0
    tp_overlap: float = 0.0
    sources: str = ""


@dataclass(frozen=True, slots=True)
class ErrorFigures:
    """Error of the model over a set of measurement points.

    Attributes:
        points: how many points.
        median_abs_error_pct: median of ``|predicted/measured - 1|``, in %.
        p90_abs_error_pct: its 90th percentile.
        optimistic_share: share of points where the predicted speed exceeds the measured one.
        median_signed_error_pct: median of predicted over measured speed minus 1, in %
            (positive: the model is optimistic).
    """

    points: int
    median_abs_error_pct: float
    p90_abs_error_pct: float
    optimistic_share: float
    median_signed_error_pct: float


@dataclass(frozen=True, slots=True)
class TrainingCalibration:
    """Constants of the training step model.

    Attributes:
        fp8_speedup: step-compute speed-up of FP8 over BF16 on the same GPU.
        cp_overlap: fraction of context-parallel (ring attention) traffic hidden behind compute.
        dp_bucket_bytes: message size of one data-parallel gradient bucket.
        usable_memory_fraction: share of GPU memory a job can use (allocator, CUDA context).
        gemm_width_half: per-GPU GEMM width (``hidden / tp``) at which narrow GEMMs take
            twice the ideal time (``u`` halves when this term alone is 1), on a GPU of the
            reference intensity (``compute.REFERENCE_FLOPS_PER_BYTE``).
        gemm_tokens_half: the same for the tokens of one micro-batch (``b * s / cp``), on a
            GPU of the reference peak (``compute.REFERENCE_TFLOPS``).
        hidden_half: model width at which the work outside the GEMMs (norms, activations,
            residuals, optimizer), which grows like ``h`` against the GEMMs' ``h^2``, doubles
            the time, on a GPU of the reference intensity.
        roofline_exponent: how the three terms above follow the GPU: the memory-bound work
            (width and hidden terms) scales with ``(peak/bandwidth / reference)^x`` and the
            fixed per-micro-batch overheads with ``(peak / reference)^x``; 1 is the roofline
            (a faster GEMM engine waits relatively longer for the same bytes), 0 ignores it.
        attention_efficiency: FLOP rate of the attention score and value products (fused,
            flash-style kernels) relative to the GEMMs of the same step.
        unfused_attention_bytes: bytes moved per attention-score element per layer, forward
            and backward, by stacks that materialise the ``s x s`` scores (before flash
            attention); the time is these bytes over the GPU's memory bandwidth.
        straggler_sigma: relative spread of one node's step time; the slowest of ``N`` nodes
            adds ``sigma * ln N`` of the compute time to every synchronous step.
        sources: measurement ids and URLs.
    """

    fp8_speedup: float
    cp_overlap: float
    dp_bucket_bytes: float
    usable_memory_fraction: float
    gemm_width_half: float = 0.0
    gemm_tokens_half: float = 0.0
    hidden_half: float = 0.0
    roofline_exponent: float = 0.0
    attention_efficiency: float = 1.0
    unfused_attention_bytes: float = 0.0
    straggler_sigma: float = 0.0
    sources: str = ""


@dataclass(frozen=True, slots=True)
class InferenceCalibration:
    """Constants of the serving model, fitted on published serving benchmarks.

    Attributes:
        bandwidth_efficiency: achieved share of the GPU's memory bandwidth while decoding.
        compute_efficiency: achieved share of dense peak TFLOP/s on decode math.
        prefill_efficiency: achieved share of dense peak TFLOP/s on prefill (prompt) math.
        layer_overhead_s: fixed time per layer of every forward pass (kernel launches,
            norms, rotary embedding, sampling) that no batch size amortises.
        moe_layer_overhead_s: extra fixed time of a mixture-of-experts layer (router, top-k,
            token permutation and the grouped GEMMs' launches).
        prefill_layer_overhead_s: fixed time per layer of a prefill (prompt) pass.
        weight_only_bandwidth: share of ``bandwidth_efficiency`` kept when weights are
            dequantised on the fly (INT4, or FP8 on GPUs without FP8 math).
        kv_bandwidth_efficiency: achieved share of the memory bandwidth while attention
            reads the KV cache (0: the same as ``bandwidth_efficiency``).
        fp8_math: share of the FP8 peak reached relative to the 16-bit one (FP8 GEMMs rarely
            run twice as fast as BF16 ones; 1: they do).
        legacy_gqa_reads: for measurements taken with attention kernels older than
            grouped-query-aware ones (TensorRT-LLM 0.5/0.6), the share of each extra query
            head of a group that reads the KV cache again; used by the check only, plans
            assume current kernels.
        evidence: serving points per canonical GPU name the constants were fitted on; a GPU
            with few points has little evidence behind its serving figures.
        figures: error figures at calibration time (``in_sample``, ``holdout``: each source
            predicted by constants fitted without it; ``.decode``/``.ttft``/``.moe`` parts).
        sources: measurement ids and URLs.
    """

    bandwidth_efficiency: float
    compute_efficiency: float
    prefill_efficiency: float = 0.0
    layer_overhead_s: float = 0.0
    moe_layer_overhead_s: float = 0.0
    prefill_layer_overhead_s: float = 0.0
    weight_only_bandwidth: float = 1.0
    kv_bandwidth_efficiency: float = 0.0
    fp8_math: float = 1.0
    legacy_gqa_reads: float = 0.0
    evidence: Mapping[str, int] = field(default_factory=dict)
    figures: Mapping[str, ErrorFigures] = field(default_factory=dict)
    sources: str = ""

    def __post_init__(self) -> None:
        # Files written before prefill had its own efficiency share the decode one.
        if self.prefill_efficiency <= 0:
            object.__setattr__(self, "prefill_efficiency", self.compute_efficiency)
        if self.kv_bandwidth_efficiency <= 0:
            object.__setattr__(self, "kv_bandwidth_efficiency", self.bandwidth_efficiency)

    def evidence_for(self, gpu_name: str) -> int:
        """Serving points behind ``gpu_name`` (0 when none was fitted)."""
        return self.evidence.get(gpu_name, 0)


@dataclass(frozen=True, slots=True)
class MoeCalibration:
    """Constants of mixture-of-experts training, fitted on MoE points only.

    Attributes:
        expert_efficiency: FLOP rate of the routed experts' grouped GEMMs (with routing,
            token permutation and load imbalance) relative to the dense GEMMs of the same step.
        all_to_all_exposed: share of the expert-parallel all-to-all time left on the critical
            path (the rest overlaps other micro-batches' compute, as Megatron-Core's 1F1B
            all-to-all overlap and DeepEP do, or is saved by node-limited routing).
        dropless_imbalance: load of the busiest expert over the mean with dropless routing and
            a learned router; it stretches the experts' compute and the all-to-all (capacity
            routing caps it at the capacity factor; forced balance makes it 1).
        permute_bytes: bytes moved per hidden element of each routed token copy, forward and
            backward, by token permutation and un-permutation (memory-bound, like the
            unfused attention term).
        layer_overhead_s: fixed time of one MoE layer per micro-batch, forward and backward
            (router, top-k, index bookkeeping and the launches of many small kernels, whatever
            the token count): it weighs on small, fast MoE layers.
        sources: measurement ids and URLs.
        figures: error figures of the MoE points, keyed ``in_sample`` and ``holdout``
            (leave one source out, refitting only these constants).
    """

    expert_efficiency: float = 1.0
    all_to_all_exposed: float = 1.0
    dropless_imbalance: float = 1.0
    permute_bytes: float = 0.0
    layer_overhead_s: float = 0.0
    sources: str = ""
    figures: Mapping[str, ErrorFigures] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Calibration:
    """All constants of the model; one value per deployment, loaded from data.

    Attributes:
        fabrics: per inter-node fabric kind.
        intra_node: scale-up level.
        families: GPU families by name, each with its level and calibration state.
        default_family: the prior for a GPU of no family (never calibrated).
        ll_bandwidth_fraction: bandwidth of the low-latency protocol relative to the plateau.
        no_gpudirect_factor: bandwidth factor when a fabric lacks GPUDirect RDMA.
        training: step model constants.
        stacks: per software stack.
        median_abs_error_pct: median error of check-model at calibration time (in-sample).
        p90_abs_error_pct: 90th-percentile error of check-model (in-sample).
        holdout_median_abs_error_pct: median error on points held out of the fit (K-fold by
            source), when the calibration script measured it.
        holdout_p90_abs_error_pct: 90th-percentile error on held-out points.
        figures: error figures measured at calibration time, keyed ``holdout``,
            ``holdout.<stack>``, ``test`` (sources never used for fitting), ``test.<stack>``.
        test_sources: the source groups kept out of every fit as a final test.
        inference: the serving roofline's constants (None: this calibration has none).
        moe: mixture-of-experts constants (neutral defaults when the file has none).
    """

    fabrics: Mapping[FabricKind, FabricCalibration]
    intra_node: IntraNodeCalibration
    families: Mapping[str, FamilyCalibration]
    default_family: FamilyCalibration
    training: TrainingCalibration
    stacks: Mapping[Stack, StackCalibration]
    ll_bandwidth_fraction: float
    no_gpudirect_factor: float
    median_abs_error_pct: float
    p90_abs_error_pct: float
    sources: Mapping[str, str] = field(default_factory=dict)
    holdout_median_abs_error_pct: float | None = None
    holdout_p90_abs_error_pct: float | None = None
    figures: Mapping[str, ErrorFigures] = field(default_factory=dict)
    test_sources: tuple[str, ...] = ()
    inference: InferenceCalibration | None = None
    moe: MoeCalibration = field(default_factory=MoeCalibration)

    @property
    def error_band_pct(self) -> float:
        """The planner's error band: the held-out p90 when measured, else the in-sample p90.

        The held-out figure is what a prediction for an unseen job can expect; the in-sample
        one flatters the model because the constants were fitted on those points.
        """
        if self.holdout_p90_abs_error_pct is not None:
            return self.holdout_p90_abs_error_pct
        return self.p90_abs_error_pct

    def band_for(self, moe: bool) -> float:
        """The error band of a plan: ``error_band_pct``, or the MoE held-out p90 for MoE models.

        MoE points are fitted and measured apart (ADR 0017); their larger held-out error is
        what an MoE plan can expect. Without MoE figures the dense band applies.
        """
        held = self.moe.figures.get("holdout")
        if moe and held is not None:
            return held.p90_abs_error_pct
        return self.error_band_pct

    def family_for(self, gpu_name: str) -> FamilyCalibration:
        """The family of ``gpu_name`` (canonical name), or the default prior for no family."""
        for family in self.families.values():
            if gpu_name in family.gpus:
                return family
        return self.default_family

    def attention_efficiency(self, gpu_name: str) -> float:
        """Rate of the attention products relative to the GEMMs on ``gpu_name``: its family's
        fitted figure, else the shared one (kernels differ by architecture: FlashAttention-2
        reaches 50-73 % of peak on A100 and about 35 % on H100, FlashAttention-3 75 % there)."""
        own = self.family_for(gpu_name).attention_efficiency
        return self.training.attention_efficiency if own is None else own

    def u_max(self, gpu_name: str, stack: Stack) -> float:
        """Best achievable fraction of dense BF16 peak of ``gpu_name`` under ``stack``.

        Formula: ``min(1, level(family) * level(stack))``: the family sets the level, the
        stack scales it by the same factor on every family.
        """
        return min(1.0, self.family_for(gpu_name).level * self.stack(stack).level)

    def stack(self, stack: Stack) -> StackCalibration:
        """Constants of ``stack`` (every stack is in a loaded calibration)."""
        return self.stacks[stack]
