"""Counts and quantities in the catalog have sane upper bounds: a typo is refused by validate
with a message naming the field and the bound, before it can reach the planner."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clusterscout.catalog.load import load_catalog

FIXTURE_CATALOG = Path(__file__).parents[1] / "fixtures" / "catalog"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(FIXTURE_CATALOG, target)
    return target


def _errors(data_dir: Path, file: str, old: str, new: str) -> list[str]:
    path = data_dir / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return [f"{p.path}: {p.message}" for p in load_catalog(data_dir).problems]


@pytest.mark.parametrize(
    ("file", "old", "new", "field", "bound"),
    [
        ("providers/alpha.toml", "gpus_per_node = 8", "gpus_per_node = 9223372036854775807",
         "gpus_per_node", "72"),
        ("providers/alpha.toml", "gpus_per_node = 8", "gpus_per_node = 73", "gpus_per_node", "72"),
        ("providers/alpha.toml", "max_nodes = 64", "max_nodes = 100001", "max_nodes", "100000"),
        ("providers/alpha.toml", "max_nodes_by_quote = 256", "max_nodes_by_quote = 10000000",
         "max_nodes_by_quote", "100000"),
        ("providers/alpha.toml", "per_node_gbps = 3200", "per_node_gbps = 1e9",
         "per_node_gbps", "100000"),
        ("providers/alpha.toml", "usd_per_gpu_hour = 2.99", "usd_per_gpu_hour = 1e6",
         "usd_per_gpu_hour", "1000"),
        ("gpus.toml", "memory_gib = 74.5", "memory_gib = 1e12", "memory_gib", "10000"),
    ],
)  # fmt: skip
def test_values_past_their_bound_are_errors(
    data_dir: Path, file: str, old: str, new: str, field: str, bound: str
) -> None:
    found = _errors(data_dir, file, old, new)
    assert any(field in m and "less than or equal to" in m and bound in m for m in found), found


def test_values_at_their_bound_are_accepted(data_dir: Path) -> None:
    found = _errors(data_dir, "providers/alpha.toml", "gpus_per_node = 8", "gpus_per_node = 72")
    assert not any("gpus_per_node" in m for m in found), found


@pytest.mark.parametrize("text", ["two\\nlines", "a\\u0007bell", "line\\u2028separator"])
def test_control_characters_in_catalog_text_are_errors(data_dir: Path, text: str) -> None:
    found = _errors(data_dir, "providers/alpha.toml", 'name = "Alpha Cloud"', f'name = "{text}"')
    assert any(m.endswith("write the text on one line") and "name" in m for m in found), found
