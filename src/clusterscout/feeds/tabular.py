"""Strict CSV reading shared by the file-based feeds: known layouts only, whole rows only."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from clusterscout.feeds.base import FeedError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class CsvRow:
    """One data row: values by column name, and its 1-based line number in the file."""

    line: int
    values: dict[str, str]

    def get(self, column: str) -> str:
        """The cell, stripped; empty string when the column is absent from the layout."""
        return self.values.get(column, "").strip()


def read_text(path: Path) -> str:
    """The file as UTF-8 text.

    Raises:
        FeedError: when the file is missing, unreadable, not UTF-8 or empty.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        msg = f"{path}: no such file"
        raise FeedError(msg) from None
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"{path}: cannot read: {exc}"
        raise FeedError(msg) from None
    if not text.strip():
        msg = f"{path}: the file is empty"
        raise FeedError(msg)
    return text


def read_rows(
    text: str,
    where: str,
    *,
    required: Sequence[str],
    optional: Iterable[str] = (),
    require_final_newline: bool = False,
) -> list[CsvRow]:
    """Parse CSV text whose header must be a known layout (any column order).

    Args:
        text: the whole file.
        where: file name for messages.
        required: columns that must be present.
        optional: further columns that may be present; any other column is an unknown layout.
        require_final_newline: machine-written catalogs end with a newline, so a missing one
            means the file was cut short.

    Raises:
        FeedError: for an unknown layout, a row with the wrong number of fields, a broken
            quote, or (when asked) a missing final newline: each a sign of a truncated or
            changed file.
    """
    if require_final_newline and not text.endswith("\n"):
        msg = f"{where}: the file does not end with a newline; it looks truncated"
        raise FeedError(msg)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader)]
    except (StopIteration, csv.Error) as exc:
        msg = f"{where}: cannot read the header: {exc}"
        raise FeedError(msg) from None
    _check_layout(header, where, required, optional)
    rows: list[CsvRow] = []
    try:
        for fields in reader:
            line = reader.line_num
            if not fields:
                continue
            if len(fields) != len(header):
                msg = (
                    f"{where}: line {line}: {len(fields)} fields where the header has "
                    f"{len(header)}; the file looks truncated or malformed"
                )
                raise FeedError(msg)
            rows.append(CsvRow(line, dict(zip(header, fields, strict=True))))
    except csv.Error as exc:
        msg = f"{where}: line {reader.line_num}: {exc}; the file looks truncated or malformed"
        raise FeedError(msg) from None
    return rows


def _check_layout(
    header: list[str], where: str, required: Sequence[str], optional: Iterable[str]
) -> None:
    known = set(required) | set(optional)
    duplicated = sorted({h for h in header if header.count(h) > 1})
    missing = [c for c in required if c not in header]
    unknown = [h for h in header if h not in known]
    problems = []
    if duplicated:
        problems.append(f"duplicated column(s) {', '.join(duplicated)}")
    if missing:
        problems.append(f"missing column(s) {', '.join(missing)}")
    if unknown:
        problems.append(f"unknown column(s) {', '.join(unknown)}")
    if problems:
        msg = f"{where}: unknown column layout: {'; '.join(problems)} (header: {', '.join(header)})"
        raise FeedError(msg)


def reject_duplicates(
    rows: Iterable[T], key: Callable[[T], Hashable], locate: Callable[[T], str]
) -> None:
    """Raise FeedError when two rows share a key (a repeated row would double-count a price).

    ``locate`` names a row in messages, e.g. ``vms.csv: line 12``.
    """
    seen: dict[Hashable, str] = {}
    for row in rows:
        k = key(row)
        if k in seen:
            msg = f"{locate(row)}: repeats {seen[k]} (same {k}); duplicate rows are rejected"
            raise FeedError(msg)
        seen[k] = locate(row)
