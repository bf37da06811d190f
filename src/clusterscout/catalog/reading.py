"""Reading one TOML file of data/ into a strict model, every problem with file and key path."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from clusterscout.catalog.problems import Problem

M = TypeVar("M", bound=BaseModel)


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)


def _read_toml(path: Path, label: str, problems: list[Problem]) -> dict[str, Any] | None:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        problems.append(Problem(label, "", f"malformed TOML: {exc}"))
    except OSError as exc:
        problems.append(Problem(label, "", f"cannot read file: {exc.strerror}"))
    return None


def _loc_to_path(loc: Sequence[int | str], raw: Any) -> str:
    """Turn a pydantic location into ``offers[h100-ib].prices[0].tier``.

    List items are named by their ``id`` when they have one, so paths survive reordering.
    """
    parts: list[str] = []
    node = raw
    for item in loc:
        if isinstance(item, int):
            label = str(item)
            if isinstance(node, list) and 0 <= item < len(node):
                node = node[item]
                if isinstance(node, Mapping) and isinstance(node.get("id"), str):
                    label = node["id"]
            else:
                node = None
            if parts:
                parts[-1] += f"[{label}]"
            else:
                parts.append(f"[{label}]")
        else:
            node = node.get(item) if isinstance(node, Mapping) else None
            parts.append(item)
    return ".".join(parts)


def _validate(model: type[M], raw: dict[str, Any], label: str, problems: list[Problem]) -> M | None:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            loc = [x for x in err["loc"] if not (isinstance(x, str) and x.startswith("function-"))]
            message = err["msg"]
            if err["type"] == "extra_forbidden":
                message = "unknown key"
            elif err["type"] == "missing":
                message = "required key is missing"
            problems.append(Problem(label, _loc_to_path(loc, raw), message))
        return None
