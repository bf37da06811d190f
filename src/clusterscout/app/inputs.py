"""Reading fields by the table: offer filters from text, plan requests from JSON-like bodies.

One parser per input form, both driven by ``app.fields``: the query string, the CLI flags and
the Python API give offer filters as lists of text; the plan API, the plan page and
``clusterscout plan`` give a plan as one mapping (numbers as numbers or text).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final

from clusterscout.app.fields import (
    OFFER_FILTER_NAMES,
    OFFER_FILTERS,
    PLAN_FIELD_NAMES,
    PLAN_FIELDS,
    UNKNOWABLE_NAMES,
    Field,
    Kind,
    Use,
)
from clusterscout.catalog.filters import OfferFilter
from clusterscout.domain.errors import InputError
from clusterscout.domain.regions import RegionIndex, RegionScope
from clusterscout.model.planner.request import PlanRequest

GpuResolver = Callable[[str], str | None]
"""Maps a GPU name or alias to its canonical name, or None when unknown."""
RegionResolver = Callable[[str], RegionScope | None]
"""Maps what someone typed for ``region`` to the places it covers, or None when unknown."""

_TRUE: Final = frozenset({"true", "yes", "1", "on"})
_FALSE: Final = frozenset({"false", "no", "0", "off"})
BOOLEAN_WORDS: Final = ("true", "false", "yes", "no", "on", "off", "1", "0")
"""Every spelling ``parse_bool`` accepts (any case), for the API's documentation."""
_REQUEST_ATTRIBUTES: Final = {"model": "preset"}
"""Plan fields whose PlanRequest attribute has another name."""
MAX_NUMBER_CHARS: Final = 40
"""Longest text read as a number: room for any sane spelling, none for a 400-digit one."""
NUMBER_LIMIT: Final = 1e15
"""The bound of a numeric field whose table row sets none (a budget, a deadline): far past
anything meaningful, well inside what a database integer and a float hold exactly."""
DECIMAL: Final = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", re.ASCII)
"""A number as people write it: decimal digits, an optional fraction and exponent. Python's
``float`` also reads ``nan``, ``inf``, ``1_000`` and non-ASCII digits; nobody means those."""
WHOLE: Final = re.compile(r"[+-]?\d+", re.ASCII)
MAX_BODY_DEPTH: Final = 8
"""Deepest nesting of objects and arrays a JSON body may have (plans and scenarios need 3)."""
MAX_BODY_ITEMS: Final = 10_000
"""Most values (keys, items, leaves) a JSON body may hold."""


def check_json_shape(
    body: Any, max_depth: int = MAX_BODY_DEPTH, max_items: int = MAX_BODY_ITEMS
) -> None:
    """Refuse a body nested deeper than ``max_depth`` or holding more than ``max_items``
    values, before it is copied anywhere (a worker, a cache key).

    Why: a body 600 levels deep was pickled to the plan worker before any field was read and
    ran out of recursion there (a 500). Walking iteratively never recurses.

    Raises:
        InputError: on ``body``.
    """
    stack: list[tuple[Any, int]] = [(body, 1)]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > max_items:
            raise InputError("body", f"holds more than {max_items:,} values")
        if isinstance(value, Mapping):
            children: Sequence[Any] = list(value.values())
        elif isinstance(value, list | tuple):
            children = value
        else:
            continue
        if depth > max_depth:
            raise InputError("body", f"is nested more than {max_depth} levels deep")
        stack.extend((child, depth + 1) for child in children)


def _finite(value: float) -> bool:
    # An int is exact at any size; math.isfinite of a huge one raises OverflowError.
    return isinstance(value, int) or math.isfinite(value)


def _upper(field: Field) -> float:
    return field.maximum if field.maximum is not None else NUMBER_LIMIT


def parse_bool(name: str, raw: str) -> bool:
    """Parse a boolean value, naming the field on error.

    >>> parse_bool("rdma", "Yes"), parse_bool("rdma", "0")
    (True, False)
    """
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise InputError(name, f"{raw!r} is not a boolean (use true or false)")


