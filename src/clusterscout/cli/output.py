"""What the CLI prints: consoles, JSON, values, and tables that read well in any width.

A table is drawn with box lines when stdout is a terminal wide enough for it. Piped or
redirected, it is printed as plain rows, one line per row with columns padded to their widest
cell (``| cat``, ``| grep``, ``| column`` all read it); in a terminal too narrow for the box
table, each row is printed as a block of ``column: value`` lines. Cells are never folded into
one-character columns.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def text(value: Any) -> str:
    """A value as a table shows it: ``unknown`` for null, ``yes``/``no``, ``2.5`` for 2.50.

    >>> text(None), text(True), text(2.50), text("H100")
    ('unknown', 'yes', '2.5', 'H100')
    """
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass(frozen=True, slots=True)
class Column:
    """A table column: its header and whether numbers align right."""

    header: str
    right: bool = False


def _plain(title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> str:
    """Rows as aligned plain text, each on one line whatever its length."""
    if any("\n" in cell for row in rows for cell in row):
        return _blocks(title, columns, rows)
    table = [[c.header for c in columns], *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
    lines = [title] if title else []
    for row in table:
        cells = [
            cell.rjust(w) if col.right else cell.ljust(w)
            for cell, w, col in zip(row, widths, columns, strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _blocks(title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> str:
    """Each row as ``header: value`` lines (multi-line cells indented), rows apart."""
    width = max((len(c.header) for c in columns), default=0)
    lines = [title] if title else []
    for row in rows:
        lines.append("")
        for col, cell in zip(columns, row, strict=True):
            head, *rest = cell.split("\n") or [""]
            lines.append(f"{col.header.ljust(width)}  {head}".rstrip())
            lines.extend(f"{'':{width}}  {more}" for more in rest)
    return "\n".join(lines) + "\n"


def _box_width(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> int:
    """Width of the box table with no cell folded: cells, their padding and the rules."""
    widths = [
        max(len(line) for cell in (col.header, *(r[i] for r in rows)) for line in cell.split("\n"))
        for i, col in enumerate(columns)
    ]
    return sum(w + 2 for w in widths) + len(columns) + 1


def print_table(
    title: str,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    console: Console | None = None,
    show_lines: bool = False,
) -> None:
    """Print a table in the layout the output can show without folding cells.

    Args:
        title: a line above the table.
        columns: the columns, in order.
        rows: one sequence of cell texts per row.
        console: where to print (default: stdout).
        show_lines: rule between rows in the box layout (for multi-line cells).
    """
    console = console or out
    if console.is_terminal:
        table = Table(title=title, header_style="bold", show_lines=show_lines)
        for col in columns:
            table.add_column(col.header, justify="right" if col.right else "left", no_wrap=True)
        for row in rows:
            table.add_row(*row)
        if _box_width(columns, rows) <= console.width:
            console.print(table)
            return
        console.file.write(_blocks(title, columns, rows))
        return
    console.file.write(_plain(title, columns, rows))
