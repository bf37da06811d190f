"""Fine-tuning arithmetic: adapter sizes, frozen-weight bytes, FLOPs and memory per GPU."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clusterscout.domain.models import FabricKind
from clusterscout.model.calibration import Calibration
from clusterscout.model.compute import hardware_flops_per_token, model_flops_per_token
from clusterscout.model.finetune import (
    NF4_BYTES_PER_PARAM,
    adapter_params,
    frozen_weight_bytes,
    mlp_matrices,
)
from clusterscout.model.inputs import (
    ClusterSpec,
    JobKind,
    Parallelism,
    Precision,
    Recompute,
    Sharding,
    TrainingWorkload,
)
from clusterscout.model.memory import memory_per_gpu
from clusterscout.model.presets import PRESETS
from clusterscout.model.training import dp_comm, step_breakdown
from tests.model.conftest import H100

L405 = PRESETS["405B"].shape
L70 = PRESETS["70B"].shape


def test_adapter_count_of_405b_rank_16_by_hand() -> None:
    # per layer: q 2h, k and v (h + 1024) each, o 2h, three MLP matrices (h + ffn)
    h, kv, ffn = 16384, 1024, 53248
    per_layer = 16 * (2 * h + 2 * (h + kv) + 2 * h + 3 * (h + ffn))
    assert adapter_params(L405, 16) == 126 * per_layer
    assert adapter_params(L405, 32) == 2 * adapter_params(L405, 16)


def test_mlp_matrices_tell_gated_from_gpt_blocks() -> None:
    gpt = replace(
        L70, params=80 * 12 * 8192**2 + 2 * 8192 * 128256, ffn_hidden=4 * 8192, kv_heads=64
    )
    assert mlp_matrices(L70) == 3
    assert mlp_matrices(gpt) == 2


def test_nf4_storage_is_the_qlora_papers_4_127_bits() -> None:
    assert pytest.approx(4.127, abs=1e-3) == NF4_BYTES_PER_PARAM * 8
    qlora = frozen_weight_bytes(L405, JobKind.QLORA)
    lora = frozen_weight_bytes(L405, JobKind.LORA)
    assert lora == 2 * L405.params
    # embeddings stay in BF16, so a little more than a quarter of the BF16 bytes
    assert 0.258 < qlora / lora < 0.27


def test_lora_skips_the_frozen_weight_gradient_matmuls() -> None:
    full = model_flops_per_token(L405, 8192)
    lora = model_flops_per_token(L405, 8192, JobKind.LORA)
    # 4N instead of 6N; attention and the adapters keep it a little above two thirds
    assert 2 / 3 < lora / full < 0.7
    assert model_flops_per_token(L405, 8192, JobKind.FULL_FINETUNE) == full


def test_full_recompute_repeats_one_forward_pass_for_every_job() -> None:
    for job in (JobKind.PRETRAIN, JobKind.LORA):
        f = model_flops_per_token(L70, 4096, job)
        hw = hardware_flops_per_token(L70, 4096, Recompute.FULL, job)
        assert hw > f
    pre = model_flops_per_token(L70, 4096)
    assert hardware_flops_per_token(L70, 4096, Recompute.FULL) == pytest.approx(pre * 4 / 3)


def _workload(job: JobKind, sharding: Sharding = Sharding.FSDP) -> TrainingWorkload:
    return TrainingWorkload(
        model=L70,
        seq_len=4096,
        global_batch=64,
        micro_batch=1,
        precision=Precision.BF16,
        parallelism=Parallelism(tp=1, pp=1, dp=8, sharding=sharding),
        recompute=Recompute.FULL,
        job=job,
    )


def test_memory_per_gpu_orders_pretrain_lora_qlora(cal: Calibration) -> None:
    pre, lora, qlora = (
        memory_per_gpu(_workload(j), H100, cal)
        for j in (JobKind.PRETRAIN, JobKind.LORA, JobKind.QLORA)
    )
    assert pre.total_gib > lora.total_gib > qlora.total_gib
    # gradients and Adam exist for the adapters only: well under 1 GiB per GPU
    assert lora.grads_gib + lora.optimizer_gib < 1.0
    assert qlora.weights_gib < lora.weights_gib / 3


def test_lora_data_parallel_traffic_is_the_adapters_only(cal: Calibration) -> None:
    cluster = ClusterSpec(H100, 8, 2, FabricKind.INFINIBAND, 3200, True)
    pre = dp_comm(_workload(JobKind.PRETRAIN, Sharding.ZERO1), cluster, 1.0, cal)
    lora = dp_comm(_workload(JobKind.LORA, Sharding.ZERO1), cluster, 1.0, cal)
    assert lora.exposed_s + lora.hidden_s < (pre.exposed_s + pre.hidden_s) / 20


def test_qlora_steps_are_slower_than_lora_on_the_same_layout(cal: Calibration) -> None:
    cluster = ClusterSpec(H100, 8, 1)
    lora = step_breakdown(_workload(JobKind.LORA), cluster, cal).compute_s
    qlora = step_breakdown(_workload(JobKind.QLORA), cluster, cal).compute_s
    pre = step_breakdown(_workload(JobKind.PRETRAIN), cluster, cal).compute_s
    assert lora < qlora and lora < pre
