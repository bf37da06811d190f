"""The planner form: query string ⇄ form state ⇄ plan body, and its controls from the fields table.

The query string is the whole state of ``/{lang}/plan/``, so a plan can be shared by its URL.
Parameter names are the ``POST /api/v1/plan`` field names (every one is accepted); values are
passed through as text and validated by the plan service, which names the field at fault.
Which fields the form shows, in which fieldset, with which control, label and default, is the
``form`` column of ``app.fields``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from clusterscout.app.fields import (
    FORM_FIELDS,
    PLAN_FIELD_NAMES,
    PLAN_FIELDS,
    Field,
    FormSection,
    Kind,
    Use,
    Widget,
)
from clusterscout.domain.messages import N_
from clusterscout.web import params
from clusterscout.web.api_error import ApiError
from clusterscout.web.cells import VALUE_LABELS
from clusterscout.web.i18n import Formatter

MULTI_FIELDS: Final = frozenset(
    f.name for f in PLAN_FIELDS if f.repeatable and f.used_as(Use.PLAN_FILTER)
)
DEFAULTS: Final = {f.name: f.form.default for f in FORM_FIELDS if f.form and f.form.default}
MAX_VALUE_CHARS: Final = 40
SECTION_TITLES: Final = {
    FormSection.JOB: N_("Your job"),
    FormSection.LIMITS: N_("Hardware and limits"),
    FormSection.NARROW: N_("Only some providers or fabrics (optional)"),
}
_TRAINING: Final = "pretrain full_finetune lora qlora"
JOB_FIELDS: Final = {
    "tokens": _TRAINING,
    "stack": _TRAINING,
    "lora_rank": "lora qlora",
    "context": "inference",
    "concurrency": "inference",
    "target_tokens_per_s": "inference",
}
"""Fields only some jobs use (space-separated ``job`` values); the page's script hides the
others when the job selector changes, and without the script every field stays visible."""
COLLAPSED: Final = frozenset({FormSection.NARROW})
"""Fieldsets shown folded unless one of their fields is set."""


@dataclass(frozen=True, slots=True)
class PlanQuery:
    """What the visitor asked for: one value per single field, lists for the repeatable ones."""

    values: dict[str, str] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=dict)
    prices: str = ""
    """Buyer prices as typed: ``offer=usd`` pairs separated by commas."""

    @property
    def submitted(self) -> bool:
        """True when the form was sent (any field given); an empty query shows the form only."""
        return bool(self.values or self.lists or self.prices)

    def value(self, name: str) -> str:
        """The value to show in the form: the asked one, else the default on a fresh form."""
        if self.submitted:
            return self.values.get(name, "")
        return self.values.get(name, DEFAULTS.get(name, ""))

    def pairs(self) -> list[tuple[str, str]]:
        """Sorted, non-empty parameters; ``params`` is dropped when a preset is chosen."""
        out = [
            (k, v)
            for k, v in self.values.items()
            if v and not (k == "params" and self.values.get("model"))
        ]
        out.extend((k, v) for k, vs in self.lists.items() for v in sorted(set(vs)))
        if self.prices:
            out.append((PRICES, self.prices))
        return sorted(out)

    def query_string(self) -> str:
        """The canonical query string (with ``?``), or ``""``."""
        return params.query_string(self.pairs())

    def body(self) -> dict[str, Any]:
        """The plan body for this query (numbers stay text; the service parses them)."""
        body: dict[str, Any] = dict(self.pairs())
        if self.prices:
            body[PRICES] = buyer_prices(self.prices)
        for name in MULTI_FIELDS:
            if name in self.lists:
                body[name] = sorted(set(self.lists[name]))
        return body


PRICES: Final = "prices"
MAX_PRICES_CHARS: Final = 400


def buyer_prices(text: str) -> dict[str, str]:
    """``a=2.1, b=3`` as the plan body's ``prices``; a pair without ``=`` keeps an empty price,
    so the plan service names it."""
    out: dict[str, str] = {}
    for part in text.split(","):
        offer_id, _, usd = part.strip().partition("=")
        if offer_id.strip():
            out[offer_id.strip()] = usd.strip()
    return out


def parse(items: Iterable[tuple[str, str]]) -> PlanQuery:
    """Group query parameters; the last non-empty value of a single field wins.

    Raises:
        ApiError: 400 naming an unknown parameter or an over-long value.
    """
    values: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    prices = ""
    for key, raw in items:
        if key == PRICES:
            prices = " ".join(raw.split())
            if len(prices) > MAX_PRICES_CHARS:
                raise ApiError(400, "invalid_parameter", "value too long", key)
            continue
        if key not in PLAN_FIELD_NAMES:
            raise ApiError(400, "unknown_parameter", "unknown parameter", key[:40])
        value = raw.strip()
        if len(value) > MAX_VALUE_CHARS:
            raise ApiError(400, "invalid_parameter", "value too long", key)
        if key in MULTI_FIELDS:
            if value:
                lists.setdefault(key, []).append(value.lower())
        elif value:
            values[key] = value
        else:
            values.setdefault(key, "")
    return PlanQuery(values, lists, prices)


@dataclass(frozen=True, slots=True)
class Control:
    """One form control, ready for the template (labels translated, values as text)."""

    name: str
    widget: str
    label: str
    help: str
    value: str = ""
    selected: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    empty: str | None = None
    empty_last: bool = False
    placeholder: str = ""
    minimum: str = ""
    step: str = "any"
    jobs: str = ""


@dataclass(frozen=True, slots=True)
class Fieldset:
    """A fieldset of the form: its title, whether it folds, and its controls."""

    section: str
    title: str
    collapsible: bool
    open: bool
    controls: tuple[Control, ...]


def _options(
    fmt: Formatter, f: Field, choices: Mapping[str, Sequence[tuple[str, str]]]
) -> tuple[tuple[str, str], ...]:
    """(value, label) pairs: the catalog's (GPUs, providers) or the field's own values."""
    if f.name in choices:
        return tuple(choices[f.name])
    labels = VALUE_LABELS.get(f.enum, {}) if f.enum else {}
    return tuple((v, fmt.gettext(labels[v]) if v in labels else v) for v in f.values)


def _control(
    fmt: Formatter, f: Field, query: PlanQuery, choices: Mapping[str, Sequence[tuple[str, str]]]
) -> Control:
    form = f.form
    if form is None:  # pragma: no cover - FORM_FIELDS all have a form column
        msg = f"{f.name} is not on the form"
        raise ValueError(msg)
    _ = fmt.gettext
    number = f.kind in {Kind.NUMBER, Kind.INTEGER}
    return Control(
        name=f.name,
        widget=form.widget.value,
        label=_(form.label or f.label),
        help=_(f.help),
        value=query.value(f.name),
        selected=tuple(query.lists.get(f.name, ())),
        options=_options(fmt, f, choices)
        if form.widget in {Widget.SELECT, Widget.CHECKBOXES}
        else (),
        empty=_(form.empty) if form.empty is not None else None,
        empty_last=form.empty_last,
        placeholder=_(form.placeholder) if form.placeholder else "",
        minimum=f"{f.minimum:g}" if number and f.minimum is not None else "",
        step="1" if f.kind is Kind.INTEGER else "any",
        jobs=JOB_FIELDS.get(f.name, ""),
    )


def fieldsets(
    fmt: Formatter, query: PlanQuery, choices: Mapping[str, Sequence[tuple[str, str]]]
) -> list[Fieldset]:
    """The form's fieldsets in page order, each with its fields in the table's order.

    Args:
        fmt: the page's formatter.
        query: what the visitor asked for.
        choices: (value, label) pairs of fields whose values come from the catalog, by name
            (``gpu``, ``provider``).
    """
    out = []
    for section in FormSection:
        rows = [f for f in FORM_FIELDS if f.form is not None and f.form.section is section]
        controls = tuple(_control(fmt, f, query, choices) for f in rows)
        is_set = any(c.selected or (query.submitted and c.value) for c in controls)
        out.append(
            Fieldset(
                section.value,
                fmt.gettext(SECTION_TITLES[section]),
                section in COLLAPSED,
                section not in COLLAPSED or is_set,
                controls,
            )
        )
    return out
