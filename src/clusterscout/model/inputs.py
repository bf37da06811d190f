"""Frozen inputs of the model: cluster shape, transformer shape, parallel layout, workloads."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from clusterscout.domain.models import FabricKind, GpuSpec


class CollectiveOp(StrEnum):
    """NCCL collectives the model knows."""

    ALL_REDUCE = "all_reduce"
    ALL_GATHER = "all_gather"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_TO_ALL = "all_to_all"


class Algorithm(StrEnum):
    """Collective algorithm: ``auto`` lets NVLS/tree apply where NCCL would pick them."""

    AUTO = "auto"
    RING = "ring"


class Sharding(StrEnum):
    """Data-parallel sharding of model state (ZeRO stages; ``fsdp`` is ZeRO-3)."""

    NONE = "none"
    ZERO1 = "zero1"
    ZERO2 = "zero2"
    FSDP = "fsdp"


class Recompute(StrEnum):
    """Activation recomputation (Korthikanti et al. 2022)."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


class Attention(StrEnum):
    """How the attention score and value products run.

    ``flash``: fused, tiled kernels that never write the ``s x s`` scores to memory
    (FlashAttention, cuDNN/Transformer Engine fused attention, PyTorch SDPA; every current
    stack, the default). ``unfused``: the scores are materialised and passed through separate
    softmax/dropout kernels (Megatron-LM, DeepSpeed and most stacks before mid-2022).
    """

    FLASH = "flash"
    UNFUSED = "unfused"


class Routing(StrEnum):
    """How a mixture-of-experts layer assigns tokens to experts (``dropless`` by default).

    ``dropless``: every token reaches its experts, so the busiest expert sets the time
    (learned routers are never perfectly balanced). ``capacity``: each expert takes at most
    ``capacity_factor`` times its fair share and drops the rest. ``balanced``: the benchmark
    forces an even split (NVIDIA's performance tables, NeMo AutoModel's balanced gate).
    """

    DROPLESS = "dropless"
    CAPACITY = "capacity"
    BALANCED = "balanced"


class Precision(StrEnum):
    """Number format of the GEMMs (``fp16`` runs at the BF16 tensor-core rate).

    ``int4`` is weight-only 4-bit quantisation for serving (GEMMs run in BF16 after
    dequantisation); training jobs refuse it.
    """

    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT4 = "int4"


class JobKind(StrEnum):
    """What the GPUs do: pre-train, fine-tune (full, LoRA, QLoRA) or serve a model.

    ``pretrain`` and ``full_finetune`` train every weight (the same memory and FLOPs);
    ``lora`` freezes BF16 weights and trains low-rank adapters; ``qlora`` freezes 4-bit NF4
    weights (Dettmers et al. 2023) and trains BF16 adapters; ``inference`` serves the model.
    """

    PRETRAIN = "pretrain"
    FULL_FINETUNE = "full_finetune"
    LORA = "lora"
    QLORA = "qlora"
    INFERENCE = "inference"

    @property
    def adapters(self) -> bool:
        """True when the job trains low-rank adapters over frozen weights."""
        return self in {JobKind.LORA, JobKind.QLORA}


TRAINING_JOBS = (JobKind.PRETRAIN, JobKind.FULL_FINETUNE, JobKind.LORA, JobKind.QLORA)
"""Jobs that run training steps (all but ``inference``)."""
DEFAULT_LORA_RANK = 16
"""Adapter rank when a LoRA/QLoRA job names none (the QLoRA paper's 65B runs use 64; PEFT's
default is 8; 16 is a common middle)."""


class Stack(StrEnum):
    """Training software stack; each has its own fitted utilisation and overlap.

    ``megatron``: Megatron-LM / NeMo / Megatron-Bridge (tuned kernels and overlap; the
    default). ``pytorch``: PyTorch-native FSDP/FSDP2 stacks (torchtitan, llm-foundry, nanotron,
    HF accelerate). ``deepspeed``: DeepSpeed engines (ZeRO, Megatron-DeepSpeed pipelines).
    """

    MEGATRON = "megatron"
    PYTORCH = "pytorch"
    DEEPSPEED = "deepspeed"


DEFAULT_STACK = Stack.MEGATRON
"""Stack assumed when a scenario or plan names none (the stack the curves are anchored on)."""


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """Nodes of one GPU model joined by one fabric.

    Attributes:
        gpu: the accelerator.
        gpus_per_node: GPUs in one node (one scale-up domain).
        nodes: number of nodes.
        fabric: inter-node fabric kind; None only when ``nodes == 1``.
        per_node_gbps: backend (GPU) NIC aggregate per node in Gbit/s; None only when one node.
        gpudirect_rdma: GPUDirect RDMA between NIC and GPU; None is unknown (assumed present).
    """

    gpu: GpuSpec
    gpus_per_node: int
    nodes: int
    fabric: FabricKind | None = None
    per_node_gbps: float | None = None
    gpudirect_rdma: bool | None = None

    @property
    def gpus(self) -> int:
        """Total GPU count."""
        return self.gpus_per_node * self.nodes


GLU_MATRICES = 3
"""Weight matrices of one gated (SwiGLU) expert MLP: gate, up and down, ``3 * h * f``."""


