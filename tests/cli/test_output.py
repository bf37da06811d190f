"""Tables never fold cells: box lines when they fit, blocks when narrow, plain rows when piped."""

from __future__ import annotations

import io

from rich.console import Console

from clusterscout.cli.output import Column, print_table

COLUMNS = [Column("offer"), Column("price"), Column("nodes", right=True)]
ROWS = [
    ["crusoe-h100-ib", "3.90 on_demand", "64"],
    ["azure-nd-h100-v5", "12.29 on_demand", "8"],
]


def _render(*, terminal: bool, width: int, rows: list[list[str]] = ROWS) -> str:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=terminal, width=width, color_system=None)
    print_table("Options", COLUMNS, rows, console=console)
    return buf.getvalue()


def test_piped_output_is_one_aligned_line_per_row() -> None:
    text = _render(terminal=False, width=20)  # the width of a pipe does not matter
    lines = text.splitlines()
    assert lines[0] == "Options"
    assert lines[1].split() == ["offer", "price", "nodes"]
    assert lines[2].split() == ["crusoe-h100-ib", "3.90", "on_demand", "64"]
    assert lines[3].split() == ["azure-nd-h100-v5", "12.29", "on_demand", "8"]
    # Columns line up: every row's price starts where the header's does.
    start = lines[1].index("price")
    assert lines[2][start:].startswith("3.90") and lines[3][start:].startswith("12.29")
    assert lines[2].endswith("64") and lines[3].endswith(" 8")  # numbers align right


def test_a_terminal_wide_enough_gets_the_box_table() -> None:
    text = _render(terminal=True, width=120)
    assert "┃" in text or "│" in text
    assert any("crusoe-h100-ib" in line and "3.90 on_demand" in line for line in text.splitlines())


def test_a_narrow_terminal_gets_blocks_with_whole_cells() -> None:
    text = _render(terminal=True, width=24)
    lines = text.splitlines()
    assert "offer  crusoe-h100-ib" in lines
    assert "price  12.29 on_demand" in lines
    assert not any("│" in line for line in lines)


def test_multi_line_cells_are_printed_as_blocks_when_piped() -> None:
    text = _render(terminal=False, width=80, rows=[["a", "one\ntwo", "1"]])
    assert "price  one" in text.splitlines()
    assert "       two" in text.splitlines()
