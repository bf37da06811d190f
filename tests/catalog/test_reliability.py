"""data/reliability.toml: the goodput defaults load, match their counts, refuse bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterscout.catalog.reliability import RELIABILITY_FILE, default_reliability, load_reliability
from clusterscout.domain.errors import InputError
from clusterscout.resources import bundled_catalog_dir

SHIPPED = (bundled_catalog_dir() / RELIABILITY_FILE).read_text(encoding="utf-8")


def test_the_shipped_defaults_are_sourced_and_derived_from_their_counts() -> None:
    r = default_reliability()
    # 419 unexpected interruptions in 54 days on 16,384 GPUs.
    assert r.failures_per_million_gpu_hours == pytest.approx(
        419 / (54 * 24 * 16384) * 1e6, abs=0.05
    )
    assert r.source_url.startswith("https://arxiv.org/")
    assert r.checkpoint_source_url.startswith("https://")
    assert r.checkpoint_minutes > 0 and r.restart_minutes >= 0
    assert r.restart_assumed is True
    assert r.given == ()


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / RELIABILITY_FILE).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "text",
    [
        SHIPPED.replace(
            "failures_per_million_gpu_hours = 19.7", "failures_per_million_gpu_hours = 30"
        ),
        SHIPPED.replace("checkpoint_minutes = 60", "checkpoint_minutes = -60"),
        SHIPPED.replace("assumed = true", "assumed = true\nguess = 1"),
        SHIPPED + "\n[unknown\n",
    ],
    ids=["rate disagrees with counts", "negative interval", "unknown key", "not TOML"],
)
def test_a_bad_file_is_refused_naming_it(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError) as caught:
        load_reliability(_write(tmp_path, text))
    assert caught.value.field == "reliability"
    assert RELIABILITY_FILE in caught.value.message


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_reliability(tmp_path)
    assert caught.value.field == "reliability"