@dataclass(frozen=True, slots=True)
class ModelShape:
    """A decoder-only transformer, dense or mixture-of-experts (MoE).

    Attributes:
        params: parameter count including embeddings (for MoE: every expert, the total).
        layers: transformer blocks.
        hidden: model width.
        heads: attention heads.
        kv_heads: key/value heads (grouped-query attention); equals ``heads`` for MHA.
        vocab: vocabulary size.
        ffn_hidden: MLP inner width (of the dense layers of an MoE model).
        tied_embeddings: input and output embeddings share one matrix.
        experts: routed experts per MoE layer; 0 (or 1) is a dense model.
        top_k: routed experts each token is sent to (active experts per token).
        expert_ffn: inner width of one routed expert's gated MLP; 0 means ``ffn_hidden``.
        shared_experts: experts every token passes through besides the routed ones.
        dense_layers: how many of the ``layers`` keep a dense MLP (DeepSeek's first-k-dense
            layers); the rest are MoE layers. Only the count matters to the model.
        kv_lora_rank: multi-head latent attention's compressed KV width (0: no MLA).
        qk_rope_head_dim: MLA's decoupled rotary key width, cached beside the latent.
        head_dim: width of one attention head (0: ``hidden / heads``); Qwen3 and gpt-oss set
            it apart from the model width, and an MLA model takes the mean of its query-key
            and value head widths.
    """

    params: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    vocab: int
    ffn_hidden: int
    tied_embeddings: bool = False
    experts: int = 0
    top_k: int = 0
    expert_ffn: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    head_dim: int = 0

    @property
    def attention_width(self) -> int:
        """Width of the attention score and value products: ``heads * head_dim`` (``hidden``
        when the head width is the model width over the heads)."""
        return self.heads * self.head_dim if self.head_dim else self.hidden

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model (more than one routed expert)."""
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a set of experts (0 for a dense model)."""
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def expert_width(self) -> int:
        """Inner width of one expert MLP."""
        return self.expert_ffn or self.ffn_hidden

    @property
    def params_per_expert(self) -> float:
        """Weights of one expert's gated MLP: ``3 * h * f_e``."""
        return float(GLU_MATRICES * self.hidden * self.expert_width)

    @property
    def routed_expert_params(self) -> float:
        """Weights of all routed experts: ``L_moe * E * 3 * h * f_e`` (split by ``ep``)."""
        return self.moe_layers * self.experts * self.params_per_expert

    @property
    def active_params(self) -> float:
        """Parameters one token passes through: the total less the experts it skips.

        Formula: ``params - L_moe * (E - k) * 3 * h * f_e``; ``params`` for a dense model.
        """
        idle = self.moe_layers * max(self.experts - self.top_k, 0) * self.params_per_expert
        return max(self.params - idle, 0.0)


@dataclass(frozen=True, slots=True)
class Parallelism:
    """Parallel layout; ``tp * pp * cp * dp`` equals the GPU count.

    ``ep`` (expert parallelism) folds into the same GPUs, as Megatron-Core's MoE parallel
    folding with expert tensor parallelism 1: ``ep`` divides ``tp * cp * dp``; each EP group is
    ``ep`` consecutive ranks of one pipeline stage; the experts' weights split ``ep`` ways
    (not over TP) and their gradients are synchronised over ``tp * cp * dp / ep`` ranks.
    """

    tp: int = 1
    pp: int = 1
    cp: int = 1
    dp: int = 1
    vp: int = 1
    sharding: Sharding = Sharding.NONE
    ep: int = 1

    @property
    def expert_dp(self) -> int:
        """Ranks that hold the same experts (expert data parallelism): ``tp*cp*dp / ep``."""
        return max(1, self.tp * self.cp * self.dp // self.ep)


@dataclass(frozen=True, slots=True)
class TrainingWorkload:
    """One training step of a transformer."""

    model: ModelShape
    seq_len: int
    global_batch: int
    micro_batch: int
    precision: Precision
    parallelism: Parallelism
    recompute: Recompute
    stack: Stack = DEFAULT_STACK
    job: JobKind = JobKind.PRETRAIN
    lora_rank: int = DEFAULT_LORA_RANK
    attention: Attention = Attention.FLASH
    routing: Routing = Routing.DROPLESS
    capacity_factor: float = 1.0

    @property
    def microbatches(self) -> int:
        """Micro-batches per pipeline per step: ``global_batch / (dp * micro_batch)``."""
        return self.global_batch // (self.parallelism.dp * self.micro_batch)

    @property
    def tokens_per_step(self) -> int:
        """Tokens processed by one step: ``global_batch * seq_len``."""
        return self.global_batch * self.seq_len


@dataclass(frozen=True, slots=True)
class CollectiveWorkload:
    """One collective over every GPU of the cluster, as nccl-tests runs it."""

    op: CollectiveOp
    message_bytes: float
    algorithm: Algorithm = Algorithm.AUTO


@dataclass(frozen=True, slots=True)
class BatchWorkload:
    """Embarrassingly parallel work (batch inference, sweeps, renders).

    Attributes:
        gpu_hours: total work measured on one GPU, in GPU-hours.
        startup_s: per-node start-up (image pull, model load), paid once per node in parallel.
        data_gb_per_node: input each node must read before it can work, GB.
        storage_gbs_per_node: read throughput available to each node, GB/s.
    """

    gpu_hours: float
    startup_s: float = 0.0
    data_gb_per_node: float = 0.0
    storage_gbs_per_node: float = 1.0


@dataclass(frozen=True, slots=True)
class HpcWorkload:
    """Tightly coupled HPC step, weak-scaled, known from a one-node profile.

    Attributes:
        step_time_one_node_s: measured time of one step on one node.
        comm_share: fraction of that step spent in collectives, in [0, 1).
        op: the dominant collective.
        message_bytes: its message size.
        steps: number of steps of the job.
    """

    step_time_one_node_s: float
    comm_share: float
    op: CollectiveOp
    message_bytes: float
    steps: int = 1
