"""The catalog's translation files: generated template, merged .po files, and their checks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po

from clusterscout.catalog import translations
from clusterscout.catalog.problems import Severity
from clusterscout.catalog.texts import CatalogText
from clusterscout.catalog.translations import (
    po_path,
    render_template,
    template_path,
    translation_problems,
    translation_tables,
    update_files,
)

A = CatalogText("providers/a.toml", "multi_node.evidence", "Sells clusters.")
A_TERM = CatalogText("providers/a.toml", "billing.minimum", "1 year")
B_TERM = CatalogText("providers/b.toml", "offers[x].prices[0].term", "1 year")
TEXTS = [A, A_TERM, B_TERM]


def _translate(data_dir: Path, lang: str, strings: dict[str, str], fuzzy: set[str]) -> None:
    path = po_path(data_dir, lang)
    with path.open("rb") as fh:
        po = read_po(fh, locale=lang)
    for msgid, text in strings.items():
        po[msgid].string = text
        if msgid in fuzzy:
            po[msgid].flags.add("fuzzy")
    with path.open("wb") as fh:
        write_po(fh, po)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    root.mkdir()
    progress = update_files(root, TEXTS)
    assert [(p.lang, p.translated, p.total) for p in progress] == [
        ("pt", 0, 2),
        ("es", 0, 2),
        ("fr", 0, 2),
        ("de", 0, 2),
    ]
    return root


def test_template_has_one_message_per_text_and_every_place_it_is_used(data_dir: Path) -> None:
    pot = template_path(data_dir).read_text(encoding="utf-8")
    assert pot.count('msgid "1 year"') == 1
    assert "#. providers/a.toml: billing.minimum\n" in pot
    assert "#. providers/b.toml: offers[x].prices[0].term\n" in pot
    assert "POT-Creation-Date" not in pot  # no header, so no date churn
    po = po_path(data_dir, "de").read_text(encoding="utf-8")
    assert '"Language: de\\n"' in po
    assert "# German translations of the clusterscout catalog's free text" in po


def test_merging_keeps_translations_and_drops_changed_english(data_dir: Path) -> None:
    _translate(data_dir, "fr", {"Sells clusters.": "Vend des clusters.", "1 year": "1 an"}, set())
    before = po_path(data_dir, "fr").read_bytes()
    update_files(data_dir, TEXTS)
    assert po_path(data_dir, "fr").read_bytes() == before  # a re-run changes nothing
    edited = CatalogText(A.file, A.path, "Sells large clusters.")
    progress = update_files(data_dir, [edited, A_TERM])
    assert [(p.lang, p.translated) for p in progress if p.lang == "fr"] == [("fr", 1)]
    tables = translation_tables(data_dir, [edited, A_TERM])
    # The old English is gone with its translation; the new English waits for a translator.
    assert tables["fr"] == {"1 year": "1 an"}
    assert "Sells clusters." not in po_path(data_dir, "fr").read_text(encoding="utf-8")


def test_tables_hold_only_usable_translations_of_current_texts(data_dir: Path) -> None:
    _translate(data_dir, "pt", {"Sells clusters.": "Vende clusters.", "1 year": "1 ano"}, set())
    _translate(data_dir, "es", {"Sells clusters.": "Vende clústeres.", "1 year": " "}, set())
    _translate(data_dir, "de", {"Sells clusters.": "Verkauft Cluster."}, {"Sells clusters."})
    po_path(data_dir, "fr").write_text('msgid "x"\nmsgstr "y"\nnonsense\n', encoding="utf-8")
    tables = translation_tables(data_dir, TEXTS)
    assert tables == {
        "pt": {"Sells clusters.": "Vende clusters.", "1 year": "1 ano"},
        "es": {"Sells clusters.": "Vende clústeres."},
        "fr": {},
        "de": {},
    }
    assert translation_tables(data_dir, [A])["pt"] == {"Sells clusters.": "Vende clusters."}


def test_errors_name_file_key_path_and_language(data_dir: Path) -> None:
    _translate(data_dir, "pt", {"Sells clusters.": "Vende clusters.", "1 year": "1 ano"}, set())
    _translate(data_dir, "es", {"Sells clusters.": "Vende clústeres."}, set())
    _translate(
        data_dir, "fr", {"Sells clusters.": "Vend des clusters.", "1 year": "1 an"}, {"1 year"}
    )
    po_path(data_dir, "de").unlink()
    lines = [str(p) for p in translation_problems(data_dir, TEXTS, Severity.ERROR)]
    assert lines == [
        "data/providers/a.toml: billing.minimum: no es translation",
        "data/providers/b.toml: offers[x].prices[0].term: no es translation",
        "data/providers/a.toml: billing.minimum: the fr translation is marked fuzzy",
        "data/providers/b.toml: offers[x].prices[0].term: the fr translation is marked fuzzy",
        "data/locale/de/catalog.po: (file): missing; run `make i18n-catalog`",
    ]


def test_warnings_count_untranslated_texts_per_language(data_dir: Path) -> None:
    _translate(data_dir, "pt", {"Sells clusters.": "Vende clusters.", "1 year": "1 ano"}, set())
    problems = translation_problems(data_dir, TEXTS, Severity.WARNING)
    assert all(p.severity is Severity.WARNING for p in problems)
    assert [str(p) for p in problems] == [
        f"data/locale/{lang}/catalog.po: (file): warning: 2 of 2 catalog texts have no usable "
        f"{lang} translation yet"
        for lang in ("es", "fr", "de")
    ]


def test_default_severity_is_the_switch(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(translations, "UNTRANSLATED", Severity.ERROR)
    problems = translation_problems(data_dir, TEXTS)
    assert len(problems) == 4 * 3
    assert {p.severity for p in problems} == {Severity.ERROR}


def test_stale_template_and_unreadable_files_are_errors(data_dir: Path) -> None:
    extra = CatalogText("providers/c.toml", "storage.note", "New note.")
    po_path(data_dir, "es").write_text('msgid "x"\nmsgstr "y"\nnonsense\n', encoding="utf-8")
    problems = translation_problems(data_dir, [*TEXTS, extra], Severity.WARNING)
    errors = [str(p) for p in problems if p.severity is Severity.ERROR]
    assert errors[0] == "data/locale/catalog.pot: (file): out of date; run `make i18n-catalog`"
    assert errors[1].startswith("data/locale/es/catalog.po: (file): unreadable: ")
    assert len(errors) == 2
    shutil.rmtree(data_dir / "locale")
    missing = [str(p) for p in translation_problems(data_dir, TEXTS, Severity.WARNING)]
    assert missing[0] == "data/locale/catalog.pot: (file): out of date; run `make i18n-catalog`"
    assert len(missing) == 5


def test_template_bytes_are_stable() -> None:
    assert render_template(TEXTS) == render_template(list(TEXTS))
    assert render_template(TEXTS) != render_template([A])


def test_a_percent_sign_is_not_taken_for_a_format_placeholder() -> None:
    # "35% off" looks like "% o" to Babel; a python-format flag would make msgfmt -c reject a
    # correct French "35 % de réduction".
    text = CatalogText("providers/a.toml", "discounts[0].note", "Up to 35% off on-demand.")
    rendered = render_template([text]).decode()
    assert "Up to 35% off on-demand." in rendered
    assert "python-format" not in rendered
