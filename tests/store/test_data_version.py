"""The catalog's content hash: which files count, and when a kept answer may be reused."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from clusterscout.store.build import data_version


def _by_definition(data_dir: Path) -> str:
    """The hash as documented: every catalog file in path order, name, NUL, bytes."""
    files = sorted(
        p
        for p in data_dir.rglob("*")
        if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts
    )
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(data_dir)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _tree(root: Path) -> Path:
    for rel, body in {
        "providers/a.toml": "a = 1\n",
        "providers/b-c.toml": "b = 2\n",
        "providers/b/c.toml": "c = 3\n",  # "b/c" sorts before "b-c" as a path, after as text
        "gpus.toml": "g = 4\n",
        "__init__.py": "# packaging\n",
        "__pycache__/x.cpython-311.pyc": "bytecode",
        "sub/__pycache__/y.toml": "not catalog",
    }.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    (root / "dangling.toml").symlink_to(root / "missing.toml")
    (root / "linked").symlink_to(root / "providers", target_is_directory=True)
    return root


def _age(root: Path, seconds: float) -> None:
    """Date every file ``seconds`` back, as a catalog checked out earlier would be."""
    past = time.time() - seconds
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (past, past))


def test_the_hash_counts_catalog_files_in_path_order_and_skips_packaging(tmp_path: Path) -> None:
    root = _tree(tmp_path / "data")
    assert data_version(root) == _by_definition(root)
    (root / "__init__.py").write_text("# other packaging\n")
    (root / "__pycache__" / "z.pyc").write_text("more bytecode")
    assert data_version(root) == _by_definition(root)


def test_a_file_rewritten_at_once_with_its_size_and_time_is_still_seen(tmp_path: Path) -> None:
    root = _tree(tmp_path / "data")
    path = root / "providers" / "a.toml"
    before = data_version(root)
    stamp = path.stat()
    path.write_text("a = 9\n")  # same size
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # and the same time
    assert data_version(root) != before
    assert data_version(root) == _by_definition(root)


def test_an_old_catalog_is_hashed_once_until_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path / "data")
    _age(root, 60)
    reads: list[Path] = []
    plain = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads.append(self)
        return plain(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    first = data_version(root)
    hashed = len(reads)
    assert hashed == 4
    assert data_version(root) == first
    assert len(reads) == hashed  # nothing read again

    (root / "gpus.toml").write_text("g = 5\n")  # same size, a new time
    assert data_version(root) == _by_definition(root) != first
    (root / "new.toml").write_text("n = 1\n")
    assert data_version(root) == _by_definition(root)
    (root / "new.toml").unlink()
    assert data_version(root) == _by_definition(root)
