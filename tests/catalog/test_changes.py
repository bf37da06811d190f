"""The change log data/changes.toml: its schema and its cross-file checks."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from clusterscout.catalog.changes import ChangedField, ChangeKind, load_changes
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import Problem
from tests.conftest import FIXTURE_DATA_DIR


def _load(tmp_path: Path, text: str, today: date | None = None) -> tuple[tuple, list[str]]:
    (tmp_path / "changes.toml").write_text(text, encoding="utf-8")
    problems: list[Problem] = []
    found = load_changes(tmp_path, problems, today=today)
    return found, [f"{p.path}: {p.message}" for p in problems]


def test_a_missing_log_is_empty(tmp_path: Path) -> None:
    problems: list[Problem] = []
    assert load_changes(tmp_path, problems) == ()
    assert problems == []


def test_entries_are_read_with_their_kinds_and_fields(tmp_path: Path) -> None:
    found, problems = _load(
        tmp_path,
        '[[changes]]\non = 2026-11-02\nkind = "corrected"\nprovider = "alpha"\n'
        'offers = ["alpha-h100-ib"]\nfields = ["fabric", "prices"]\n',
    )
    assert problems == []
    (entry,) = found
    assert entry.kind is ChangeKind.CORRECTED
    assert entry.fields == (ChangedField.FABRIC, ChangedField.PRICES)
    assert entry.on == date(2026, 11, 2)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('kind = "corrected"\nprovider = "alpha"\n', "a correction names the fields"),
        ('kind = "added"\nprovider = "alpha"\nfields = ["gpu"]\n', "fields belong to corrections"),
        ('kind = "corrected"\nprovider = "alpha"\nfields = ["colour"]\n', "changes[0].fields[0]"),
        ('kind = "renamed"\nprovider = "alpha"\n', "changes[0].kind"),
        ('kind = "added"\nprovider = "alpha"\nnote = "x"\n', "unknown key"),
    ],
)
def test_bad_entries_are_reported_with_their_path(tmp_path: Path, body: str, expected: str) -> None:
    found, problems = _load(tmp_path, "[[changes]]\non = 2026-11-02\n" + body)
    assert found == ()
    assert any(expected in p for p in problems), problems


def test_malformed_toml_is_one_problem(tmp_path: Path) -> None:
    found, problems = _load(tmp_path, "[[changes]\n")
    assert found == ()
    assert len(problems) == 1
    assert "malformed TOML" in problems[0]


def test_future_dates_are_errors(tmp_path: Path) -> None:
    _, problems = _load(
        tmp_path,
        '[[changes]]\non = 2026-12-24\nkind = "added"\nprovider = "alpha"\n',
        today=date(2026, 12, 1),
    )
    assert problems == ["changes[0].on: 2026-12-24 is in the future"]


def test_the_fixture_log_names_only_what_the_fixture_catalog_has() -> None:
    catalog = load_catalog(FIXTURE_DATA_DIR).catalog
    problems: list[Problem] = []
    found = load_changes(FIXTURE_DATA_DIR, problems, catalog, date(2026, 12, 1))
    assert found
    assert problems == []


def test_unknown_and_misplaced_names_are_errors(tmp_path: Path) -> None:
    catalog = load_catalog(FIXTURE_DATA_DIR).catalog
    (tmp_path / "changes.toml").write_text(
        '[[changes]]\non = 2026-11-02\nkind = "added"\nprovider = "omega"\n'
        '[[changes]]\non = 2026-11-02\nkind = "added"\nprovider = "alpha"\n'
        'offers = ["alpha-x", "beta-h100-eth"]\n',
        encoding="utf-8",
    )
    problems: list[Problem] = []
    load_changes(tmp_path, problems, catalog)
    assert [f"{p.path}: {p.message}" for p in problems] == [
        "changes[0].provider: unknown provider 'omega'",
        "changes[1].offers: unknown offer 'alpha-x'",
        "changes[1].offers: offer 'beta-h100-eth' belongs to 'beta', not 'alpha'",
    ]