def _or(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


def _members(field: Field, raws: Sequence[str]) -> tuple[StrEnum, ...]:
    if field.enum is None:  # pragma: no cover - CHOICE rows name their enum (test_fields)
        msg = f"{field.name} has no enum"
        raise ValueError(msg)
    out: list[StrEnum] = []
    for raw in raws:
        key = raw.strip().lower().replace("-", "_")
        match = next((m for m in field.enum if m.value == key), None)
        if match is None:
            raise InputError(field.name, f"{raw!r} is not one of: {', '.join(field.values)}")
        if match not in out:
            out.append(match)
    return tuple(out)


def _query_number(field: Field, raw: str) -> float:
    integer = field.kind is Kind.INTEGER
    kind = "a whole number" if integer else "a number"
    if len(raw) > MAX_NUMBER_CHARS:
        raise InputError(field.name, f"{raw[:20]!r}... is too long to be {kind}")
    if not (WHOLE if integer else DECIMAL).fullmatch(raw.strip()):
        raise InputError(field.name, f"{raw!r} is not {kind}")
    value = int(raw) if integer else float(raw)
    if not _finite(value) or value < 0:
        raise InputError(field.name, f"{raw!r} must be a finite number >= 0")
    if value > _upper(field):
        raise InputError(field.name, f"{raw!r} must be at most {_upper(field):,.0f}")
    return value


def _single(name: str, raws: Sequence[str]) -> str | None:
    values = [r for r in raws if r.strip() != ""]
    if not values:
        return None
    if len(values) > 1:
        raise InputError(name, "may be given only once")
    return values[0].strip()


def _repeated(
    field: Field,
    items: Sequence[str],
    resolve_gpu: GpuResolver,
    known_providers: Callable[[str], bool] | None,
) -> tuple[Any, ...]:
    if field.kind is Kind.CHOICE:
        return _members(field, items)
    out: list[str] = []
    for raw in items:
        if field.kind is Kind.GPU:
            value = resolve_gpu(raw.strip())
            if value is None:
                raise InputError(field.name, f"unknown GPU {raw!r}")
        else:  # Kind.PROVIDER
            value = raw.strip().lower()
            if known_providers is not None and not known_providers(value):
                raise InputError(field.name, f"unknown provider {raw!r}")
        if value not in out:
            out.append(value)
    return tuple(out)


def _region(field: Field, raw: str, index: RegionIndex) -> RegionScope:
    if field.maximum is not None and len(raw) > field.maximum:
        raise InputError(field.name, f"must be at most {field.maximum:.0f} characters")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in raw):
        # Normalizing would drop them silently: "us\x00" would read as "us".
        raise InputError(field.name, "must not contain control characters")
    scope = index.resolve(raw)
    if scope is None:
        examples = ", ".join(index.examples())
        raise InputError(
            field.name,
            f"unknown region {raw!r}: give a continent, a country code or name, or a region "
            f"or city, e.g. {examples}",
        )
    return scope


def _one(field: Field, raw: str) -> Any:
    if field.kind is Kind.BOOL:
        return parse_bool(field.name, raw)
    if field.kind is Kind.NUMBER:
        return _query_number(field, raw)
    if field.kind is Kind.INTEGER:
        return int(_query_number(field, raw))
    if field.kind is Kind.CHOICE:
        return _members(field, [raw])[0]
    # Kind.TEXT: matched case-insensitively
    if field.maximum is not None and len(raw) > field.maximum:
        raise InputError(field.name, f"must be at most {field.maximum:.0f} characters")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in raw):
        # SQLite ends a LIKE pattern at NUL, so "\x00x" matched every offer.
        raise InputError(field.name, "must not contain control characters")
    return raw.lower()


_OR_UNKNOWN: Final = "_or_unknown"


def _unknowns_of_booleans(norm: dict[str, list[str]]) -> None:
    """Read ``rdma=true_or_unknown`` as ``rdma=true`` plus ``include_unknown=rdma`` (in place)."""
    for field in OFFER_FILTERS:
        if field.kind is not Kind.BOOL or field.name not in UNKNOWABLE_NAMES:
            continue
        raws = norm.get(field.name, [])
        for i, raw in enumerate(raws):
            key = raw.strip().lower().replace("-", "_")
            if key.endswith(_OR_UNKNOWN):
                raws[i] = key.removesuffix(_OR_UNKNOWN)
                norm.setdefault("include_unknown", []).append(field.name)


def parse_offer_filter(
    params: Mapping[str, Sequence[str]],
    resolve_gpu: GpuResolver,
    known_providers: Callable[[str], bool] | None = None,
    regions: RegionIndex | None = None,
) -> OfferFilter:
    """Build an OfferFilter from repeated text values keyed by filter name.

    Args:
        params: e.g. ``{"fabric": ["infiniband"], "min_gbps": ["1600"]}``; dashes in names are
            accepted (``min-gbps``) so CLI flags and query strings share one parser. Values of
            repeatable filters may also be comma-separated.
        resolve_gpu: maps an alias to the canonical GPU name, or None when unknown.
        known_providers: optional check that a provider slug exists.
        regions: the areas, countries and regions ``region`` names (empty when None).

    Raises:
        InputError: naming the filter and the allowed values.
    """
    norm: dict[str, list[str]] = {}
    for key, raws in params.items():
        norm.setdefault(key.replace("-", "_"), []).extend(raws)
    _unknowns_of_booleans(norm)
    unknown = sorted(set(norm) - set(OFFER_FILTER_NAMES))
    if unknown:
        known = ", ".join(OFFER_FILTER_NAMES)
        raise InputError(unknown[0], f"unknown filter (known: {known})")
    values: dict[str, Any] = {}
    for field in OFFER_FILTERS:
        raws = norm.get(field.name, [])
        if field.repeatable:
            items = [v for raw in raws for v in raw.split(",") if v.strip()]
            values[field.name] = _repeated(field, items, resolve_gpu, known_providers)
        else:
            raw = _single(field.name, raws)
            if raw is None or raw == "":
                values[field.name] = None
            elif field.kind is Kind.REGION:
                values[field.name] = _region(field, raw, regions or RegionIndex())
            else:
                values[field.name] = _one(field, raw)
    return OfferFilter(**values)


