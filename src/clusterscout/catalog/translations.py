"""Translations of the catalog's free text: ``locale/catalog.pot`` and ``locale/{lang}/catalog.po``.

The message id is the English text itself (ADR 0011), so an English edit leaves the old
translation unused and the new text untranslated until a translator writes it; nothing stale
can be shown. The files live under the data directory and are read with Babel.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.pofile import PoFileError, read_po, write_po

from clusterscout.catalog.problems import Problem, Severity
from clusterscout.catalog.texts import CatalogText
from clusterscout.domain.languages import TRANSLATED_LANGUAGES

LOCALE_DIR: Final = "locale"
DOMAIN: Final = "catalog"
PROJECT: Final = "clusterscout"
VERSION: Final = "catalog"  # the header's Project-Id-Version reads "clusterscout catalog"
HEADER: Final = """\
# {lang} translations of the clusterscout catalog's free text (data/).
# Write each msgstr in your own words. The msgid is the English text in
# data/ and is never edited here; the #. lines say where it is used.
# After an English edit in data/, run `make i18n-catalog`: the new text
# comes back untranslated and the old one is dropped.
#"""
REGENERATE: Final = "run `make i18n-catalog`"
# How a text without a translation is reported. A warning (one summary line per language)
# while the translators fill the new files; Severity.ERROR names every text, file, key path
# and language, and blocks validate and build-db.
UNTRANSLATED: Final = Severity.ERROR


def template_path(data_dir: Path) -> Path:
    """``data/locale/catalog.pot``: every catalog text, generated, never edited by hand."""
    return data_dir / LOCALE_DIR / f"{DOMAIN}.pot"


def po_path(data_dir: Path, lang: str) -> Path:
    """``data/locale/{lang}/catalog.po``: the translations into ``lang``."""
    return data_dir / LOCALE_DIR / lang / f"{DOMAIN}.po"


def template(texts: Iterable[CatalogText]) -> Catalog:
    """The template: one message per distinct English text, in catalog order, each with a
    comment per place it is used (``providers/lambda.toml: offers[h100].note``)."""
    catalog = Catalog(project=PROJECT, version=VERSION, fuzzy=False)
    for t in texts:
        where = f"{t.file}: {t.path}"
        found = catalog.get(t.text)
        if found is None:
            catalog.add(t.text, auto_comments=[where])
        elif where not in found.auto_comments:
            found.auto_comments.append(where)
    return catalog


def _render(catalog: Catalog, *, omit_header: bool) -> bytes:
    # Babel guesses "python-format" from any "%" followed by a letter ("35% off"); catalog
    # texts are looked up, never %-formatted, and the guess makes msgfmt -c reject correct
    # translations such as "35 % de réduction".
    for message in catalog:
        message.flags.discard("python-format")
    buf = io.BytesIO()
    write_po(buf, catalog, omit_header=omit_header, ignore_obsolete=True)
    return buf.getvalue()


def render_template(texts: Iterable[CatalogText]) -> bytes:
    """The bytes of ``catalog.pot`` for ``texts`` (no header: no date to churn)."""
    return _render(template(texts), omit_header=True)


def read_translations(path: Path, lang: str) -> Catalog:
    """Parse one ``.po`` file.

    Raises:
        OSError: when it cannot be read (FileNotFoundError when it does not exist).
        PoFileError: when it is not a valid ``.po`` file.
    """
    with path.open("rb") as fh:
        return read_po(fh, locale=lang, abort_invalid=True)


def _merged(path: Path, lang: str, pot: Catalog) -> Catalog:
    if path.exists():
        po = read_translations(path, lang)
        created = po.creation_date
    else:
        po = Catalog(
            locale=lang,
            project=PROJECT,
            version=VERSION,
            header_comment=HEADER.format(lang=Locale.parse(lang).english_name),
            language_team=f"clusterscout <{lang}>",
            fuzzy=False,
        )
        created = pot.creation_date
    # English ids: a changed text is a new message, so no fuzzy guesses from similar ones.
    po.update(pot, no_fuzzy_matching=True)
    po.obsolete.clear()
    po.creation_date = created  # keep the header stable between runs
    return po


