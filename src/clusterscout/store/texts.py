"""Read the catalog's translated free text that the build stored (ADR 0011)."""

from __future__ import annotations

from sqlalchemy import Connection, select

from clusterscout.store.tables import catalog_translations


def read_translations(conn: Connection) -> dict[str, dict[str, str]]:
    """Language -> English text -> translation (languages without any are absent)."""
    t = catalog_translations.c
    out: dict[str, dict[str, str]] = {}
    for lang, source, text in conn.execute(select(t.lang, t.source, t.text)):
        out.setdefault(lang, {})[source] = text
    return out
