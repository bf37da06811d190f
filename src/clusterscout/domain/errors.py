"""The one input-error type: a value a user gave that cannot be used, naming the field at fault."""

from __future__ import annotations


class InputError(ValueError):
    """A field of a query, form, CLI flag or JSON body is missing or invalid.

    Every surface reports it the same way (``app.errors``): HTTP 400 with ``field`` in the
    error body, a one-line ``error: --flag: message`` in the CLI, the advice next to a form field.

    Attributes:
        field: the name (or dotted path) of the input at fault, e.g. ``fabric`` or
            ``workload.parallelism.tp``.
        message: what is wrong, in plain words.

    >>> str(InputError("min_gbps", "'fast' is not a number"))
    "min_gbps: 'fast' is not a number"
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
