"""The filter sidebar and the plan form follow the fields table: groups, order, labels."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from clusterscout.app.fields import FIELDS, FORM_FIELDS, OFFER_FILTERS
from clusterscout.catalog.filters import OfferFilter, SortKey
from clusterscout.web import facets, i18n, plan_form
from clusterscout.web.cells import VALUE_LABELS


@pytest.mark.parametrize("all_offers", [True, False])
def test_groups_are_the_tables_facets_in_order(fixture_engine: Engine, all_offers: bool) -> None:
    fmt = i18n.formatter("en", i18n.load_translations("en"))
    with fixture_engine.connect() as conn:
        groups = facets.build_groups(
            conn, fmt, OfferFilter(), SortKey.PRICE, {}, all_offers=all_offers
        )
    expected = [
        f.name
        for f in OFFER_FILTERS
        if f.facet is not None and (all_offers or not f.facet.all_offers_only)
    ]
    assert [g.name for g in groups] == [*expected, "sort"]


def test_every_choice_a_page_offers_has_a_label() -> None:
    for field in FIELDS:
        if field.enum is not None and (field.facet or field.form):
            labels = VALUE_LABELS.get(field.enum)
            if field.name == "precision":
                continue  # shown as written (bf16, fp8)
            assert labels is not None, field.name
            assert set(field.values) <= set(labels), field.name


def test_the_form_shows_the_tables_form_fields_by_fieldset() -> None:
    fmt = i18n.formatter("de", i18n.load_translations("de"))
    sets = plan_form.fieldsets(fmt, plan_form.parse([]), {"gpu": [], "provider": []})
    shown = [c.name for s in sets for c in s.controls]
    assert sorted(shown) == sorted(f.name for f in FORM_FIELDS)
    assert [s.section for s in sets] == ["job", "limits", "narrow"]
    job = {c.name: c for c in sets[0].controls}
    assert job["model"].value == "70B"  # the table's default on a fresh form
    assert job["tokens"].label == "Zu trainierende Tokens"


def test_a_kept_checkbox_is_the_one_its_option_renders_to(monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterscout.web import runtime

    env = runtime._environment(i18n.load_translations("en"))
    kept = env.globals["kept_checkbox"]
    macro = env.get_template("_macros.html").module.facet_checkbox  # type: ignore[attr-defined]
    base = facets.Option("a&b", "<b>A</b>", 3, False, "f-x-a")
    variants = [
        base,
        facets.Option("a&b", "<b>A</b>", 4, False, "f-x-a"),
        facets.Option("a&b", "<b>A</b>", 3, True, "f-x-a"),
        facets.Option("a&b", "<b>A</b>", None, False, "f-x-a"),
        facets.Option("a&b", "B", 3, False, "f-x-a"),
    ]
    shown = [kept("fabric", o) for o in variants]
    # Every field the macro reads is in the key: each variant renders and is kept apart.
    assert shown == [macro("fabric", o) for o in variants]
    assert len(set(shown)) == len(variants)
    assert kept("gpu", base) != shown[0]  # the group name is read too
    assert kept("fabric", base) is shown[0]
    assert "&lt;b&gt;A&lt;/b&gt;" in shown[0] and 'value="a&amp;b"' in shown[0]
    assert " checked" in shown[2] and " checked" not in shown[0]
    # The table starts over when full; answers stay the same.
    monkeypatch.setattr(runtime, "CHECKBOX_ENTRIES", 2)
    small = runtime._environment(i18n.load_translations("en")).globals["kept_checkbox"]
    assert [small("fabric", o) for o in variants * 2] == shown * 2
