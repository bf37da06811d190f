"""The ``clusterscout`` command line: one module per command group, registered the same way.

Each module (``catalog``, ``model``, ``launch``, ``prices``, ``quote``, ``site``, ``agent``)
defines Click commands and lists them in ``COMMANDS``; this module adds them to the group in that
order. Usage errors and
failures print one line, ``error: <message naming the flag>``, with exit code 2 for input the
user can correct and 1 for a failure of the data or installation.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click
from rich.markup import escape

from clusterscout.cli import agent, catalog, launch, model, prices, quote, site
from clusterscout.cli.output import err

COMMAND_MODULES = (catalog, model, launch, prices, quote, site, agent)


class OneLineErrorGroup(click.Group):
    """The command group, with usage errors (bad flag value, unknown option) on one line."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command; in standalone mode, print click errors as one line and exit."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            err.print(exc.format_message(), highlight=False, markup=False)
            sys.exit(2)
        except click.Abort:
            err.print("aborted", highlight=False)
            sys.exit(1)
        except click.ClickException as exc:
            message = " ".join(exc.format_message().split())
            err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


app = OneLineErrorGroup(
    name="clusterscout",
    help="Compare and plan multi-node GPU cluster rentals, with a source for every fact.",
    no_args_is_help=True,
)
for _module in COMMAND_MODULES:
    for _command in _module.COMMANDS:
        app.add_command(_command)
