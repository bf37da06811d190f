"""The spot-check sampler: same seed, same facts; each fact counted once, with its sources."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from clusterscout.catalog.load import load_catalog

SCRIPT = Path(__file__).parents[2] / "scripts" / "spot_check_sample.py"


@pytest.fixture(scope="module")
def sampler() -> ModuleType:
    spec = importlib.util.spec_from_file_location("spot_check_sample", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["spot_check_sample"] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


def _sample(
    sampler: ModuleType, data: Path, seed: int, n: int, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    argv = ["--seed", str(seed), "-n", str(n), "--data", str(data), "--format", "json"]
    assert sampler.main(argv) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_same_seed_draws_the_same_facts(
    sampler: ModuleType, fixture_data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _sample(sampler, fixture_data_dir, 7, 5, capsys)
    again = _sample(sampler, fixture_data_dir, 7, 5, capsys)
    other = _sample(sampler, fixture_data_dir, 8, 5, capsys)
    assert first == again
    assert first["facts"] != other["facts"]


def test_every_fact_names_a_source(sampler: ModuleType, fixture_data_dir: Path) -> None:
    catalog = load_catalog(fixture_data_dir).catalog
    assert catalog is not None
    facts = [f for p in catalog.providers for f in sampler.facts(p)]
    assert facts
    assert all(f.sources for f in facts), [f for f in facts if not f.sources]
    assert all(
        src.split(" ", 1)[0] in {"primary", "secondary", "catalog"}
        for f in facts
        for src in f.sources
    )


def test_prices_count_one_each_and_inherited_tables_count_once(
    sampler: ModuleType, fixture_data_dir: Path
) -> None:
    catalog = load_catalog(fixture_data_dir).catalog
    assert catalog is not None
    for provider in catalog.providers:
        facts = list(sampler.facts(provider))
        prices = [f for f in facts if f.field == "price"]
        assert len(prices) == sum(len(o.prices) for o in provider.offers)
        for offer in provider.offers:
            own = [
                f
                for f in facts
                if f.offer == offer.local_id and f.field.startswith("orchestration.")
            ]
            if offer.orchestration == provider.orchestration:
                assert own == []


def test_too_large_a_sample_is_refused(
    sampler: ModuleType, fixture_data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        sampler.main(["--seed", "1", "-n", "100000", "--data", str(fixture_data_dir)])
    assert "larger than the" in capsys.readouterr().err
