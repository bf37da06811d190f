"""Serving arithmetic: weight bytes, KV cache (GQA and MLA), memory per GPU, decode roofline."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clusterscout.model.calibration import InferenceCalibration
from clusterscout.model.inference import (
    ServingLayout,
    decode_step_s,
    kv_bytes_per_token,
    serving_memory,
    weight_bytes,
)
from clusterscout.model.inputs import Precision
from clusterscout.model.presets import PRESETS
from tests.model.conftest import H100

L405 = PRESETS["405B"].shape
H100_BW = replace(H100, hbm_tbps=3.35)
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
    step = decode_step_s(L405, Precision.FP8, H100_BW, ServingLayout(8, 1), 1, 1024, ROUND)
    faster = decode_step_s(
        L405,
        Precision.FP8,
        H100_BW,
        ServingLayout(8, 1),
        1,
        1024,
        InferenceCalibration(1.0, 0.5),
    )
    assert faster == pytest.approx(step / 2)
    # the weights (about 410 GB) read over 8 GPUs at half of 3.35 TB/s
    assert step == pytest.approx(weight_bytes(L405, Precision.FP8) / 8 / (3.35e12 * 0.5), rel=0.01)


def test_decode_step_grows_with_concurrency_and_context() -> None:
    def step(n: int, ctx: int) -> float:
        return decode_step_s(L405, Precision.FP8, H100_BW, ServingLayout(8, 1), n, ctx, ROUND)

    assert step(1, 1024) < step(32, 1024) < step(32, 32768)


def test_a_gpu_without_bandwidth_cannot_be_sized() -> None:
    with pytest.raises(ValueError, match="memory bandwidth"):
        decode_step_s(L405, Precision.FP8, H100, ServingLayout(8, 1), 1, 1024, ROUND)
