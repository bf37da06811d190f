"""Edge cases of the catalog rules that the fixture files do not reach."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from clusterscout.catalog.checks import check_ids, check_references
from clusterscout.catalog.filters import OfferFilter
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Problem, Severity
from clusterscout.catalog.reading import _loc_to_path, _rel
from clusterscout.catalog.records import provider_record
from clusterscout.domain.models import (
    CatalogData,
    FabricKind,
    FabricSpec,
    GpuSpec,
    MultiNode,
    Offer,
    Provider,
    Source,
)

SRC = Source(id="s", url="https://example.com/", checked_on=date(2026, 11, 1))
DATA = Path("data")


def _provider(slug: str, *offers: Offer) -> Provider:
    return Provider(
        slug=slug,
        name=slug.title(),
        url="https://example.com/",
        multi_node=MultiNode.YES,
        multi_node_evidence="test",
        offers=offers,
        sources=(SRC,),
    )


def _offer(provider: str, local: str, **kw: object) -> Offer:
    return Offer(id=f"{provider}-{local}", local_id=local, provider=provider, gpu="H100", **kw)  # type: ignore[arg-type]


def test_duplicate_slugs_and_colliding_global_ids() -> None:
    catalog = CatalogData(
        providers=(
            _provider("a", _offer("a", "b-c")),
            _provider("a-b", _offer("a-b", "c")),
            _provider("a-b"),
        ),
        gpus=(),
        fabrics=(),
    )
    messages = [str(p) for p in check_ids(catalog, DATA)]
    assert "data/providers/a-b.toml: slug: duplicate slug" in messages
    assert any("global offer id 'a-b-c' is also produced by a" in m for m in messages)


def test_fabric_generation_must_exist_and_match_the_kind() -> None:
    gpus = (GpuSpec(name="H100", vendor="nvidia", memory_gib=74.5, aliases=("h100-sxm",)),)
    gpus += (GpuSpec(name="H200", vendor="nvidia", memory_gib=131, aliases=("H100-SXM",)),)
    fabrics = (FabricSpec(id="roce-400g", kind=FabricKind.ROCE, name="RoCE"),)
    catalog = CatalogData(
        providers=(
            _provider(
                "p",
                _offer("p", "x", fabric=FabricKind.INFINIBAND, fabric_generation="roce-400g"),
                _offer("p", "y", fabric=FabricKind.ROCE, fabric_generation="nvlink-5"),
            ),
        ),
        gpus=gpus,
        fabrics=fabrics,
    )
    messages = [str(p) for p in check_references(catalog, DATA)]
    assert any("'roce-400g' is a roce fabric, but fabric is 'infiniband'" in m for m in messages)
    assert any("unknown fabric generation 'nvlink-5'" in m for m in messages)
    assert any("alias 'H100-SXM' also names H100" in m for m in messages)


@pytest.fixture
def copy(tmp_path: Path, fixture_data_dir: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(fixture_data_dir, target)
    return target


def _problems(data_dir: Path) -> list[Problem]:
    return load_catalog(data_dir).problems


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_duplicate_source_ids_and_uncited_sources(copy: Path) -> None:
    alpha = copy / "providers" / "alpha.toml"
    _replace(alpha, 'id = "pricing"', 'id = "clusters"')
    gamma = copy / "providers" / "gamma.toml"
    gamma.write_text(
        gamma.read_text() + '\n[[sources]]\nid = "spare"\nurl = "https://gamma.example.net/x"\n'
        "checked_on = 2026-11-01\n"
    )
    problems = _problems(copy)
    assert any("duplicate source id 'clusters'" in p.message for p in problems)
    uncited = [p for p in problems if p.message == "source is never cited"]
    assert [(p.file, p.path, p.severity) for p in uncited] == [
        ("data/providers/gamma.toml", "sources[spare]", Severity.WARNING)
    ]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("max_nodes = 16", "max_nodes = 1", "min_nodes (2) is larger than max_nodes (1)"),
        (
            "max_nodes_by_quote = 256",
            "max_nodes_by_quote = 8",
            "max_nodes_by_quote is smaller than the self-serve max_nodes",
        ),
        (
            'sources = ["clusters"]\n\n[offers.topology]',
            'sources = ["clusters"]\nfield_sources = { colour = ["clusters"] }\n'
            "\n[offers.topology]",
            "field_sources names unknown fields: colour",
        ),
    ],
)
def test_offer_invariants(copy: Path, old: str, new: str, message: str) -> None:
    _replace(copy / "providers" / "alpha.toml", old, new)
    assert any(message in p.message for p in _problems(copy))


def test_paths_name_list_items_by_id() -> None:
    raw = {"offers": [{"id": "h100"}, {"no_id": 1}]}
    assert _loc_to_path(("offers", 0, "gpu"), raw) == "offers[h100].gpu"
    assert _loc_to_path(("offers", 1, "gpu"), raw) == "offers[1].gpu"
    assert _loc_to_path(("offers", 5, "gpu"), raw) == "offers[5].gpu"
    assert _loc_to_path((0, "gpu"), [{"id": "x"}]) == "[x].gpu"


def test_relative_labels_fall_back_to_the_full_path(tmp_path: Path) -> None:
    assert _rel(tmp_path / "data" / "gpus.toml", tmp_path / "data") == "data/gpus.toml"
    assert _rel(Path("/elsewhere/x.toml"), tmp_path / "data") == "/elsewhere/x.toml"


def test_provider_record_detail_includes_offers(fixture_data_dir: Path) -> None:
    catalog = load_catalog(fixture_data_dir).catalog
    assert catalog is not None
    alpha = next(p for p in catalog.providers if p.slug == "alpha")
    record = provider_record(alpha, with_offers=True)
    assert [o["id"] for o in record["offers"]] == ["alpha-h100-ib", "alpha-a100-ib"]
    assert "offers" not in provider_record(alpha)


def test_empty_filter() -> None:
    assert OfferFilter().is_empty()
    assert not OfferFilter(rdma=True).is_empty()


def test_enum_parse_is_tolerant_and_names_allowed_values() -> None:
    from clusterscout.domain.models import PriceTier

    assert PriceTier.parse(" Capacity-Block ") is PriceTier.CAPACITY_BLOCK
    with pytest.raises(ValueError, match="on_demand, reserved, spot, capacity_block"):
        PriceTier.parse("lease")


def test_provider_rows_flatten_for_csv(fixture_data_dir: Path) -> None:
    import csv
    import io

    from clusterscout.catalog.exports import PROVIDER_COLUMNS, provider_row, to_csv

    catalog = load_catalog(fixture_data_dir).catalog
    assert catalog is not None
    rows = [provider_row(provider_record(p)) for p in catalog.providers]
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows, PROVIDER_COLUMNS))))
    gamma = next(r for r in parsed if r["slug"] == "gamma")
    assert (gamma["multi_node"], gamma["hq_country"], gamma["regions"]) == ("no", "", "")
    assert gamma["source_urls"] == "https://gamma.example.net/gpus"
