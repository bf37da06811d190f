"""Runtime settings from the environment (prefix CLUSTERSCOUT_); built on demand, never global."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from clusterscout.resources import bundled_catalog_dir


def _default_data_dir() -> Path:
    return bundled_catalog_dir()


class Settings(BaseSettings):
    """Every knob of clusterscout. Each field is documented in docs/configuration.md."""

    model_config = SettingsConfigDict(env_prefix="CLUSTERSCOUT_", extra="ignore")

    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the database; default: SQLite file at sqlite_path.",
    )
    sqlite_path: Path = Field(
        default=Path("build/clusterscout.sqlite3"),
        description="Where the embedded SQLite database is built when database_url is unset.",
    )
    data_dir: Path = Field(
        default_factory=_default_data_dir,
        description="Directory of the curated catalog (gpus.toml, fabrics.toml, providers/); "
        "default: the catalog shipped with the package.",
    )
    stale_after_days: int = Field(
        default=30, ge=1, description="Prices older than this many days are marked stale."
    )
    query_time_limit_ms: int = Field(
        default=1000, ge=10, description="SQLite statements running longer than this are cut off."
    )

    def resolved_database_url(self) -> str:
        """The database URL in force: the explicit one, else the SQLite file."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.sqlite_path.resolve()}"
