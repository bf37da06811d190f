"""The fields table is well formed and is what the filter, the plan request and the pages use."""

from __future__ import annotations

import dataclasses

import pytest
from babel.messages.pofile import read_po

from clusterscout.app.fields import (
    FIELDS,
    FORM_FIELDS,
    OFFER_FILTER_NAMES,
    PLAN_FIELD_NAMES,
    PLAN_FIELDS,
    Field,
    Kind,
    Use,
)
from clusterscout.catalog.filters import OfferFilter
from clusterscout.model.planner.request import PlanRequest
from clusterscout.web import i18n


def test_offer_filter_attributes_are_the_offer_filter_rows_in_order() -> None:
    assert tuple(f.name for f in dataclasses.fields(OfferFilter)) == OFFER_FILTER_NAMES


def test_every_plan_input_is_a_plan_request_attribute() -> None:
    attributes = {f.name for f in dataclasses.fields(PlanRequest)}
    inputs = {f.name for f in PLAN_FIELDS if f.used_as(Use.PLAN_INPUT)}
    # deadline_days is read into deadline_hours (the planner's one unit of time).
    aliases = {"model": "preset", "deadline_days": "deadline_hours"}
    assert {aliases.get(n, n) for n in inputs} == attributes


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_rows_are_well_formed(field: Field) -> None:
    assert field.help.endswith(".")
    assert field.label
    assert field.uses
    if field.kind is Kind.CHOICE:
        assert field.enum is not None and field.values
    if field.kind is Kind.PRESET:
        assert field.choices
    if field.kind is Kind.TEXT:
        assert field.maximum is not None
    if field.facet is not None:
        assert field.used_as(Use.OFFER_FILTER)
    if field.form is not None:
        assert field.name in PLAN_FIELD_NAMES and field.form.advice


def test_names_are_unique_and_the_form_shows_plan_fields_only() -> None:
    names = [f.name for f in FIELDS]
    assert len(names) == len(set(names))
    assert {f.name for f in FORM_FIELDS} <= set(PLAN_FIELD_NAMES)


def test_every_message_id_of_the_table_is_extracted() -> None:
    with (i18n.LOCALE_DIR / "messages.pot").open("rb") as fh:
        extracted = {m.id for m in read_po(fh) if m.id}
    texts = set()
    for f in FIELDS:
        texts |= {f.help, f.label}
        if f.facet is not None:
            texts |= {f.facet.hint, f.facet.empty, f.facet.option_label, f.facet.placeholder}
        if f.form is not None:
            texts |= {f.form.label, f.form.placeholder, f.form.empty or "", f.form.advice}
    assert texts - {""} <= extracted
