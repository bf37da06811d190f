"""Locales, gettext catalogs (compiled from locale/*.po), Babel formatting and negotiation.

Run ``python -m clusterscout.web.i18n compile`` to compile every ``.po`` to ``.mo``; the app
also compiles on start when a ``.mo`` is missing or older than its ``.po``.
"""

from __future__ import annotations

import functools
import io
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from gettext import NullTranslations
from pathlib import Path
from typing import Final

from babel import Locale
from babel.dates import format_date
from babel.lists import format_list
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import (
    format_compact_decimal,
    format_currency,
    format_decimal,
    format_percent,
)
from babel.support import Translations
from babel.units import format_unit

from clusterscout.catalog.texts import Translation
from clusterscout.domain.languages import SOURCE_LANGUAGE, TRANSLATED_LANGUAGES
from clusterscout.domain.messages import N_

__all__ = ["N_"]  # re-exported: the web's modules mark their text with it

DEFAULT_LOCALE: Final = SOURCE_LANGUAGE
# The URL prefix is the language; Portuguese follows Brazilian conventions (ADR 0004).
KNOWN_LOCALES: Final[dict[str, Locale]] = {
    "en": Locale.parse("en"),
    "pt": Locale.parse("pt_BR"),
    "es": Locale.parse("es"),
    "fr": Locale.parse("fr"),
    "de": Locale.parse("de"),
}
TRANSLATED_LOCALES: Final = TRANSLATED_LANGUAGES
LOCALE_DIR: Final = Path(__file__).resolve().parent.parent / "locale"
DOMAIN: Final = "messages"


def po_path(lang: str, locale_dir: Path = LOCALE_DIR) -> Path:
    """Where the ``.po`` file of ``lang`` lives."""
    return locale_dir / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def compile_catalogs(locale_dir: Path = LOCALE_DIR, *, force: bool = False) -> list[Path]:
    """Compile every ``.po`` under ``locale_dir`` whose ``.mo`` is missing or stale.

    Returns:
        The ``.mo`` files written.
    """
    written = []
    for lang in TRANSLATED_LOCALES:
        po = po_path(lang, locale_dir)
        mo = po.with_suffix(".mo")
        if not po.exists():
            continue
        if not force and mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
            continue
        with po.open("rb") as fh:
            catalog = read_po(fh, locale=lang)
        # Written aside then renamed, so a worker starting meanwhile never reads half a file.
        tmp = mo.with_suffix(f".mo.{os.getpid()}.tmp")
        with tmp.open("wb") as fh:
            write_mo(fh, catalog, use_fuzzy=False)
        tmp.replace(mo)
        written.append(mo)
    return written


def _in_memory(po: Path, lang: str) -> Translations:
    # Used when the package directory is read-only and no .mo was shipped.
    with po.open("rb") as fh:
        catalog = read_po(fh, locale=lang)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return Translations(fp=buf, domain=DOMAIN)


def load_translations(lang: str, locale_dir: Path = LOCALE_DIR) -> NullTranslations:
    """The gettext translations of ``lang`` (English is the source language)."""
    if lang == DEFAULT_LOCALE:
        return NullTranslations()
    po = po_path(lang, locale_dir)
    mo = po.with_suffix(".mo")
    if mo.exists() and (not po.exists() or mo.stat().st_mtime >= po.stat().st_mtime):
        with mo.open("rb") as fh:
            return Translations(fp=fh, domain=DOMAIN)
    if po.exists():
        try:
            compile_catalogs(locale_dir)
        except OSError:
            return _in_memory(po, lang)
        with mo.open("rb") as fh:
            return Translations(fp=fh, domain=DOMAIN)
    return NullTranslations()


# "2 weeks", "1 year", "6 months", "3 hours" inside catalog terms (English in data/).
_DURATION = re.compile(r"\b(\d+(?:\.\d+)?)\s+(minute|hour|day|week|month|year)s?\b", re.I)


