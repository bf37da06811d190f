"""Write the JSON Schemas of the catalog files and the API's OpenAPI document into docs/schemas.

Usage: ``.venv/bin/python scripts/schemas.py [--check]``. With ``--check`` nothing is written
and the exit code is 1 when a committed schema differs from what the code declares (CI runs
this through tests/web/test_schemas.py), so the published shapes cannot drift from the code.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from clusterscout.catalog.schema import FabricsFileIn, GpusFileIn, ProviderIn, RatingsFileIn
from clusterscout.settings import Settings
from clusterscout.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "schemas"
FIXTURE = ROOT / "tests" / "fixtures" / "catalog"


def _openapi() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = Settings(
            database_url=f"sqlite:///{tmp}/schema.sqlite3",
            data_dir=FIXTURE,
            public_url="http://testserver",
        )
        app = create_app(settings)
        spec = app.openapi()
        app.state.cs.engine.dispose()
    return spec


def documents() -> dict[str, dict[str, Any]]:
    """File name -> JSON document, as the code declares them today."""
    return {
        "provider.schema.json": ProviderIn.model_json_schema(),
        "gpus.schema.json": GpusFileIn.model_json_schema(),
        "fabrics.schema.json": FabricsFileIn.model_json_schema(),
        "ratings.schema.json": RatingsFileIn.model_json_schema(),
        "openapi.json": _openapi(),
    }


def render(doc: dict[str, Any]) -> str:
    """Stable text form: sorted keys, two-space indent, trailing newline."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    stale = []
    for name, doc in documents().items():
        path = OUT / name
        text = render(doc)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}; run .venv/bin/python scripts/schemas.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
