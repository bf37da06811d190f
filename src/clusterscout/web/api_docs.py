"""OpenAPI descriptions of the query parameters the API really reads.

Parameters are parsed by the one filter parser (``app.inputs``), not by FastAPI, so they are
documented here, from the fields table, and attached to the operations with ``openapi_extra``.
"""

from __future__ import annotations

from typing import Any, Final

from clusterscout.app.fields import OFFER_FILTERS, PLAN_FIELDS, Field, Kind, Use
from clusterscout.catalog.filters import SortKey
from clusterscout.domain.languages import LANGUAGES
from clusterscout.domain.models import MultiNode
from clusterscout.web import params
from clusterscout.web.schemas import ErrorOut

_BOOL: Final = {"type": "string", "enum": ["true", "false"]}


def _query_schema(field: Field) -> dict[str, Any]:
    """The OpenAPI schema of one offer filter as a query parameter (text, read by the table)."""
    item: dict[str, Any]
    if field.kind is Kind.BOOL:
        item = dict(_BOOL)
    elif field.kind in {Kind.NUMBER, Kind.INTEGER}:
        item = {"type": "number" if field.kind is Kind.NUMBER else "integer", "minimum": 0}
        if field.maximum is not None:
            item["maximum"] = field.maximum
    elif field.values:
        item = {"type": "string", "enum": list(field.values)}
    else:
        item = {"type": "string"}
        if field.kind is Kind.TEXT and field.maximum is not None:
            item["maxLength"] = int(field.maximum)
    return {"type": "array", "items": item} if field.repeatable else item


FILTER_PARAMETERS: Final[dict[str, tuple[dict[str, Any], str]]] = {
    f.name: (_query_schema(f), f.help) for f in OFFER_FILTERS
}
"""Each offer filter's schema and description, straight from the fields table."""


def _body_schema(field: Field) -> dict[str, Any]:
    """The JSON schema of one plan field in the body of ``POST /api/v1/plan``."""
    item: dict[str, Any]
    if field.kind is Kind.BOOL:
        item = {"type": "boolean"}
    elif field.kind in {Kind.NUMBER, Kind.INTEGER}:
        item = {"type": "number" if field.kind is Kind.NUMBER else "integer"}
        if field.minimum is not None:
            item["minimum"] = field.minimum
        if field.maximum is not None:
            item["maximum"] = field.maximum
    elif field.values:
        item = {"type": "string", "enum": list(field.values)}
    else:
        item = {"type": "string"}
    item["description"] = field.help
    if field.repeatable and field.used_as(Use.PLAN_FILTER):
        return {"anyOf": [item, {"type": "array", "items": item}], "description": field.help}
    return item


def plan_body_schema() -> dict[str, Any]:
    """The request body of ``POST /api/v1/plan``: one property per plan field of the table."""
    return {
        "type": "object",
        "properties": {f.name: _body_schema(f) for f in PLAN_FIELDS},
        "additionalProperties": False,
    }


def _param(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }
    if schema.get("type") == "array":
        out["style"] = "form"
        out["explode"] = True
    return out


def lang_parameter() -> dict[str, Any]:
    """``lang``: the language of the catalog's free text (notes, evidence, terms...)."""
    return _param(
        "lang",
        {"type": "string", "enum": list(LANGUAGES), "default": LANGUAGES[0]},
        "Language of the catalog's free text (notes, evidence, locality, terms); without it "
        "the Accept-Language header decides, else English. English is the reference text; "
        "keys, ids, enum values and product names are never translated.",
    )


def offer_parameters(*, paged: bool = True) -> list[dict[str, Any]]:
    """Filters, ``sort`` and, for the paged JSON, ``lang``, ``limit`` and ``offset``."""
    out = [_param(n, s, d) for n, (s, d) in FILTER_PARAMETERS.items()]
    out.append(
        _param(
            "sort",
            {"type": "string", "enum": [k.value for k in SortKey], "default": "price"},
            "Ordering; unknown values sort last.",
        )
    )
    if paged:
        out.append(lang_parameter())
        out.append(
            _param(
                "limit",
                {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": params.API_MAX_LIMIT,
                    "default": params.API_DEFAULT_LIMIT,
                },
                "Page size.",
            )
        )
        out.append(
            _param(
                "offset",
                {"type": "integer", "minimum": 0, "maximum": params.MAX_OFFSET, "default": 0},
                "Records to skip.",
            )
        )
    return out


def provider_parameters() -> list[dict[str, Any]]:
    """``multi_node`` and ``lang`` for the provider list."""
    return [
        _param(
            "multi_node",
            {"type": "string", "enum": list(MultiNode.values())},
            "Only providers with this multi-node status.",
        ),
        lang_parameter(),
    ]


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": description}


BAD_INPUT: Final[dict[int | str, dict[str, Any]]] = {
    400: _error("Bad input; ``field`` names the parameter at fault.")
}
NOT_FOUND: Final[dict[int | str, dict[str, Any]]] = {404: _error("No such record.")}
CSV_RESPONSE: Final[dict[int | str, dict[str, Any]]] = {
    200: {"content": {"text/csv": {"schema": {"type": "string"}}}, "description": "CSV"}
}