def _json_number(field: Field, value: Any) -> float | int | None:
    """A number from JSON or from text (a form or a CLI flag); bounds are the planner's."""
    if value is None:
        return None
    if isinstance(value, str):
        if len(value) > MAX_NUMBER_CHARS:
            raise InputError(field.name, f"{value[:20]!r}... is too long to be a number")
        if not DECIMAL.fullmatch(value.strip()):
            raise InputError(field.name, f"{value!r:.40} is not a number")
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value):
        raise InputError(field.name, "must be a finite number")
    # The bounds the API documents (api_docs reads the same table); the planner checks its own.
    if field.minimum is not None and value < field.minimum:
        raise InputError(field.name, f"must be at least {field.minimum:g}")
    if value > _upper(field):
        raise InputError(field.name, f"must be at most {_upper(field):g}")
    if field.kind is Kind.INTEGER:
        if value != int(value):
            raise InputError(field.name, "must be a whole number")
        return int(value)
    return float(value)


def _plan_input(field: Field, value: Any) -> Any:
    if field.kind is Kind.BOOL:
        if isinstance(value, bool):
            return value
        if not isinstance(value, str):  # JSON 0 or 1 is a number, not a boolean
            raise InputError(field.name, f"{value!r:.40} is not a boolean (use true or false)")
        return parse_bool(field.name, value)
    if field.kind is Kind.PRESET:
        if not isinstance(value, str):
            raise InputError(field.name, "must be a preset name such as 70B")
        return value
    if field.kind is Kind.GPU:
        if not isinstance(value, str):
            raise InputError(field.name, "must be a GPU name")
        return value or None
    if field.kind is Kind.CHOICE:
        try:
            return _members(field, [str(value)])[0]
        except InputError:
            raise InputError(field.name, f"must be {_or(field.values)}") from None
    return _json_number(field, value)


def _as_text(field: Field, value: Any) -> list[str]:
    values: Sequence[Any] = value if isinstance(value, list | tuple) else [value]
    # JSON types the field can mean; str() of anything else (an object, false for a region)
    # would be read as a filter value and silently match nothing.
    kinds: tuple[type, ...] = (str,)
    if field.kind is Kind.BOOL:
        kinds = (str, bool)
    elif field.kind in {Kind.NUMBER, Kind.INTEGER}:
        kinds = (str, int, float)
    if not all(isinstance(v, kinds) and (bool in kinds or not isinstance(v, bool)) for v in values):
        raise InputError(field.name, "has the wrong JSON type")
    return [("true" if v else "false") if isinstance(v, bool) else str(v) for v in values]


def parse_plan(body: Any) -> tuple[PlanRequest, dict[str, list[str]]]:
    """A PlanRequest and the offer-filter parameters of a plan body (API JSON, form or CLI).

    The filter parameters always ask for multi-node providers; parse them with
    ``parse_offer_filter`` (the planner's offers are the listings' offers).

    Raises:
        InputError: naming the field at fault.
    """
    if not isinstance(body, Mapping):
        raise InputError("plan", "must be a JSON object")
    unknown = sorted(set(body) - set(PLAN_FIELD_NAMES))
    if unknown:
        known = ", ".join(PLAN_FIELD_NAMES)
        raise InputError(str(unknown[0]), f"unknown field (known: {known})")
    request: dict[str, Any] = {}
    filters: dict[str, list[str]] = {"multi_node": ["true"]}
    for field in PLAN_FIELDS:
        value = body.get(field.name)
        if field.used_as(Use.PLAN_INPUT):
            if value is not None:
                parsed = _plan_input(field, value)
                if parsed is not None:
                    request[_REQUEST_ATTRIBUTES.get(field.name, field.name)] = parsed
        elif value not in (None, "", []):
            filters[field.name] = _as_text(field, value)
    days = request.pop("deadline_days", None)
    if days is not None:
        if "deadline_hours" in request:
            raise InputError("deadline_days", "give deadline_hours or deadline_days, not both")
        # The planner works in hours; days are the unit people plan in (ADR 0029).
        request["deadline_hours"] = days * 24.0
    return PlanRequest(**request), filters
