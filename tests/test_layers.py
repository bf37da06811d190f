"""Imports go one way (docs/architecture.md) and never in a circle: read from the source with ast.

Every import counts, at module level or inside a function: a function-level import only hides a
dependency, it does not remove it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "clusterscout"

RANKS: Mapping[str, int] = {
    "domain": 0,
    "version": 0,
    "resources": 0,
    "settings": 1,
    "model": 1,
    "catalog": 2,
    "launch": 2,  # launch files and the nccl-tests check: domain values and model numbers
    "store": 3,
    "feeds": 4,
    "app": 5,
    "web": 6,
    "cli": 6,
    "mcp_server": 6,  # the MCP surface: app services, the API's JSON shapes
    "library": 7,
    "__main__": 8,
    "": 8,  # the package root: version and the lazy Catalog
}
"""A part may import parts of lower rank and itself; parts of equal rank stay apart."""
SURFACES = frozenset({"web", "cli", "mcp_server", "library", "__main__", ""})
"""Parts above the application layer: they never reach into the store or the feeds."""
BELOW_APP = frozenset({"store", "feeds"})
SHARED: Mapping[str, frozenset[str]] = {
    # The published JSON of plans and estimates: the CLI's --format json and the Python API's
    # to_dict() must be the API's JSON, so they use its one declaration.
    "clusterscout.web.schemas": frozenset({"cli", "library", "mcp_server"}),
    # The MCP tools take the API's inputs, so their schemas are the API's documented ones.
    "clusterscout.web.api_docs": frozenset({"mcp_server"}),
    # Today's date as the API judges staleness, for the same answers.
    "clusterscout.web.viewmodels": frozenset({"mcp_server"}),
    # `clusterscout mcp` only starts the MCP server.
    "clusterscout.mcp_server.server": frozenset({"cli"}),
    # export-site is the web surface written to files; the CLI command only starts it.
    "clusterscout.web.export": frozenset({"cli"}),
}


def module_name(path: Path, src: Path = SRC) -> str:
    """``clusterscout.web.api`` for ``src/clusterscout/web/api.py`` (packages drop __init__)."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def read_sources(src: Path = SRC) -> dict[str, str]:
    """Module name -> source text for every module of the package."""
    return {module_name(p, src): p.read_text(encoding="utf-8") for p in src.rglob("*.py")}


def _resolve(name: str, modules: Iterable[str]) -> str:
    """The module an import names: itself when it is one, else the package it is in."""
    known = set(modules)
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports_of(module: str, source: str, modules: Iterable[str]) -> set[str]:
    """The package's modules that ``source`` imports, anywhere in the file."""
    known = set(modules)
    is_package = any(m.startswith(module + ".") for m in known)
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # "from pkg import mod" names the module pkg.mod when there is one.
            names = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        found.update(_resolve(n, known) for n in names if n == ROOT or n.startswith(ROOT + "."))
    found.discard(module)
    return found


def graph(sources: Mapping[str, str]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    return {m: imports_of(m, s, sources) for m, s in sources.items()}


def part(module: str) -> str:
    """The top-level part of a module: ``web`` for ``clusterscout.web.api``, ``""`` for root."""
    rest = module.removeprefix(ROOT).lstrip(".")
    return rest.split(".", 1)[0]


def layer_violations(edges: Mapping[str, set[str]]) -> list[str]:
    """Every import against the layering, as ``importer -> imported: why``."""
    out = []
    for importer, targets in sorted(edges.items()):
        src_part = part(importer)
        for target in sorted(targets):
            dst_part = part(target)
            if src_part == dst_part:
                continue
            if src_part in SHARED.get(target, frozenset()):
                continue
            if src_part in SURFACES and dst_part in BELOW_APP:
                out.append(f"{importer} -> {target}: surfaces go through clusterscout.app")
            elif RANKS[dst_part] >= RANKS[src_part]:
                why = "sideways" if RANKS[dst_part] == RANKS[src_part] else "upward"
                out.append(f"{importer} -> {target}: {why} ({src_part} -> {dst_part})")
    return out


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan's SCC)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_part_has_a_rank() -> None:
    parts = {part(m) for m in read_sources()}
    assert parts <= set(RANKS), parts - set(RANKS)


def test_imports_go_one_way() -> None:
    violations = layer_violations(graph(read_sources()))
    assert not violations, "\n".join(violations)


def test_no_import_cycle() -> None:
    found = cycles(graph(read_sources()))
    assert not found, found


def test_the_shared_json_shapes_import_no_web_module() -> None:
    # web.schemas may be used by the CLI and the Python API only while it stays a leaf of web.
    edges = graph(read_sources())
    assert not {t for t in edges["clusterscout.web.schemas"] if part(t) in {"web", "app"}}


def test_the_checks_catch_an_upward_import_a_shortcut_and_a_cycle() -> None:
    sources = {
        "clusterscout": "",
        "clusterscout.model": "",
        "clusterscout.model.cost": "def f():\n    from clusterscout.web import pages\n",
        "clusterscout.web": "",
        "clusterscout.web.pages": "from clusterscout.store.queries import list_offers\n",
        "clusterscout.web.a": "from clusterscout.web import b\n",
        "clusterscout.web.b": "from . import a\n",
        "clusterscout.store": "",
        "clusterscout.store.queries": "",
    }
    edges = graph(sources)
    assert layer_violations(edges) == [
        "clusterscout.model.cost -> clusterscout.web.pages: upward (model -> web)",
        "clusterscout.web.pages -> clusterscout.store.queries: surfaces go through "
        "clusterscout.app",
    ]
    assert cycles(edges) == [["clusterscout.web.a", "clusterscout.web.b"]]


def test_the_architecture_doc_names_every_part() -> None:
    doc = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = {m.rstrip("/").removesuffix(".py") for m in re.findall(r"\*\*`([\w.]+/?)`\*\*", doc)}
    parts = {part(m) for m in read_sources()} - {"", "__main__"}
    assert parts == named, (parts - named, named - parts)
