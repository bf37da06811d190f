"""Python API: ``from clusterscout import Catalog`` to query offers with the CLI's filters."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from clusterscout.domain.models import MultiNode
from clusterscout.services import build, compare_records, find_offers, open_engine
from clusterscout.settings import Settings
from clusterscout.store import queries
from clusterscout.store.db import make_engine


def _as_values(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, str | int | float):
        return [str(value)]
    if isinstance(value, Iterable):
        return [str(v) for v in value]
    return [str(value)]


class Catalog:
    """Read access to the catalog, with the same filters and records as the CLI and API.

    Example:
        >>> from clusterscout import Catalog
        >>> cat = Catalog.from_data("data")                      # doctest: +SKIP
        >>> cat.offers(fabric="infiniband", rdma=True, sort="gbps")  # doctest: +SKIP
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @classmethod
    def open(cls, database_url: str | None = None) -> Catalog:
        """Open the configured database (building it from data/ when it is empty)."""
        settings = Settings()
        if database_url:
            settings = settings.model_copy(update={"database_url": database_url})
        return cls(open_engine(settings))

    @classmethod
    def from_data(cls, data_dir: str | Path = "data", database_url: str | None = None) -> Catalog:
        """Validate and load ``data_dir`` into a database (default: in memory) and open it.

        Raises:
            clusterscout.services.CatalogInvalidError: with every problem when data is invalid.
        """
        engine = make_engine(database_url or "sqlite://")
        build(engine, Path(data_dir))
        return cls(engine)

    def offers(
        self, *, sort: str = "price", limit: int | None = None, offset: int = 0, **filters: Any
    ) -> list[dict[str, Any]]:
        """Offer records matching the filters (names as in the CLI, with underscores).

        Raises:
            clusterscout.catalog.filters.FilterError: naming the bad filter.
        """
        params = {k: _as_values(v) for k, v in filters.items() if v is not None}
        params["sort"] = [sort]
        with self._engine.connect() as conn:
            return find_offers(conn, params, limit, offset)[2].records

    def providers(self, multi_node: str | None = None) -> list[dict[str, Any]]:
        """Provider records, optionally only those with a given multi-node status."""
        status = MultiNode.parse(multi_node) if multi_node else None
        with self._engine.connect() as conn:
            return queries.list_providers(conn, status).records

    def provider(self, slug: str) -> dict[str, Any] | None:
        """One provider with its offers, or None."""
        with self._engine.connect() as conn:
            return queries.get_provider(conn, slug)

    def compare(self, *slugs: str) -> list[dict[str, Any]]:
        """Two to four providers with their offers, for a side-by-side comparison."""
        with self._engine.connect() as conn:
            return compare_records(conn, slugs)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine behind this catalog."""
        return self._engine
