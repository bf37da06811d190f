"""OpenAPI descriptions of the query parameters the API really reads.

Parameters are parsed by the one filter parser (``app.inputs``), not by FastAPI, so they are
documented here, from the fields table, and attached to the operations with ``openapi_extra``.
"""

from __future__ import annotations

from typing import Any, Final

from clusterscout.app.fields import OFFER_FILTERS, PLAN_FIELDS, Field, Kind, Use
from clusterscout.app.inputs import BOOLEAN_WORDS
from clusterscout.app.quotes import MAX_GPUS, MAX_MONTHS
from clusterscout.catalog.directory import DirectorySort
from clusterscout.catalog.filters import SortKey
from clusterscout.domain.languages import LANGUAGES
from clusterscout.domain.models import MultiNode
from clusterscout.web import params
from clusterscout.web.schemas import ErrorOut


def _any_case(word: str) -> str:
    # The parsers fold case, and dashes and spaces to underscores (MultiNode.parse).
    out = {"_": "[-_ ]"}
    return "".join(out.get(c) or (f"[{c.upper()}{c.lower()}]" if c.isalpha() else c) for c in word)


def tolerant(words: tuple[str, ...] | list[str], *, lists: bool = False) -> dict[str, Any]:
    """A string schema for ``words`` as the parsers read them: any case, spaces around, or empty.

    With ``lists``, a comma-separated list of them (repeatable filters accept both forms).
    """
    one = r"\s*(" + "|".join(_any_case(w) for w in words) + r")?\s*"
    pattern = f"^{one}(,{one})*$" if lists else f"^{one}$"
    return {"type": "string", "pattern": pattern, "examples": list(words)}


# What the one parser accepts (app.inputs.parse_bool): these words in any case, with spaces
# around; an empty value means no filter. The schema says exactly that, no more, no less.
_BOOL: Final = tolerant(BOOLEAN_WORDS)
_EMPTY: Final = {"type": "string", "maxLength": 0, "description": "empty: no filter"}


def _query_schema(field: Field) -> dict[str, Any]:
    """The OpenAPI schema of one offer filter as a query parameter (text, read by the table)."""
    item: dict[str, Any]
    if field.kind is Kind.BOOL:
        item = dict(_BOOL)
    elif field.kind in {Kind.NUMBER, Kind.INTEGER}:
        query_number: dict[str, Any] = {
            "type": "number" if field.kind is Kind.NUMBER else "integer",
            "minimum": 0,
        }
        if field.maximum is not None:
            query_number["maximum"] = field.maximum
        item = {"anyOf": [query_number, _EMPTY]}
    elif field.values:
        item = tolerant(list(field.values), lists=field.repeatable)
    else:
        item = {"type": "string"}
        if field.kind in {Kind.TEXT, Kind.REGION} and field.maximum is not None:
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
        # JSON true/false, or the words a form or the CLI sends.
        item = {"anyOf": [{"type": "boolean"}, tolerant(BOOLEAN_WORDS)]}
    elif field.kind in {Kind.NUMBER, Kind.INTEGER}:
        number: dict[str, Any] = {"type": "number" if field.kind is Kind.NUMBER else "integer"}
        if field.minimum is not None:
            number["minimum"] = field.minimum
        if field.maximum is not None:
            number["maximum"] = field.maximum
        # A form sends numbers as text; they are read, then held to the same bounds.
        item = {"anyOf": [number, {"type": "string"}]}
    elif field.values:
        item = {"type": "string", "enum": list(field.values)}
    else:
        item = {"type": "string"}
    # null is read as "not given", like a missing key.
    if field.repeatable and field.used_as(Use.PLAN_FILTER):
        forms = [item, {"type": "array", "items": item}, {"type": "null"}]
    else:
        forms = [item, {"type": "null"}]
    return {"anyOf": forms, "description": field.help}