@dataclass(frozen=True, slots=True)
class Formatter:
    """Locale-bound formatting for templates and view-models (Babel only, never f-strings)."""

    lang: str
    gettext: Callable[[str], str]
    ngettext: Callable[[str, str, int], str]
    catalog: Translation = field(default_factory=Translation)
    """The catalog's free text in ``lang`` (set per data version by the app state)."""

    @property
    def locale(self) -> Locale:
        """The Babel locale behind ``lang``."""
        return KNOWN_LOCALES[self.lang]

    def usd(self, value: float) -> str:
        """A USD amount, e.g. ``$2.49`` (en) or ``2,49 $`` (de)."""
        return format_currency(value, "USD", locale=self.locale)

    def usd_whole(self, value: float) -> str:
        """A USD amount rounded to whole dollars, e.g. ``$3,405`` (en) or ``3.405 $`` (de)."""
        return self.money_whole(value, "USD")

    def money_whole(self, value: float, currency: str) -> str:
        """An amount rounded to whole units of ``currency``, e.g. ``€3,405`` or ``R$ 3.405``."""
        pattern = self.locale.currency_formats["standard"].pattern.split(";")[0]
        pattern = re.sub(r"\.0+", "", pattern)
        return format_currency(
            round(value), currency, format=pattern, locale=self.locale, currency_digits=False
        )

    def number(self, value: float) -> str:
        """A plain number with grouping, e.g. ``3,200`` (en) or ``3.200`` (de)."""
        # The repr is part of the key: equal numbers can print apart (-0.0 and 0.0).
        return _number(self.lang, value, repr(value))

    def fixed(self, value: float, digits: int = 1) -> str:
        """A number with exactly ``digits`` decimals, e.g. ``1,234.5`` (en), ``1.234,5`` (de)."""
        pattern = "#,##0." + "0" * digits if digits > 0 else "#,##0"
        return format_decimal(value, format=pattern, locale=self.locale)

    def compact(self, value: float) -> str:
        """A large count compactly: ``1T`` (en), ``1 Bio.`` (de), ``70 Md`` (fr)."""
        return format_compact_decimal(value, locale=self.locale, fraction_digits=1)

    def percent(self, value: float, digits: int = 0) -> str:
        """A ratio as a percentage, e.g. ``99.6%`` (en) or ``99,6 %`` (de) with ``digits=1``."""
        if digits <= 0:
            return format_percent(value, locale=self.locale)
        # The locale pattern is e.g. "#,##0%" or "#,##0 %": add decimals after its last 0.
        base = self.locale.percent_formats[None].pattern
        pattern = re.sub(r"0(?=[^0#]*%)", "0." + "0" * digits, base, count=1)
        return format_percent(value, format=pattern, locale=self.locale)

    def join(self, items: Sequence[str]) -> str:
        """A list in prose: ``A, B and C`` (en), ``A, B und C`` (de)."""
        return format_list(list(items), locale=self.locale)

    def term(self, text: str) -> str:
        """Catalog term text with its durations localized: ``2 weeks, 16 GPUs`` -> ``2 semanas,
        16 GPUs`` (pt). Anything else in the text is kept as written in the catalog."""

        def repl(m: re.Match[str]) -> str:
            value = float(m.group(1))
            amount: float | int = int(value) if value.is_integer() else value
            return format_unit(amount, f"duration-{m.group(2).lower()}", locale=self.locale)

        return _DURATION.sub(repl, text)

    def day(self, value: date | str) -> str:
        """A date in the locale's medium format."""
        return _day(self.lang, value)


# Why kept: a provider page formats about 230 dates and a listing dozens of counts, mostly the
# same few; each Babel call was about 15 us. typed=True keeps 1 and 1.0 (and "2026-01-01" and
# date(2026, 1, 1)) apart, so a kept answer is always the one Babel gives for that value.
@functools.lru_cache(maxsize=4096, typed=True)
def _number(lang: str, value: float, text: str) -> str:
    del text  # only part of the key
    return format_decimal(value, locale=KNOWN_LOCALES[lang])


@functools.lru_cache(maxsize=4096, typed=True)
def _day(lang: str, value: date | str) -> str:
    d = date.fromisoformat(value) if isinstance(value, str) else value
    return format_date(d, format="medium", locale=KNOWN_LOCALES[lang])


def formatter(lang: str, translations: NullTranslations) -> Formatter:
    """A Formatter for ``lang`` using ``translations``."""
    return Formatter(lang, translations.gettext, translations.ngettext)


def negotiate(accept_language: str | None) -> str:
    """Pick a known locale from an ``Accept-Language`` header (default English)."""
    if not accept_language:
        return DEFAULT_LOCALE
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(accept_language.split(",")):
        piece = part.strip()
        if not piece:
            continue
        tag, _, params = piece.partition(";")
        quality = 1.0
        params = params.strip()
        if params.startswith("q="):
            try:
                quality = float(params[2:])
            except ValueError:
                quality = 0.0
        ranked.append((-quality, index, tag.strip().lower()))
    for neg_q, _, tag in sorted(ranked):
        if neg_q >= 0:
            continue
        primary = tag.split("-")[0]
        if primary in KNOWN_LOCALES:
            return primary
    return DEFAULT_LOCALE


EXTRACT_ARGS: Final = (
    "extract", "-F", "babel.cfg", "--no-location", "--sort-output", "--omit-header",
    "-k", "N_", "-o", "src/clusterscout/locale/messages.pot", ".",
)  # fmt: skip


def extract_and_update() -> None:
    """Re-extract ``messages.pot`` (run from the repository root) and merge it into each ``.po``."""
    from babel.messages.frontend import CommandLineInterface  # noqa: PLC0415

    CommandLineInterface().run(["pybabel", *EXTRACT_ARGS])  # type: ignore[no-untyped-call]
    for lang in TRANSLATED_LOCALES:
        CommandLineInterface().run(  # type: ignore[no-untyped-call]
            ["pybabel", "update", "--no-fuzzy-matching", "--ignore-obsolete",
             "-i", str(LOCALE_DIR / "messages.pot"), "-o", str(po_path(lang)), "-l", lang]
        )  # fmt: skip


def main(argv: list[str]) -> int:
    """``python -m clusterscout.web.i18n compile [--force] | extract``."""
    if argv[:1] == ["extract"]:
        extract_and_update()
        return 0
    if argv[:1] != ["compile"]:
        sys.stderr.write("usage: python -m clusterscout.web.i18n compile [--force] | extract\n")
        return 2
    for mo in compile_catalogs(force="--force" in argv):
        sys.stderr.write(f"compiled {mo}\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
