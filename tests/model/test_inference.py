"""Serving arithmetic: weight bytes, KV cache (GQA and MLA), memory per GPU, the decode step
(roofline, fixed costs, tensor-parallel all-reduces, dequantisation, MoE) and prefill."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clusterscout.model.calibration import Calibration, InferenceCalibration
from clusterscout.model.inference import (
    ServingHardware,
    ServingLayout,
    decode_step,
    decode_step_s,
    hardware_for,
    kv_bytes_per_token,
    kv_split,
    prefill_s,
    serving_memory,
    step_weight_bytes,
    touched_experts,
    weight_bytes,
    weight_only,
)
from clusterscout.model.inputs import Precision
from clusterscout.model.presets import PRESETS
from tests.model.conftest import A100, H100

L405 = PRESETS["405B"].shape
L70 = PRESETS["70B"].shape
L8 = PRESETS["8B"].shape
MIXTRAL = PRESETS["mixtral-8x7b"].shape
DSV3 = PRESETS["deepseek-v3"].shape
H100_BW = replace(H100, hbm_tbps=3.35)
A100_BW = replace(A100, hbm_tbps=2.039)
HW = ServingHardware(H100_BW, tp_busbw_gbs=450.0)
ROUND = InferenceCalibration(bandwidth_efficiency=0.5, compute_efficiency=0.5)


def test_kv_cache_of_llama_405b_by_hand() -> None:
    # 2 (K and V) * 126 layers * 8 KV heads * 128 dims * 2 bytes
    assert kv_bytes_per_token(L405, Precision.BF16) == 2 * 126 * 8 * 128 * 2
    assert kv_bytes_per_token(L405, Precision.FP8) == 126 * 8 * 128 * 2


def test_latent_attention_caches_the_compressed_latent() -> None:
    # DeepSeek-V3's MLA: one 512-wide latent and one 64-wide rotary key per layer, against
    # 2 x 128 heads x 128 wide keys and values without it (the preset's own shape)
    mla = PRESETS["deepseek-v3"].shape
    assert kv_bytes_per_token(mla, Precision.FP8) == 61 * (512 + 64)
    plain = replace(mla, kv_lora_rank=0, qk_rope_head_dim=0)
    assert kv_bytes_per_token(plain, Precision.FP8) == 2 * 61 * 128 * (7168 / 128)


def test_weights_shrink_with_precision_but_embeddings_stay_bf16() -> None:
    bf16, fp8, int4 = (
        weight_bytes(L405, p) for p in (Precision.BF16, Precision.FP8, Precision.INT4)
    )
    assert bf16 == pytest.approx(2 * L405.params)
    assert bf16 / 2 < fp8 < bf16 / 2 * 1.02
    assert fp8 / 2 < int4 < fp8


def test_405b_fp8_with_32_long_sequences_needs_two_h100_nodes_of_memory() -> None:
    one = serving_memory(L405, Precision.FP8, 32768, 32, ServingLayout(8, 1), H100, 0.9)
    two = serving_memory(L405, Precision.FP8, 32768, 32, ServingLayout(8, 2), H100, 0.9)
    assert not one.fits and two.fits
    assert two.weights_gib == pytest.approx(one.weights_gib / 2)


def test_kv_heads_stop_splitting_past_their_count() -> None:
    tp8 = serving_memory(L405, Precision.BF16, 4096, 8, ServingLayout(8, 1), H100, 0.9)
    wide = replace(L405, kv_heads=2)
    tp8_gqa2 = serving_memory(wide, Precision.BF16, 4096, 8, ServingLayout(8, 1), H100, 0.9)
    # 4x less cache in total, but 2 KV heads split over 2 ranks only (each head repeats on 4
    # ranks): every rank still holds as much as with 8 heads over 8 ranks
    assert tp8_gqa2.kv_cache_gib == pytest.approx(tp8.kv_cache_gib)
    tp2_gqa2 = serving_memory(wide, Precision.BF16, 4096, 8, ServingLayout(2, 1), H100, 0.9)
    assert tp2_gqa2.kv_cache_gib == pytest.approx(tp8_gqa2.kv_cache_gib)


def test_decode_at_batch_one_is_bandwidth_bound() -> None:
    step = decode_step_s(L405, Precision.FP8, HW, ServingLayout(8, 1), 1, 1024, ROUND)
    faster = decode_step_s(
        L405,
        Precision.FP8,
        HW,
        ServingLayout(8, 1),
        1,
        1024,
        InferenceCalibration(1.0, 0.5),
    )
    assert faster == pytest.approx(step / 2, rel=0.01)
    # the weights (about 410 GB) read over 8 GPUs at half of 3.35 TB/s (no fixed costs, no
    # all-reduce latency: the bandwidth term of 8 tokens' activations is microseconds)
    assert step == pytest.approx(weight_bytes(L405, Precision.FP8) / 8 / (3.35e12 * 0.5), rel=0.01)


def test_decode_step_grows_with_concurrency_and_context() -> None:
    def step(n: int, ctx: int) -> float:
        return decode_step_s(L405, Precision.FP8, HW, ServingLayout(8, 1), n, ctx, ROUND)

    assert step(1, 1024) < step(32, 1024) < step(32, 32768)


def test_a_gpu_without_bandwidth_cannot_be_sized() -> None:
    no_bandwidth = ServingHardware(H100, tp_busbw_gbs=450.0)
    with pytest.raises(ValueError, match="memory bandwidth"):
        decode_step_s(L405, Precision.FP8, no_bandwidth, ServingLayout(8, 1), 1, 1024, ROUND)


def test_each_tensor_parallel_layer_pays_two_all_reduce_latencies() -> None:
    # 20 us per all-reduce, two per layer: at batch 1 the messages are 16 KB, so the
    # latency is the whole cost; one GPU has no all-reduce at all.
    slow = replace(HW, allreduce_latency_s=20e-6)
    tp8 = decode_step(L70, Precision.FP8, slow, ServingLayout(8, 1), 1, 1024, ROUND)
    tp1 = decode_step(L70, Precision.FP8, slow, ServingLayout(1, 1), 1, 1024, ROUND)
    assert tp1.allreduce_s == 0.0
    assert tp8.allreduce_s == pytest.approx(2 * L70.layers * 20e-6, rel=0.01)


def test_fixed_costs_make_tensor_parallelism_far_from_free_at_batch_one() -> None:
    # With a fixed time per layer the TP8 step stays several times its bandwidth floor,
    # while TP1 (eight times the bytes per GPU) is close to it.
    cal = replace(ROUND, layer_overhead_s=50e-6)
    hw = replace(HW, allreduce_latency_s=10e-6)

    def ratio(tp: int) -> float:
        step = decode_step_s(L70, Precision.FP8, hw, ServingLayout(tp, 1), 1, 1024, cal)
        floor = weight_bytes(L70, Precision.FP8) / tp / 3.35e12
        return step / floor

    assert ratio(1) < ratio(2) < ratio(4) < ratio(8)
    assert ratio(8) > 1.8 * ratio(1)


def test_weight_only_formats_dequantise_at_a_share_of_the_bandwidth() -> None:
    assert weight_only(H100, Precision.INT4) and weight_only(A100, Precision.FP8)
    assert not weight_only(H100, Precision.FP8) and not weight_only(A100, Precision.BF16)
    full = replace(ROUND, weight_only_bandwidth=1.0)
    half = replace(ROUND, weight_only_bandwidth=0.5)
    hw = ServingHardware(A100_BW, 300.0)
    fast = decode_step(L70, Precision.INT4, hw, ServingLayout(2, 1), 1, 1, full)
    slow = decode_step(L70, Precision.INT4, hw, ServingLayout(2, 1), 1, 1, half)
    # the weights dominate at batch 1 and one token of context: their time doubles
    assert slow.memory_s == pytest.approx(2 * fast.memory_s, rel=0.01)
    # BF16 weights are not dequantised: the factor does not touch them
    bf16_full = decode_step(L70, Precision.BF16, hw, ServingLayout(2, 1), 1, 1, full)
    bf16_half = decode_step(L70, Precision.BF16, hw, ServingLayout(2, 1), 1, 1, half)
    assert bf16_half.memory_s == pytest.approx(bf16_full.memory_s)


def test_a_moe_step_reads_only_the_experts_its_tokens_reach() -> None:
    # Mixtral: 8 experts, 2 per token. One token touches 2 per layer; many touch all 8.
    assert touched_experts(MIXTRAL, 1) == pytest.approx(2.0)
    assert touched_experts(MIXTRAL, 256) == pytest.approx(8.0, rel=1e-6)
    assert touched_experts(L70, 64) == 0.0
    one = step_weight_bytes(MIXTRAL, Precision.BF16, ServingLayout(2, 1), 1)
    many = step_weight_bytes(MIXTRAL, Precision.BF16, ServingLayout(2, 1), 256)
    assert many == pytest.approx(weight_bytes(MIXTRAL, Precision.BF16) / 2, rel=0.01)
    assert one < 0.45 * many
    # so a batch-1 MoE step is faster than a dense model of the same total size
    dense = replace(MIXTRAL, experts=0, top_k=0)
    moe_step = decode_step_s(MIXTRAL, Precision.BF16, HW, ServingLayout(2, 1), 1, 512, ROUND)
    dense_step = decode_step_s(dense, Precision.BF16, HW, ServingLayout(2, 1), 1, 512, ROUND)
    assert moe_step < 0.5 * dense_step


def test_moe_fixed_cost_applies_to_moe_layers_only() -> None:
    cal = replace(ROUND, moe_layer_overhead_s=100e-6)
    # DeepSeek-V3 keeps its first 3 layers dense
    parts = decode_step(DSV3, Precision.FP8, HW, ServingLayout(8, 1), 1, 1024, cal)
    assert parts.fixed_s == pytest.approx(DSV3.moe_layers * 100e-6)
    assert DSV3.moe_layers == DSV3.layers - 3


def test_a_latent_cache_is_not_split_by_tensor_parallelism() -> None:
    assert kv_split(DSV3, ServingLayout(8, 1)) == 1
    assert kv_split(L70, ServingLayout(8, 1)) == 8
    assert kv_split(L70, ServingLayout(8, 2)) == 16


def test_legacy_attention_rereads_the_cache_per_query_head() -> None:
    cal = replace(ROUND, legacy_gqa_reads=1.0)
    new = decode_step(L70, Precision.FP8, HW, ServingLayout(4, 1), 64, 8192, cal)
    old = decode_step(
        L70, Precision.FP8, HW, ServingLayout(4, 1), 64, 8192, cal, legacy_attention=True
    )
    kv = kv_bytes_per_token(L70, Precision.FP8) * 8192 * 64 / 4 / (3.35e12 * 0.5)
    group = L70.heads / L70.kv_heads
    assert old.memory_s - new.memory_s == pytest.approx(kv * (group - 1), rel=1e-6)


def test_prefill_is_compute_bound_and_grows_faster_than_the_prompt() -> None:
    cal = replace(ROUND, prefill_efficiency=0.5)
    short = prefill_s(L8, Precision.BF16, HW, ServingLayout(1, 1), 1, 8192, cal)
    long = prefill_s(L8, Precision.BF16, HW, ServingLayout(1, 1), 1, 32768, cal)
    # 4x the prompt: 4x the GEMMs and 16x the attention, so more than 4x the time
    assert long > 4 * short
    flops = 2 * 8192 * (8.03e9 - 4096 * 128256) + 2 * 32 * 4096 * 8192**2
    assert short == pytest.approx(flops / (989e12 * 0.5), rel=0.05)
    # two GPUs halve the math of a long prompt (plus their all-reduces)
    tp2 = prefill_s(L8, Precision.BF16, HW, ServingLayout(2, 1), 1, 32768, cal)
    assert 0.5 * long < tp2 < 0.6 * long


def test_serving_hardware_takes_the_nccl_fitted_intra_node_figures(cal: Calibration) -> None:
    hw = hardware_for(H100_BW, cal)
    assert hw.allreduce_latency_s == cal.intra_node.latency_s
    pcie = hardware_for(replace(H100_BW, scale_up_gbs=None), cal)
    assert pcie.tp_busbw_gbs == cal.intra_node.pcie_busbw_gbs < hw.tp_busbw_gbs


def test_moe_memory_splits_the_experts_over_the_tensor_parallel_group() -> None:
    tp2 = serving_memory(MIXTRAL, Precision.BF16, 4096, 1, ServingLayout(2, 1), H100, 0.9)
    tp4 = serving_memory(MIXTRAL, Precision.BF16, 4096, 1, ServingLayout(4, 1), H100, 0.9)
    assert tp2.weights_gib == pytest.approx(2 * tp4.weights_gib)
    assert tp2.weights_gib * 2 == pytest.approx(weight_bytes(MIXTRAL, Precision.BF16) / 2**30)


def test_a_gpu_without_a_tflops_figure_cannot_be_sized_and_no_prompt_takes_no_time() -> None:
    bare = ServingHardware(replace(H100_BW, bf16_dense_tflops=None, fp8_dense_tflops=None), 450.0)
    with pytest.raises(ValueError, match="TFLOP/s"):
        decode_step_s(L70, Precision.BF16, bare, ServingLayout(1, 1), 1, 1024, ROUND)
    assert prefill_s(L70, Precision.BF16, HW, ServingLayout(1, 1), 0, 1024, ROUND) == 0.0
    assert prefill_s(L70, Precision.BF16, HW, ServingLayout(1, 1), 1, 0, ROUND) == 0.0
