"""data/fabric_brackets.toml: strict reading, cross-file checks, and the stored round trip."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from clusterscout.catalog.brackets import (
    BRACKETS_FILE,
    Brackets,
    brackets_from_json,
    brackets_json,
    check_offers,
    load_brackets,
)
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Problem
from clusterscout.domain.brackets import FabricBracket

DATA = Path(__file__).resolve().parents[2] / "data"

GOOD_HEAD = """
[[sources]]
id = "s"
url = "https://example.org/s"
checked_on = 2026-12-01
"""


def _load(tmp_path: Path, body: str) -> tuple[Brackets, list[Problem]]:
    (tmp_path / BRACKETS_FILE).write_text(GOOD_HEAD + body, encoding="utf-8")
    catalog = load_catalog(DATA).catalog
    assert catalog is not None
    problems: list[Problem] = []
    return load_brackets(tmp_path, catalog.gpus, problems), problems


def test_the_shipped_table_loads_clean_and_holds_every_published_node() -> None:
    result = load_catalog(DATA)
    assert result.catalog is not None
    problems: list[Problem] = []
    brackets, sizes = load_brackets(DATA, result.catalog.gpus, problems)
    assert problems == []
    assert brackets and sizes
    assert check_offers(brackets, result.catalog.offers) == []
    # Every bracket end has a public source with its date.
    for b in brackets:
        assert b.low_source.url.startswith("https://") and b.high_source.checked_on
        assert b.low_gbps <= b.high_gbps
    # The build stores what the planner needs: values, GPUs and each end's URL and date.
    back, back_sizes = brackets_from_json(brackets_json((brackets, sizes)))

    def key(b: FabricBracket) -> tuple[object, ...]:
        ends = (b.low_source.url, b.low_source.checked_on, b.high_source.url)
        return (b.fabric, b.generation, b.gpus, b.low_gbps, b.high_gbps, b.note, *ends)

    assert [key(b) for b in back] == [key(b) for b in brackets]
    assert [(s.gpus, s.gpus_per_node, s.source.url) for s in back_sizes] == [
        (s.gpus, s.gpus_per_node, s.source.url) for s in sizes
    ]


def test_an_offer_outside_its_bracket_is_a_problem() -> None:
    result = load_catalog(DATA)
    assert result.catalog is not None
    brackets, _ = load_brackets(DATA, result.catalog.gpus, [])
    offer = next(o for o in result.catalog.offers if o.per_node_gbps and o.fabric)
    bad = replace(offer, per_node_gbps=1.0)
    (problem,) = check_offers(brackets, [bad])
    assert offer.id in problem.message and "outside" in problem.message


def test_missing_file_is_no_brackets(tmp_path: Path) -> None:
    assert load_brackets(tmp_path, (), []) == ((), ())


def test_every_mistake_is_reported(tmp_path: Path) -> None:
    body = """
[[generations]]
id = "g"
name = "G"
gpus = ["H100-SXM-80GB", "NoSuchGPU"]
gpus_per_node = 8
gpus_per_node_source = "missing"

[[generations]]
id = "g"
name = "G again"
gpus = ["H100-SXM-80GB"]

[[brackets]]
fabric = "infiniband"
generation = "g"
low_gbps = 3200.0
low_source = "s"
high_gbps = 800.0
high_source = "s"

[[brackets]]
fabric = "infiniband"
generation = "g"
low_gbps = 800.0
low_source = "s"
high_gbps = 800.0
high_source = "s"

[[brackets]]
fabric = "roce"
generation = "nowhere"
low_gbps = 800.0
low_source = "s"
high_gbps = 800.0
high_source = "s"

[[brackets]]
fabric = "roce"
generation = "g"
low_gbps = 800.0
low_source = "unknown-source"
high_gbps = 800.0
high_source = "s"
"""
    (brackets, sizes), problems = _load(tmp_path, body)
    text = "\n".join(p.message for p in problems)
    assert "listed twice" in text
    assert "unknown GPU 'NoSuchGPU'" in text
    assert "already in generation" in text
    assert "low_gbps is above high_gbps" in text
    assert "'nowhere' is not defined" in text
    assert "'unknown-source' is not defined" in text
    assert "'missing' is not defined" in text
    assert len(brackets) == 1 and sizes == ()


def test_schema_errors_stop_the_file(tmp_path: Path) -> None:
    body = """
[[generations]]
id = "g"
name = "G"
gpus = ["H100-SXM-80GB"]
gpus_per_node = 8

[[brackets]]
fabric = "infiniband"
generation = "g"
low_gbps = 800.0
low_source = "s"
high_gbps = 800.0
high_source = "s"
"""
    result, problems = _load(tmp_path, body)
    assert result == ((), ())
    assert any("go together" in p.message for p in problems)
