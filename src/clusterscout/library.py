"""Python API: ``from clusterscout import Catalog`` to query, plan and estimate like the CLI.

Every method calls the same application services as the CLI and the JSON API, with the same
inputs (field names of the fields table, with underscores). Plans and estimates come back as
typed, frozen results whose ``to_dict()`` is exactly the JSON of ``POST /api/v1/plan`` and
``POST /api/v1/estimate``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from clusterscout.app import database, estimates, offers, plans
from clusterscout.domain.models import MultiNode
from clusterscout.model.estimate import EstimateResult
from clusterscout.model.planner.results import PlanResult
from clusterscout.settings import Settings
from clusterscout.web.schemas import estimate_json, plan_json


@dataclass(frozen=True, slots=True)
class Plan(PlanResult):
    """The planner's answer: verdict, ``options`` (cheapest first), ``excluded`` and more.

    The fields are those of ``clusterscout.model.planner.results.PlanResult``.
    """

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``POST /api/v1/plan`` for the same inputs."""
        return plan_json(self)


@dataclass(frozen=True, slots=True)
class Estimate(EstimateResult):
    """The model's answer for one scenario: ``kind``, ``gpu`` and the typed ``result``."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``POST /api/v1/estimate`` for the same scenario."""
        return estimate_json(self)


def _fields_of(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


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
    """The catalog, its offers and the planner, with the same inputs as the CLI and the API.

    Example:
        >>> from clusterscout import Catalog
        >>> cat = Catalog.open()                                          # doctest: +SKIP
        >>> cat.offers(fabric="infiniband", rdma=True, sort="gbps")       # doctest: +SKIP
        >>> cat.plan(model="70B", tokens=1e12, gpu="H100").options[0]     # doctest: +SKIP
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @classmethod
    def open(cls, database_url: str | None = None) -> Catalog:
        """Open the configured database (building it from the catalog when it is empty).

        Without ``database_url`` (or ``CLUSTERSCOUT_DATABASE_URL``) this is the SQLite file of
        the settings, built from the catalog shipped with clusterscout on first use.
        """
        settings = Settings()
        if database_url:
            settings = settings.model_copy(update={"database_url": database_url})
        return cls(database.open_engine(settings))

    @classmethod
    def from_data(cls, data_dir: str | Path, database_url: str | None = None) -> Catalog:
        """Validate and load ``data_dir`` into a database (default: in memory) and open it.

        Raises:
            clusterscout.app.database.CatalogInvalidError: with every problem when data is
                invalid.
        """
        engine = database.engine_for_url(database_url or "sqlite://")
        database.build(engine, Path(data_dir))
        return cls(engine)

    def offers(
        self, *, sort: str = "price", limit: int | None = None, offset: int = 0, **filters: Any
    ) -> list[dict[str, Any]]:
        """Offer records matching the filters (names as in the CLI, with underscores).

        Raises:
            clusterscout.domain.errors.InputError: naming the bad filter.
        """
        params = {k: _as_values(v) for k, v in filters.items() if v is not None}
        params["sort"] = [sort]
        with self._engine.connect() as conn:
            _, _, page = offers.find_offers(conn, params, limit, offset)
        return page.records

    def providers(self, multi_node: str | None = None) -> list[dict[str, Any]]:
        """Provider records, optionally only those with a given multi-node status."""
        status = MultiNode.parse(multi_node) if multi_node else None
        with self._engine.connect() as conn:
            return offers.list_providers(conn, status).records

    def provider(self, slug: str) -> dict[str, Any] | None:
        """One provider with its offers, or None."""
        with self._engine.connect() as conn:
            return offers.provider(conn, slug)

    def compare(self, *slugs: str) -> list[dict[str, Any]]:
        """Two to four providers with their offers, for a side-by-side comparison."""
        with self._engine.connect() as conn:
            return offers.compare_records(conn, slugs)

    def plan(self, **inputs: Any) -> Plan:
        """Do I need multi-node, and which offers finish the job cheapest or fastest?

        Takes the fields of ``POST /api/v1/plan`` (``clusterscout plan``'s options with
        underscores): ``model`` or ``params``, ``tokens`` or ``steps``, and optionally
        ``precision``, ``gpu``, ``max_nodes``, ``budget_usd``, ``deadline_hours``, ``seq_len``,
        ``batch_tokens`` and the offer filters ``provider``, ``fabric``, ``rdma``,
        ``min_gbps``, ``orchestration``, ``provisioning``, ``region``, ``price_tier``, and
        ``prices`` (offer id -> a quoted USD per GPU-hour; ranks the offer as the buyer's).
        Offers without a price come back in ``on_request``; unknown network facts as ranges
        (ADR 0025).

        Raises:
            clusterscout.domain.errors.InputError: naming the field at fault.
        """
        body = {k: list(v) if isinstance(v, tuple) else v for k, v in inputs.items()}
        with self._engine.connect() as conn:
            result = plans.run_plan(conn, {k: v for k, v in body.items() if v is not None})
        return Plan(**_fields_of(result))

    def estimate(self, scenario: Mapping[str, Any] | None = None, **parts: Any) -> Estimate:
        """The performance model on one scenario (docs/design.md §4), as ``clusterscout estimate``.

        Give the scenario as a mapping, or its parts as keywords:
        ``estimate(cluster={...}, workload={...})``.

        Raises:
            clusterscout.domain.errors.InputError: naming the field at fault.
        """
        body = dict(scenario or {}) | parts
        with self._engine.connect() as conn:
            answer = estimates.run_estimate(conn, body)
        return Estimate(**_fields_of(answer))

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine behind this catalog."""
        return self._engine
