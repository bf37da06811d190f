"""Read and check ``data/fabric_brackets.toml``: per-node Gbit/s shipped per fabric and GPU class.

Strict like every data file. Cross-file checks: every GPU named exists in gpus.toml, a GPU sits
in one generation, a fabric and generation pair appears once, low <= high, and every offer of
the catalog whose fabric and Gbit/s are known lies inside its bracket (a bracket that a
published node falls outside of would not be the lowest and highest shipped).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import Field, PositiveFloat, PositiveInt, model_validator

from clusterscout.catalog.load import _Resolver, _sources_by_id
from clusterscout.catalog.problems import Problem
from clusterscout.catalog.reading import _read_toml, _rel, _validate
from clusterscout.catalog.schema import Lax, ShortText, Slug, SourceIn, Text, _Strict
from clusterscout.domain.brackets import FabricBracket, NodeSize
from clusterscout.domain.models import FabricKind, GpuSpec, Offer, Source

BRACKETS_FILE = "fabric_brackets.toml"
BRACKETS_META_KEY = "fabric_brackets_json"
"""Where the build stores the brackets for the planner."""


class GenerationIn(_Strict):
    """`[[generations]]`: a GPU class and the canonical GPU names it holds."""

    id: Slug
    name: ShortText
    gpus: list[ShortText] = Field(min_length=1)
    gpus_per_node: PositiveInt | None = None
    gpus_per_node_source: Slug | None = None

    @model_validator(mode="after")
    def _sized_with_source(self) -> GenerationIn:
        if (self.gpus_per_node is None) != (self.gpus_per_node_source is None):
            msg = "gpus_per_node and gpus_per_node_source go together"
            raise ValueError(msg)
        return self


class BracketIn(_Strict):
    """`[[brackets]]`: one fabric kind on one generation, each end with its source id."""

    fabric: Lax[FabricKind]
    generation: Slug
    low_gbps: PositiveFloat
    low_source: Slug
    high_gbps: PositiveFloat
    high_source: Slug
    note: Text | None = None


class BracketsFileIn(_Strict):
    """fabric_brackets.toml."""

    sources: list[SourceIn] = Field(min_length=1)
    generations: list[GenerationIn] = Field(min_length=1)
    brackets: list[BracketIn] = Field(min_length=1)


Brackets = tuple[tuple[FabricBracket, ...], tuple[NodeSize, ...]]


def load_brackets(data_dir: Path, gpus: Iterable[GpuSpec], problems: list[Problem]) -> Brackets:
    """Read fabric_brackets.toml (optional: none when absent): its brackets and node sizes.

    Problems say what is wrong.
    """
    path = data_dir / BRACKETS_FILE
    if not path.exists():
        return (), ()
    label = _rel(path, data_dir)
    raw = _read_toml(path, label, problems)
    parsed = _validate(BracketsFileIn, raw, label, problems) if raw is not None else None
    if parsed is None:
        return (), ()
    res = _Resolver(_sources_by_id(parsed.sources, label, problems), label, problems)
    known = {g.name for g in gpus}
    generations: dict[str, tuple[str, ...]] = {}
    sizes: list[NodeSize] = []
    seen_gpu: dict[str, str] = {}
    for i, g in enumerate(parsed.generations):
        where = f"generations[{i}]"
        if g.id in generations:
            problems.append(Problem(label, f"{where}.id", f"generation {g.id!r} is listed twice"))
        for name in g.gpus:
            if name not in known:
                problems.append(Problem(label, f"{where}.gpus", f"unknown GPU {name!r}"))
            elif name in seen_gpu:
                msg = f"GPU {name!r} is already in generation {seen_gpu[name]!r}"
                problems.append(Problem(label, f"{where}.gpus", msg))
            seen_gpu.setdefault(name, g.id)
        generations[g.id] = tuple(g.gpus)
        if g.gpus_per_node is not None and g.gpus_per_node_source is not None:
            src = res.one(g.gpus_per_node_source, f"{where}.gpus_per_node_source")
            if src is not None:
                sizes.append(NodeSize(g.id, tuple(g.gpus), g.gpus_per_node, src))
    out: list[FabricBracket] = []
    pairs: set[tuple[FabricKind, str]] = set()
    for i, b in enumerate(parsed.brackets):
        where = f"brackets[{i}]"
        if b.generation not in generations:
            msg = f"generation {b.generation!r} is not defined in [[generations]]"
            problems.append(Problem(label, f"{where}.generation", msg))
            continue
        if (b.fabric, b.generation) in pairs:
            msg = f"{b.fabric.value} on {b.generation!r} is listed twice"
            problems.append(Problem(label, where, msg))
            continue
        pairs.add((b.fabric, b.generation))
        if b.low_gbps > b.high_gbps:
            problems.append(Problem(label, f"{where}.low_gbps", "low_gbps is above high_gbps"))
        low = res.one(b.low_source, f"{where}.low_source")
        high = res.one(b.high_source, f"{where}.high_source")
        if low is None or high is None:
            continue
        out.append(
            FabricBracket(
                fabric=b.fabric,
                generation=b.generation,
                gpus=generations[b.generation],
                low_gbps=b.low_gbps,
                high_gbps=b.high_gbps,
                low_source=low,
                high_source=high,
                note=b.note,
            )
        )
    return tuple(out), tuple(sizes)


def check_offers(brackets: Iterable[FabricBracket], offers: Iterable[Offer]) -> list[Problem]:
    """Offers whose known fabric and Gbit/s fall outside their bracket, as problems."""
    problems = []
    by_pair = {(b.fabric, gpu): b for b in brackets for gpu in b.gpus}
    for o in offers:
        b = by_pair.get((o.fabric, o.gpu)) if o.fabric is not None else None
        if b is None or o.per_node_gbps is None:
            continue
        if not b.low_gbps <= o.per_node_gbps <= b.high_gbps:
            msg = (
                f"offer {o.id!r} publishes {o.per_node_gbps:g} Gbit/s per node, outside the "
                f"{b.low_gbps:g}-{b.high_gbps:g} bracket of {b.fabric.value} on {b.generation!r}"
            )
            problems.append(Problem(BRACKETS_FILE, f"brackets[{b.generation}]", msg))
    return problems


def _src(s: Source) -> dict[str, Any]:
    return {"id": s.id, "url": s.url, "checked_on": s.checked_on.isoformat()}


def brackets_json(brackets: Brackets) -> dict[str, Any]:
    """The brackets and node sizes as stored with the build (read by ``brackets_from_json``)."""
    fabric, sizes = brackets
    return {
        "brackets": _brackets_json(fabric),
        "node_sizes": [
            {
                "generation": s.generation,
                "gpus": list(s.gpus),
                "gpus_per_node": s.gpus_per_node,
                "source": _src(s.source),
            }
            for s in sizes
        ],
    }


def _brackets_json(brackets: Iterable[FabricBracket]) -> list[dict[str, Any]]:
    src = _src
    return [
        {
            "fabric": b.fabric.value,
            "generation": b.generation,
            "gpus": list(b.gpus),
            "low_gbps": b.low_gbps,
            "high_gbps": b.high_gbps,
            "low_source": src(b.low_source),
            "high_source": src(b.high_source),
            "note": b.note,
        }
        for b in brackets
    ]


def _source(s: dict[str, Any]) -> Source:
    return Source(id=s["id"], url=s["url"], checked_on=date.fromisoformat(s["checked_on"]))


def brackets_from_json(data: dict[str, Any]) -> Brackets:
    """The brackets and node sizes stored by ``brackets_json``."""
    sizes = tuple(
        NodeSize(s["generation"], tuple(s["gpus"]), int(s["gpus_per_node"]), _source(s["source"]))
        for s in data["node_sizes"]
    )
    return _brackets_from_json(data["brackets"]), sizes


def _brackets_from_json(data: Iterable[dict[str, Any]]) -> tuple[FabricBracket, ...]:
    src = _source
    return tuple(
        FabricBracket(
            fabric=FabricKind(b["fabric"]),
            generation=b["generation"],
            gpus=tuple(b["gpus"]),
            low_gbps=float(b["low_gbps"]),
            high_gbps=float(b["high_gbps"]),
            low_source=src(b["low_source"]),
            high_source=src(b["high_source"]),
            note=b.get("note"),
        )
        for b in data
    )
