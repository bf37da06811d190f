"""Catalog translations go through the build into the store; validate reports missing ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po
from sqlalchemy import Engine

from clusterscout.app import texts
from clusterscout.app.database import CatalogInvalidError, build, validate
from clusterscout.catalog import translations as translation_files
from clusterscout.catalog.problems import Severity
from clusterscout.domain.languages import LANGUAGES


@pytest.fixture
def catalog_copy(tmp_path: Path, fixture_data_dir: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(fixture_data_dir, target)
    return target


def _set(data_dir: Path, lang: str, msgid: str, msgstr: str) -> None:
    path = translation_files.po_path(data_dir, lang)
    with path.open("rb") as fh:
        po = read_po(fh, locale=lang)
    po[msgid].string = msgstr
    with path.open("wb") as fh:
        write_po(fh, po)


def test_build_stores_translations_and_a_rebuild_replaces_them(
    fresh_engine: Engine, catalog_copy: Path
) -> None:
    build(fresh_engine, catalog_copy)
    with fresh_engine.connect() as conn:
        found = texts.translations(conn)
    assert tuple(found) == LANGUAGES
    assert found["en"].table == {}
    assert found["fr"].text("1 year") == "1 an"
    assert found["de"].text("Reserved RoCE clusters by quote.") == (
        "Reservierte RoCE-Cluster auf Anfrage."
    )
    assert len(found["pt"].table) == 16  # 13 catalog texts and 3 launch.toml notes
    assert found["de"].text("No dstack backend.") == "Kein dstack-Backend."
    _set(catalog_copy, "fr", "1 year", "un an")
    build(fresh_engine, catalog_copy)
    with fresh_engine.connect() as conn:
        again = texts.translations(conn)
    assert again["fr"].text("1 year") == "un an"
    assert again["pt"].table == found["pt"].table
    assert sum(len(t.table) for t in again.values()) == 4 * 16


def test_validate_reports_a_removed_translation(
    catalog_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _set(catalog_copy, "es", "Only single GPU virtual machines are listed.", "")
    warned = validate(catalog_copy).problems
    assert [p.severity for p in warned] == [translation_files.UNTRANSLATED]
    monkeypatch.setattr(translation_files, "UNTRANSLATED", Severity.ERROR)
    assert [str(p) for p in validate(catalog_copy).problems] == [
        "data/providers/gamma.toml: multi_node.evidence: no es translation"
    ]


def test_a_catalog_with_translation_errors_is_not_built(
    fresh_engine: Engine, catalog_copy: Path
) -> None:
    (catalog_copy / "providers" / "alpha.toml").write_text(
        (catalog_copy / "providers" / "alpha.toml")
        .read_text()
        .replace("Sells InfiniBand clusters", "Sells large InfiniBand clusters")
    )
    with pytest.raises(CatalogInvalidError) as caught:
        build(fresh_engine, catalog_copy)
    assert "data/locale/catalog.pot: (file): out of date; run `make i18n-catalog`" in [
        str(p) for p in caught.value.problems
    ]


def test_update_files_needs_a_readable_catalog(tmp_path: Path) -> None:
    with pytest.raises(CatalogInvalidError):
        texts.update_files(tmp_path / "missing")
