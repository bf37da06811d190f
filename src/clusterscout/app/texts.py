"""The catalog's free text in the reader's language, from the translations the build stored."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection

from clusterscout.app.database import CatalogInvalidError, translatable_texts
from clusterscout.catalog import translations as translation_files
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.texts import Translation
from clusterscout.catalog.translations import Progress
from clusterscout.domain.languages import LANGUAGES
from clusterscout.store.texts import read_translations

__all__ = ["Progress", "Translation", "translations", "update_files"]


def translations(conn: Connection) -> dict[str, Translation]:
    """One Translation per site language; English, and any text without a translation, are
    shown as written in the catalog."""
    tables = read_translations(conn)
    return {lang: Translation(lang, tables.get(lang, {})) for lang in LANGUAGES}


def update_files(data_dir: Path) -> list[Progress]:
    """Regenerate ``data_dir/locale/catalog.pot`` from the catalog's free text and merge it
    into each language's ``catalog.po``; returns how much of each language is translated.

    Raises:
        CatalogInvalidError: when the catalog cannot be read at all.
    """
    result = load_catalog(data_dir)
    if result.catalog is None:
        raise CatalogInvalidError(result.problems)
    return translation_files.update_files(data_dir, translatable_texts(data_dir, result.catalog))