@dataclass(frozen=True, slots=True)
class Progress:
    """How much of one language is translated."""

    lang: str
    translated: int
    total: int


def update_files(data_dir: Path, texts: list[CatalogText]) -> list[Progress]:
    """Write ``catalog.pot`` and merge it into each language's ``catalog.po`` (created when
    missing): new texts arrive untranslated, texts no longer in the catalog are dropped."""
    pot_file = template_path(data_dir)
    pot_file.parent.mkdir(parents=True, exist_ok=True)
    pot_file.write_bytes(render_template(texts))
    pot = template(texts)
    out = []
    for lang in TRANSLATED_LANGUAGES:
        path = po_path(data_dir, lang)
        po = _merged(path, lang, pot)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_render(po, omit_header=False))
        done = sum(1 for m in po if m.id and m.string and not m.fuzzy)
        out.append(Progress(lang, done, len(pot)))
    return out


def _usable(message_string: object, fuzzy: bool) -> str | None:
    if fuzzy or not isinstance(message_string, str) or not message_string.strip():
        return None
    return message_string


def translation_tables(data_dir: Path, texts: Iterable[CatalogText]) -> dict[str, dict[str, str]]:
    """Language -> English text -> translation, for the texts of the catalog that have a
    usable translation (not empty, not fuzzy). Unreadable files give no translations (the
    problems say why)."""
    wanted = {t.text for t in texts}
    tables: dict[str, dict[str, str]] = {}
    for lang in TRANSLATED_LANGUAGES:
        try:
            po = read_translations(po_path(data_dir, lang), lang)
        except (OSError, PoFileError):
            po = Catalog(locale=lang)
        table: dict[str, str] = {}
        for m in po:
            text = _usable(m.string, m.fuzzy)
            if isinstance(m.id, str) and m.id in wanted and text is not None:
                table[m.id] = text
        tables[lang] = table
    return tables


def _missing(po: Catalog, text: str) -> str | None:
    message = po.get(text)
    if message is None or _usable(message.string, fuzzy=False) is None:
        return "no {lang} translation"
    if message.fuzzy:
        return "the {lang} translation is marked fuzzy"
    return None


def translation_problems(
    data_dir: Path, texts: list[CatalogText], severity: Severity | None = None
) -> list[Problem]:
    """A stale template, a missing or unreadable ``.po`` file, and every text without a
    usable translation: as an error naming file, key path and language, or (as a warning)
    one count per language. ``severity`` defaults to :data:`UNTRANSLATED`."""
    severity = severity or UNTRANSLATED
    label = data_dir.name
    problems: list[Problem] = []
    pot_file = template_path(data_dir)
    if not pot_file.is_file() or pot_file.read_bytes() != render_template(texts):
        problems.append(
            Problem(f"{label}/{LOCALE_DIR}/{pot_file.name}", "", f"out of date; {REGENERATE}")
        )
    for lang in TRANSLATED_LANGUAGES:
        po_label = f"{label}/{LOCALE_DIR}/{lang}/{DOMAIN}.po"
        try:
            po = read_translations(po_path(data_dir, lang), lang)
        except FileNotFoundError:
            problems.append(Problem(po_label, "", f"missing; {REGENERATE}"))
            continue
        except (OSError, PoFileError) as exc:
            problems.append(Problem(po_label, "", f"unreadable: {exc}"))
            continue
        lacking = [(t, what) for t in texts if (what := _missing(po, t.text)) is not None]
        if severity is Severity.ERROR:
            problems.extend(
                Problem(f"{label}/{t.file}", t.path, what.format(lang=lang)) for t, what in lacking
            )
        elif lacking:
            n = len({t.text for t, _ in lacking})
            total = len({t.text for t in texts})
            what = f"{n} of {total} catalog texts have no usable {lang} translation yet"
            problems.append(Problem(po_label, "", what, Severity.WARNING, "untranslated"))
    return problems
