"""The published JSON Schemas and OpenAPI document in docs/schemas match the code."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("schemas_script", ROOT / "scripts" / "schemas.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def documents() -> dict[str, str]:
    script = _script()
    return {name: script.render(doc) for name, doc in script.documents().items()}


def test_committed_schemas_are_current(documents: dict[str, str]) -> None:
    stale = [
        name
        for name, text in documents.items()
        if (ROOT / "docs" / "schemas" / name).read_text(encoding="utf-8") != text
    ]
    assert stale == [], "run .venv/bin/python scripts/schemas.py and commit docs/schemas"


def test_provider_schema_is_strict_and_requires_sources(documents: dict[str, str]) -> None:
    schema = json.loads(documents["provider.schema.json"])
    assert schema["additionalProperties"] is False
    assert {"slug", "name", "url", "sources", "multi_node"} <= set(schema["required"])
    offer = schema["$defs"]["OfferIn"]
    assert "sources" in offer["required"]


def test_every_offer_filter_is_documented_for_api_users(documents: dict[str, str]) -> None:
    from clusterscout.app.fields import OFFER_FILTER_NAMES as FILTER_NAMES

    spec = json.loads(documents["openapi.json"])
    params = {p["name"] for p in spec["paths"]["/api/v1/offers"]["get"]["parameters"]}
    assert set(FILTER_NAMES) <= params
    api_doc = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for name in FILTER_NAMES:
        assert f"`{name}`" in api_doc, name
