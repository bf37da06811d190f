"""Message ids: text marked for translation where it is written, translated by the web layer."""

from __future__ import annotations


def N_(message: str) -> str:  # noqa: N802 - the gettext convention for "mark, translate later"
    """Mark ``message`` for extraction into ``messages.pot`` without translating it now.

    Lower layers (the fields table, the planner's reasons) name their user-facing text with
    it; the web layer passes the same string to ``gettext`` in the visitor's language.

    >>> N_("GPU model")
    'GPU model'
    """
    return message
