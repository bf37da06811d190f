"""Options every command shares, options derived from the fields table, and error reporting."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import click
from rich.markup import escape
from sqlalchemy import Engine

from clusterscout.app import database
from clusterscout.app.errors import Failure, FailureKind, Operation, failure_of
from clusterscout.app.fields import UNKNOWABLE_NAMES, Field, Kind, Use
from clusterscout.cli.output import err
from clusterscout.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])

database_url_option = click.option(
    "--database-url",
    default=None,
    metavar="URL",
    help="SQLAlchemy URL (default: $CLUSTERSCOUT_DATABASE_URL, else the SQLite file).",
)


def format_option(default: str, allowed: Sequence[str]) -> Callable[[F], F]:
    """``--format`` with the given choices (checked by ``choice``, for a one-line error)."""
    return click.option(
        "--format",
        "fmt",
        default=default,
        show_default=True,
        metavar="|".join(allowed),
        help=f"Output: {', '.join(allowed)}.",
    )


def fail(message: str, code: int = 2) -> click.exceptions.Exit:
    """Print ``error: message`` on one line; return the Exit to raise (2: bad input, 1: failure)."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    return click.exceptions.Exit(code)


def choice(flag: str, value: str, allowed: Sequence[str]) -> str:
    """``value`` lower-cased if it is one of ``allowed``, else a one-line error naming ``flag``."""
    value = value.strip().lower()
    if value not in allowed:
        raise fail(f"{flag}: {value!r} is not one of: {', '.join(allowed)}")
    return value


def flag_of(field: str) -> str:
    """The CLI option for an input field name: ``min_gbps`` -> ``--min-gbps``."""
    return "--" + field.replace("_", "-")


def _message(failure: Failure, flags: bool, prefix: str) -> str:
    if failure.field is None:
        return f"{prefix}{failure.detail}"
    if flags:
        return f"{flag_of(failure.field)}: {failure.detail}"
    return f"{prefix}{failure.message}"


@contextmanager
def reporting(
    operation: Operation = Operation.LISTING, *, flags: bool = True, prefix: str = ""
) -> Iterator[None]:
    """Turn a failure into a one-line ``error:`` and its exit code (``app.errors``).

    Args:
        operation: what the command does (it decides which errors are bad input).
        flags: name the field as the CLI option (``--min-gbps``); else as the input path
            (``workload.seq_len``), as in a scenario file.
        prefix: put before messages that name no field (e.g. the scenario file).
    """
    try:
        yield
    except (click.exceptions.Exit, click.ClickException):
        raise
    except Exception as exc:
        failure = failure_of(exc, operation)
        if failure is None:
            raise
        if failure.kind is FailureKind.INVALID_CATALOG:
            for p in failure.problems:
                err.print(str(p), highlight=False, markup=False)
        if failure.kind is FailureKind.BAD_DATABASE:
            raise fail(f"--database-url: {failure.detail}", failure.exit_code) from None
        raise fail(_message(failure, flags, prefix), failure.exit_code) from None


def settings_for(database_url: str | None) -> Settings:
    """Settings from the environment, with --database-url taking precedence."""
    settings = Settings()
    if database_url:
        settings = settings.model_copy(update={"database_url": database_url})
    return settings


def engine_for(database_url: str | None) -> Engine:
    """Open the database (building it from the catalog when empty), or exit with a clear message."""
    try:
        return database.open_engine(settings_for(database_url))
    except database.CatalogInvalidError as exc:
        for p in exc.problems:
            err.print(str(p), highlight=False, markup=False)
        raise fail("the database is empty and the catalog does not validate", 1) from None
    except Exception as exc:
        failure = failure_of(exc)
        if failure is None or failure.kind is not FailureKind.BAD_DATABASE:
            raise
        raise fail(f"--database-url: {failure.detail}", failure.exit_code) from None


_METAVARS = {
    Kind.NUMBER: "X",
    Kind.INTEGER: "N",
    Kind.TEXT: "TEXT",
    Kind.GPU: "GPU",
    Kind.PROVIDER: "SLUG",
    Kind.REGION: "PLACE",
}


def _metavar(field: Field) -> str:
    if field.kind is Kind.BOOL:
        return "[true|false|true_or_unknown]" if field.name in UNKNOWABLE_NAMES else "[true|false]"
    if field.values:
        return "|".join(field.values)
    return _METAVARS[field.kind]


def field_options(fields: Sequence[Field], *, plan: bool = False) -> Callable[[F], F]:
    """One option per field, in the table's order, named and documented by the table.

    A boolean works bare (``--rdma``) and with a value (``--rdma false``); a field repeatable
    in this use takes the option several times (``--fabric roce --fabric efa``). Values stay
    text: ``app.inputs`` reads them, so the CLI, the API and the pages accept the same things.
    """

    def decorate(f: F) -> F:
        for field in reversed(fields):
            # In a plan, only the offer filters repeat; the plan's own inputs are single.
            repeatable = field.repeatable and (not plan or field.used_as(Use.PLAN_FILTER))
            extra: dict[str, Any] = {}
            if field.kind is Kind.BOOL:
                extra = {"is_flag": False, "flag_value": "true"}
            f = click.option(
                field.flag,
                field.name,
                default=None,
                multiple=repeatable,
                metavar=_metavar(field),
                help=field.help,
                **extra,
            )(f)
        return f

    return decorate


def field_values(kwargs: Mapping[str, Any], fields: Sequence[Field]) -> dict[str, Any]:
    """The fields given on the command line: text, or a list of text for repeated options."""
    out: dict[str, Any] = {}
    for field in fields:
        value = kwargs.get(field.name)
        if value is None or value == ():
            continue
        out[field.name] = list(value) if isinstance(value, tuple) else value
    return out
