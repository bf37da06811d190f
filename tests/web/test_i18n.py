"""Translation catalogs are complete, current and compile; formatting and negotiation per locale."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from babel.dates import format_date
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterscout.web import i18n

ROOT = Path(__file__).resolve().parents[2]
POT = i18n.LOCALE_DIR / "messages.pot"
PLACEHOLDER = re.compile(r"%\(\w+\)s")


def _ids(path: Path) -> set[object]:
    with path.open("rb") as fh:
        return {m.id for m in read_po(fh) if m.id}


def test_messages_pot_is_current(tmp_path: Path) -> None:
    out = tmp_path / "messages.pot"
    pybabel = Path(sys.executable).with_name("pybabel")
    args = list(i18n.EXTRACT_ARGS)
    args[args.index("-o") + 1] = str(out)
    subprocess.run([str(pybabel), *args], cwd=ROOT, check=True, capture_output=True)
    fresh, committed = _ids(out), _ids(POT)
    assert fresh == committed, (
        f"messages.pot is stale; added {fresh - committed}, removed {committed - fresh}. "
        "Run: python -m clusterscout.web.i18n extract"
    )


@pytest.mark.parametrize("lang", i18n.TRANSLATED_LOCALES)
def test_every_string_is_translated(lang: str) -> None:
    with i18n.po_path(lang).open("rb") as fh:
        catalog = read_po(fh, locale=lang)
    wanted = _ids(POT)
    problems = []
    for msgid in wanted:
        msg = catalog.get(msgid)
        if msg is None:
            problems.append(f"missing: {msgid!r}")
            continue
        strings = msg.string if isinstance(msg.string, tuple) else (msg.string,)
        if not all(strings):
            problems.append(f"empty: {msgid!r}")
        if msg.fuzzy:
            problems.append(f"fuzzy: {msgid!r}")
        source = msgid if isinstance(msgid, tuple) else (msgid,)
        wanted_names = set(PLACEHOLDER.findall(source[-1]))
        for s in strings:
            if set(PLACEHOLDER.findall(s)) != wanted_names:
                problems.append(f"placeholders differ: {msgid!r} -> {s!r}")
    assert not problems, "\n".join(problems)


def test_catalogs_compile(tmp_path: Path) -> None:
    copy = tmp_path / "locale"
    shutil.copytree(i18n.LOCALE_DIR, copy, ignore=shutil.ignore_patterns("*.mo"))
    written = i18n.compile_catalogs(copy)
    assert len(written) == len(i18n.TRANSLATED_LOCALES)
    translations = i18n.load_translations("de", copy)
    assert translations.gettext("unknown") == "unbekannt"
    assert i18n.main([]) == 2


def test_formatting_follows_the_locale() -> None:
    fmt = {lang: i18n.formatter(lang, i18n.load_translations(lang)) for lang in i18n.KNOWN_LOCALES}
    assert fmt["en"].usd(2.5) == "$2.50"
    assert fmt["de"].usd(2.5) == "2,50\xa0$"
    assert fmt["pt"].number(3200) == "3.200"
    assert fmt["fr"].day("2026-11-20") == "20 nov. 2026"
    assert fmt["es"].gettext("unknown") == "desconocido"


@settings(max_examples=300, deadline=None)
@given(
    lang=st.sampled_from(sorted(i18n.KNOWN_LOCALES)),
    value=st.one_of(
        st.integers(-(10**12), 10**12),
        st.floats(-1e9, 1e9, allow_nan=False),
        st.decimals(-(10**6), 10**6, places=3, allow_nan=False),
    ),
    day=st.dates(date(1990, 1, 1), date(2100, 12, 31)),
    as_text=st.booleans(),
)
def test_kept_numbers_and_dates_are_what_babel_gives(
    lang: str, value: float, day: date, as_text: bool
) -> None:
    # Equal keys that print apart (1 and 1.0, 0.0 and -0.0, a date and its ISO text) must
    # never share an answer that Babel would give differently.
    fmt = i18n.formatter(lang, i18n.load_translations(lang))
    for v in (value, float(value), int(value), -float(value)):
        assert fmt.number(v) == format_decimal(v, locale=lang)
    shown = fmt.day(day.isoformat() if as_text else day)
    assert shown == format_date(day, format="medium", locale=lang)


def test_catalog_terms_get_localized_durations() -> None:
    fmt = {lang: i18n.formatter(lang, i18n.load_translations(lang)) for lang in i18n.KNOWN_LOCALES}
    assert fmt["pt"].term("2 weeks, 16 GPUs") == "2 semanas, 16 GPUs"
    assert fmt["de"].term("1 year") == "1 Jahr"
    assert fmt["fr"].term("6 Months") == "6\xa0mois"  # French keeps a no-break space
    assert fmt["es"].term("1.5 hours") == "1,5 horas"
    assert fmt["en"].term("1 day minimum") == "1 day minimum"
    assert fmt["de"].term("by quote") == "by quote"


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        (None, "en"),
        ("fr-CA,fr;q=0.9", "fr"),
        ("en;q=0.1, de;q=0.9", "de"),
        ("zh, ja;q=0.5", "en"),
        ("pt;q=garbage, es", "es"),
        ("*", "en"),
    ],
)
def test_accept_language_negotiation(header: str | None, lang: str) -> None:
    assert i18n.negotiate(header) == lang
