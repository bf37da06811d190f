"""Settings: environment overrides and documentation that cannot drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterscout.settings import Settings

DOCS = Path(__file__).parents[1] / "docs" / "configuration.md"


def test_every_setting_is_documented() -> None:
    text = DOCS.read_text()
    for name in Settings.model_fields:
        assert f"CLUSTERSCOUT_{name.upper()}" in text, name
        assert f"(`{name}`)" in text, name


def test_environment_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLUSTERSCOUT_SQLITE_PATH", str(tmp_path / "x.db"))
    monkeypatch.setenv("CLUSTERSCOUT_STALE_AFTER_DAYS", "7")
    settings = Settings()
    assert settings.stale_after_days == 7
    assert settings.resolved_database_url() == f"sqlite:///{tmp_path / 'x.db'}"
    monkeypatch.setenv("CLUSTERSCOUT_DATABASE_URL", "postgresql+psycopg://u@h/db")
    assert Settings().resolved_database_url() == "postgresql+psycopg://u@h/db"


def test_invalid_values_are_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERSCOUT_STALE_AFTER_DAYS", "0")
    with pytest.raises(ValueError, match="stale_after_days"):
        Settings()