def plan_body_schema() -> dict[str, Any]:
    """The request body of ``POST /api/v1/plan``: one property per plan field of the table."""
    return {
        "type": "object",
        "properties": {f.name: _body_schema(f) for f in PLAN_FIELDS},
        "additionalProperties": False,
        # The job: a model (preset or parameter count) and its length (tokens or steps).
        "allOf": [
            {"oneOf": [{"required": ["model"]}, {"required": ["params"]}]},
            {"oneOf": [{"required": ["tokens"]}, {"required": ["steps"]}]},
        ],
    }


ESTIMATE_BODY: Final = {
    "type": "object",
    "required": ["cluster", "workload"],
    "properties": {
        "cluster": {"type": "object", "description": "GPU, GPUs per node, nodes, fabric."},
        "workload": {"type": "object", "description": "A collective or a training step."},
    },
    "additionalProperties": False,
}
"""The scenario of ``POST /api/v1/estimate`` (its parts are checked by model.scenario)."""


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
            {"type": "string", "enum": ["", *(k.value for k in SortKey)], "default": "price"},
            "Ordering; unknown values sort last.",
        )
    )
    if paged:
        out.append(lang_parameter())
        out.append(
            _param(
                "limit",
                {
                    "anyOf": [
                        {"type": "integer", "minimum": 1, "maximum": params.API_MAX_LIMIT},
                        _EMPTY,
                    ],
                    "default": params.API_DEFAULT_LIMIT,
                },
                "Page size.",
            )
        )
        out.append(
            _param(
                "offset",
                {
                    "anyOf": [
                        {"type": "integer", "minimum": 0, "maximum": params.MAX_OFFSET},
                        _EMPTY,
                    ],
                    "default": 0,
                },
                "Records to skip.",
            )
        )
    return out


def provider_parameters() -> list[dict[str, Any]]:
    """The directory's filters: ``multi_node`` (three-valued), the offer filters, sort, lang."""
    return [
        _param(
            "multi_node",
            tolerant([*MultiNode.values(), "true", "false"], lists=True),
            "Only providers with this multi-node status (repeatable: any of them); true and "
            "false read as yes and no.",
        ),
        *(
            _param(n, s, d + " A provider passes when one of its offers does.")
            for n, (s, d) in FILTER_PARAMETERS.items()
            if n != "multi_node"
        ),
        _param(
            "sort",
            {"type": "string", "enum": ["", *(k.value for k in DirectorySort)], "default": "name"},
            "Ordering: name, offers (most first), price (cheapest first, unknown last), "
            "facts (most checklist facts known first).",
        ),
        lang_parameter(),
    ]


def quote_parameters() -> list[dict[str, Any]]:
    """``gpus``, ``months``, ``start``, ``gpu`` and ``currency`` of the commitment quote."""
    return [
        _param(
            "gpus",
            {"anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_GPUS}, _EMPTY]},
            "GPUs to rent at once (default 64).",
        ),
        _param(
            "months",
            {
                "anyOf": [
                    {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_MONTHS},
                    _EMPTY,
                ]
            },
            "How long, in calendar months from start (default 6; a fraction counts 730 "
            "hours per month).",
        ),
        _param(
            "start",
            {
                "anyOf": [
                    {
                        "type": "string",
                        "format": "date",
                        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
                    },
                    _EMPTY,
                ]
            },
            "First day, YYYY-MM-DD between 2000-01-01 and 2100-12-31 (default today).",
        ),
        _param(
            "gpu",
            {"type": "string", "maxLength": 80},
            "Only offers of this GPU model (canonical name or alias such as H100).",
        ),
        _param(
            "currency",
            {
                "anyOf": [
                    {"type": "string", "enum": ["USD", "EUR", "BRL", "usd", "eur", "brl"]},
                    _EMPTY,
                ]
            },
            "Currency the reader asked for (default USD), echoed in meta; every total carries "
            "USD, EUR and BRL.",
        ),
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
