"""The repository stands alone: cited paths exist, and docs/architecture.md names every module."""

from __future__ import annotations

import posixpath
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "clusterscout"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# Files whose text may cite paths. data/ cites public sources (paths in other repositories);
# HTML templates and content/ link to site URLs, not files.
_SCANNED = re.compile(r"(\.(md|py|toml|cfg|ini|txt|ya?ml)|Makefile)$")
_TOP = "src|docs|data|tests|content|scripts|bench"
_PKG = "app|web|catalog|store|model|domain|feeds|launch|cli"
_ROOT_PATH = re.compile(rf"(?<![\w/.$-])((?:{_TOP})/[\w./-]*[\w/])")
_PACKAGE_PATH = re.compile(rf"(?<![\w/.$-])((?:{_PKG})/[\w/]*\.py)\b")
_MD_NAME = re.compile(r"(?<![\w/.-])([\w-]+\.md)\b")
_MD_LINK = re.compile(r"\]\(([^)#\s]+)")
# A path on one person's machine, or one that climbs out of the repository.
_OUTSIDE = re.compile(r"(?<![\w.:/-])(/(?:work|home|Users|root)/[\w./-]*|\.\./[\w./-]+)")
_URL_BEFORE = re.compile(r"\S+://\S*$")


def _tracked() -> list[str]:
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [f for f in listed.stdout.splitlines() if (ROOT / f).is_file()]


def _ignored(path: str) -> bool:
    """A git-ignored path is a build output (node_modules, .venv): cited, made on demand."""
    checked = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, check=False)
    return checked.returncode == 0


def _inside(path: str) -> bool:
    return not posixpath.normpath(path).startswith("..")


def _missing_in(name: str, text: str, names: set[str]) -> list[str]:
    """Paths cited in one tracked file that do not exist (reported as ``file:line: path``)."""
    problems: list[str] = []
    here = posixpath.dirname(name)
    is_test = name.startswith("tests/")
    for number, line in enumerate(text.splitlines(), 1):

        def bad(path: str, line: str = line, number: int = number) -> None:
            problems.append(f"{name}:{number}: {path}")

        for match in _OUTSIDE.finditer(line):
            target = match.group(1)
            if target.startswith("../") and _inside(posixpath.join(here, target)):
                continue
            if not _URL_BEFORE.search(line[: match.start()]):
                bad(target)
        for match in _MD_NAME.finditer(line):
            if match.group(1) not in names and not _URL_BEFORE.search(line[: match.start()]):
                bad(match.group(1))
        if name.endswith(".md") and not name.startswith("content/"):
            for match in _MD_LINK.finditer(line):
                target = match.group(1)
                if re.match(r"[a-z]+:|/|\?", target):
                    continue
                resolved = posixpath.normpath(posixpath.join(here, target))
                if not (ROOT / resolved).exists():
                    bad(target)
        # Test files write fixture paths of temporary catalogs; only real files are cited here.
        if is_test:
            continue
        for match in _ROOT_PATH.finditer(line):
            path = match.group(1).rstrip("./")
            if _URL_BEFORE.search(line[: match.start()]):
                continue
            if not (ROOT / path).exists() and not _ignored(path):
                bad(path)
        for match in _PACKAGE_PATH.finditer(line):
            path = match.group(1)
            if _URL_BEFORE.search(line[: match.start()]):
                continue
            if not (PACKAGE / path).exists() and not (ROOT / path).exists():
                bad(path)
    return problems


def test_every_cited_path_exists_in_the_repository() -> None:
    tracked = _tracked()
    names = {posixpath.basename(f) for f in tracked}
    problems: list[str] = []
    for name in tracked:
        # This file's own examples are missing paths on purpose.
        if not _SCANNED.search(name) or name.startswith("data/") or name == "tests/test_docs.py":
            continue
        problems += _missing_in(name, (ROOT / name).read_text(errors="replace"), names)
    assert problems == [], "cited paths that do not exist:\n" + "\n".join(problems)


def test_the_checker_reports_a_missing_path_with_its_place() -> None:
    names = {"design.md", "architecture.md"}
    text = "see docs/nowhere.md and `web/ghost.py`\nread /work/main/notes.txt and DESIGN.md\n"
    assert _missing_in("docs/x.md", text, names) == [
        "docs/x.md:1: docs/nowhere.md",
        "docs/x.md:1: web/ghost.py",
        "docs/x.md:2: /work/main/notes.txt",
        "docs/x.md:2: DESIGN.md",
    ]
    assert _missing_in("docs/x.md", "[ok](architecture.md) and docs/design.md", names) == []


def _modules() -> set[str]:
    """Every module as ``package/name`` (``clusterscout/name`` at the top), migrations excluded."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__" or "versions" in parts:
            continue
        if len(parts) == 1:
            found.add(f"clusterscout/{parts[0]}")
        elif parts[:2] == ("model", "planner"):
            found.add("model/planner/" + "/".join(parts[2:]))
        else:
            found.add(f"{parts[0]}/" + "/".join(parts[1:]))
    return found


def _table(text: str) -> set[str]:
    """Modules named in the "where things live" table: ``package/`` then its names in backticks."""
    named: set[str] = set()
    for row in re.findall(r"^\| `([\w/]+/)` \|(.*)\|$", text, flags=re.MULTILINE):
        package, cells = row
        for name in re.findall(r"`([a-z_][a-z0-9_]*(?:/[a-z_][a-z0-9_]*)*)`", cells):
            named.add(package + name)
    return named


def test_architecture_names_every_module_and_no_other() -> None:
    text = ARCHITECTURE.read_text()
    assert text.splitlines()[2] == "## Where things live", "architecture.md opens with the table"
    named = _table(text)
    modules = _modules()
    assert sorted(modules - named) == [], "modules missing from docs/architecture.md"
    assert sorted(named - modules) == [], "docs/architecture.md names modules that do not exist"


def test_the_table_reader_sees_a_module_missing() -> None:
    text = "| `store/` | `tables`, `db` |\n| `web/` | routes (`pages`), `app` |\n"
    assert _table(text) == {"store/tables", "store/db", "web/pages", "web/app"}
    assert "store/tally" in _modules() - _table(text)
