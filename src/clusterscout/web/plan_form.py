"""The planner form: query string ⇄ form state ⇄ ``planning.run_plan`` body, one canonical URL.

The query string is the whole state of ``/{lang}/plan/``, so a plan can be shared by its URL.
Parameter names are the ``POST /api/v1/plan`` field names; values are passed through as text
and validated by the planning service, which names the field at fault.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from clusterscout.model.presets import PRESETS
from clusterscout.planning import PLAN_FIELDS
from clusterscout.web import params
from clusterscout.web.errors import ApiError

MULTI_FIELDS: Final = frozenset({"provider", "fabric"})
FORM_FIELDS: Final = (
    "model",
    "params",
    "tokens",
    "precision",
    "gpu",
    "max_nodes",
    "budget_usd",
    "deadline_hours",
    "price_tier",
    "provider",
    "fabric",
)
DEFAULTS: Final = {"model": "70B", "tokens": "1e12", "precision": "bf16", "max_nodes": "64"}
MODEL_CHOICES: Final = tuple(PRESETS)
MAX_VALUE_CHARS: Final = 40


@dataclass(frozen=True, slots=True)
class PlanQuery:
    """What the visitor asked for: one value per single field, lists for the repeatable ones."""

    values: dict[str, str] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=dict)

    @property
    def submitted(self) -> bool:
        """True when the form was sent (any field given); an empty query shows the form only."""
        return bool(self.values or self.lists)

    def value(self, name: str) -> str:
        """The value to show in the form: the asked one, else the default on a fresh form."""
        if self.submitted:
            return self.values.get(name, "")
        return self.values.get(name, DEFAULTS.get(name, ""))

    def pairs(self) -> list[tuple[str, str]]:
        """Sorted, non-empty parameters; ``params`` is dropped when a preset is chosen."""
        out = [
            (k, v)
            for k, v in self.values.items()
            if v and not (k == "params" and self.values.get("model"))
        ]
        out.extend((k, v) for k, vs in self.lists.items() for v in sorted(set(vs)))
        return sorted(out)

    def query_string(self) -> str:
        """The canonical query string (with ``?``), or ``""``."""
        return params.query_string(self.pairs())

    def body(self) -> dict[str, Any]:
        """The ``run_plan`` input for this query (numbers stay text; the service parses them)."""
        body: dict[str, Any] = dict(self.pairs())
        for name in MULTI_FIELDS:
            if name in self.lists:
                body[name] = sorted(set(self.lists[name]))
        return body


def parse(items: Iterable[tuple[str, str]]) -> PlanQuery:
    """Group query parameters; the last non-empty value of a single field wins.

    Raises:
        ApiError: 400 naming an unknown parameter or an over-long value.
    """
    values: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    for key, raw in items:
        if key not in PLAN_FIELDS:
            raise ApiError(400, "unknown_parameter", "unknown parameter", key[:40])
        value = raw.strip()
        if len(value) > MAX_VALUE_CHARS:
            raise ApiError(400, "invalid_parameter", "value too long", key)
        if key in MULTI_FIELDS:
            if value:
                lists.setdefault(key, []).append(value.lower())
        elif value:
            values[key] = value
        else:
            values.setdefault(key, "")
    return PlanQuery(values, lists)
