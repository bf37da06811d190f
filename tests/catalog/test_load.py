"""Schema and cross-file checks report every problem with its file and key path."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Severity, has_errors
from clusterscout.domain.models import FabricKind, MultiNode, PriceTier


@pytest.fixture
def catalog_copy(tmp_path: Path, fixture_data_dir: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(fixture_data_dir, target)
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture no longer contains {old!r}"
    path.write_text(text.replace(old, new, 1))


def _messages(data_dir: Path) -> list[str]:
    return [str(p) for p in load_catalog(data_dir).problems if p.severity is Severity.ERROR]


def test_fixture_catalog_loads_without_problems(fixture_data_dir: Path) -> None:
    result = load_catalog(fixture_data_dir)
    assert result.ok
    assert result.problems == []
    assert result.catalog is not None
    alpha = next(p for p in result.catalog.providers if p.slug == "alpha")
    assert alpha.multi_node is MultiNode.YES
    offer = next(o for o in alpha.offers if o.local_id == "h100-ib")
    assert offer.id == "alpha-h100-ib"
    assert offer.fabric is FabricKind.INFINIBAND
    assert offer.per_node_gbps == 3200.0
    assert offer.from_usd_per_gpu_hour == 2.29
    assert offer.reach_nodes == 256
    assert {p.tier for p in offer.prices} == {PriceTier.ON_DEMAND, PriceTier.RESERVED}
    # Offer inherits the provider's orchestration and its sources.
    assert offer.orchestration.managed_slurm is True
    assert offer.field_sources["per_node_gbps"][0].url == "https://alpha.example.com/clusters"
    assert offer.field_sources["prices"][0].url == "https://alpha.example.com/pricing"


def test_malformed_toml_names_the_file(catalog_copy: Path) -> None:
    (catalog_copy / "providers" / "alpha.toml").write_text('slug = "alpha"\nname = \n')
    msgs = _messages(catalog_copy)
    assert any(m.startswith("data/providers/alpha.toml: (file): malformed TOML") for m in msgs)


def test_unknown_key_is_an_error_with_its_path(catalog_copy: Path) -> None:
    _edit(
        catalog_copy / "providers" / "alpha.toml",
        "gpus_per_node = 8\n",
        "gpus_per_node = 8\ncolour = 1\n",
    )
    assert "data/providers/alpha.toml: offers[h100-ib].colour: unknown key" in _messages(
        catalog_copy
    )


def test_wrong_type_is_an_error_with_its_path(catalog_copy: Path) -> None:
    _edit(
        catalog_copy / "providers" / "alpha.toml", "per_node_gbps = 3200", 'per_node_gbps = "3200"'
    )
    msgs = _messages(catalog_copy)
    assert any(
        m.startswith("data/providers/alpha.toml: offers[h100-ib].per_node_gbps:") for m in msgs
    )


def test_missing_sources_on_a_fact_group_is_an_error(catalog_copy: Path) -> None:
    _edit(
        catalog_copy / "providers" / "alpha.toml",
        'granularity = "per_minute"\nsources = ["pricing"]',
        'granularity = "per_minute"',
    )
    assert "data/providers/alpha.toml: billing.sources: required key is missing" in _messages(
        catalog_copy
    )


def test_unresolved_source_id_is_an_error(catalog_copy: Path) -> None:
    _edit(catalog_copy / "providers" / "beta.toml", 'source = "docs"', 'source = "nowhere"')
    msgs = _messages(catalog_copy)
    assert (
        "data/providers/beta.toml: offers[mi300x-roce].prices[0].source: "
        "source 'nowhere' is not defined in [[sources]]"
    ) in msgs


def test_duplicate_offer_id_is_an_error(catalog_copy: Path) -> None:
    _edit(catalog_copy / "providers" / "alpha.toml", 'id = "a100-ib"', 'id = "h100-ib"')
    msgs = _messages(catalog_copy)
    assert any("offers[h100-ib].id: duplicate offer id 'h100-ib'" in m for m in msgs)


def test_every_problem_is_reported_at_once(catalog_copy: Path) -> None:
    _edit(
        catalog_copy / "providers" / "alpha.toml",
        "gpus_per_node = 8\n",
        "gpus_per_node = 8\nx = 1\n",
    )
    _edit(catalog_copy / "providers" / "beta.toml", 'gpu = "MI300X-192GB"', 'gpu = "MI999"')
    (catalog_copy / "providers" / "gamma.toml").write_text("not toml [")
    msgs = _messages(catalog_copy)
    files = {m.split(":")[0] for m in msgs}
    assert files == {
        "data/providers/alpha.toml",
        "data/providers/beta.toml",
        "data/providers/gamma.toml",
    }


def test_unknown_gpu_suggests_the_canonical_name(catalog_copy: Path) -> None:
    _edit(catalog_copy / "providers" / "beta.toml", 'gpu = "MI300X-192GB"', 'gpu = "mi300x"')
    msgs = _messages(catalog_copy)
    assert any("unknown GPU 'mi300x'; did you mean 'MI300X-192GB'?" in m for m in msgs)


def test_future_dates_are_errors(catalog_copy: Path) -> None:
    _edit(
        catalog_copy / "providers" / "beta.toml",
        "checked_on = 2026-10-15",
        "checked_on = 2999-01-01",
    )
    msgs = _messages(catalog_copy)
    assert any(
        "sources[docs].checked_on: checked_on 2999-01-01 is in the future" in m for m in msgs
    )


def test_implausible_price_is_an_error(catalog_copy: Path) -> None:
    _edit(
        catalog_copy / "providers" / "alpha.toml",
        "usd_per_gpu_hour = 2.99",
        "usd_per_gpu_hour = 29.9",
    )
    msgs = _messages(catalog_copy)
    assert any("prices[0].usd_per_gpu_hour: $29.9/GPU-h is outside" in m for m in msgs)


def test_slug_must_match_file_name(catalog_copy: Path) -> None:
    _edit(catalog_copy / "providers" / "gamma.toml", 'slug = "gamma"', 'slug = "delta"')
    assert "data/providers/gamma.toml: slug: slug 'delta' does not match the file name" in (
        _messages(catalog_copy)
    )


def test_multi_node_provider_needs_an_offer(catalog_copy: Path) -> None:
    _edit(catalog_copy / "providers" / "gamma.toml", 'status = "no"', 'status = "yes"')
    assert (
        "data/providers/gamma.toml: offers: multi_node is 'yes' but no offer is listed"
        in _messages(catalog_copy)
    )


def test_multi_node_offers_without_any_fabric_are_a_warning(catalog_copy: Path) -> None:
    path = catalog_copy / "providers" / "beta.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        "\n".join(line for line in text.splitlines() if not line.startswith("fabric")),
        encoding="utf-8",
    )
    problems = load_catalog(catalog_copy).problems
    found = [p for p in problems if "no offer states its fabric" in p.message]
    assert [(p.file, p.severity) for p in found] == [("data/providers/beta.toml", Severity.WARNING)]


def test_offers_on_a_non_multi_node_provider_are_rejected(catalog_copy: Path) -> None:
    _edit(catalog_copy / "providers" / "beta.toml", 'status = "yes"', 'status = "unknown"')
    msgs = _messages(catalog_copy)
    assert any("offers are listed but multi_node.status is not 'yes'" in m for m in msgs)


def test_bad_enum_value_lists_the_allowed_values(catalog_copy: Path) -> None:
    _edit(catalog_copy / "providers" / "beta.toml", 'fabric = "roce"', 'fabric = "nvlink"')
    msgs = _messages(catalog_copy)
    assert any(
        "offers[mi300x-roce].fabric:" in m and "'infiniband'" in m and "'ethernet'" in m
        for m in msgs
    )


def test_old_sources_are_warnings_not_errors(catalog_copy: Path) -> None:
    _edit(
        catalog_copy / "providers" / "gamma.toml",
        "checked_on = 2026-11-01",
        "checked_on = 2020-01-01",
    )
    result = load_catalog(catalog_copy)
    stale = [p for p in result.problems if "stale" in p.message]
    assert stale
    assert all(p.severity is Severity.WARNING for p in stale)
    assert not has_errors(result.problems)


def test_missing_data_dir_is_reported(tmp_path: Path) -> None:
    result = load_catalog(tmp_path / "nope")
    assert result.catalog is None
    assert "data directory does not exist" in str(result.problems[0])


def test_run_checks_uses_the_given_day(fixture_data_dir: Path) -> None:
    from clusterscout.catalog.checks import run_checks

    catalog = load_catalog(fixture_data_dir).catalog
    assert catalog is not None
    problems = run_checks(catalog, fixture_data_dir, today=date(2026, 1, 1))
    assert any("is in the future" in p.message for p in problems)


def test_two_prices_with_the_same_tier_and_term_are_rejected(catalog_copy: Path) -> None:
    _edit(catalog_copy / "providers" / "alpha.toml", 'term = "1 year"\n', "")
    _edit(catalog_copy / "providers" / "alpha.toml", 'tier = "reserved"', 'tier = "on_demand"')
    msgs = _messages(catalog_copy)
    assert any(
        "offers[h100-ib].prices: 2 prices share tier 'on_demand' and term None" in m for m in msgs
    )
