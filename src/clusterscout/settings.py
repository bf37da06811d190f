"""Runtime settings from the environment (prefix CLUSTERSCOUT_); built on demand, never global."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from clusterscout.resources import bundled_catalog_dir

DEFAULT_PUBLIC_URL = "http://127.0.0.1:8000"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


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

    public_url: str | None = Field(
        default=None,
        description="Scheme and host (https://clusterscout.example) of every absolute link "
        "from: canonical, hreflang, sitemap, robots.txt. Never taken from the request.",
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host names the server answers (comma-separated; '*' for any); default: "
        "the public URL's host and the loopback names.",
    )
    response_cache_mb: float = Field(
        default=32.0, ge=0, description="Memory bound of the rendered-response cache (MiB)."
    )
    plan_workers: int = Field(
        default=0,
        ge=0,
        le=16,
        description="Worker processes computing plans beside each server process (0: plans "
        "run in the server's own threads); clusterscout serve uses 1 unless this is set.",
    )
    plan_queue: int = Field(
        default=8,
        ge=0,
        le=1000,
        description="Plans that may wait for a free plan worker; past them (and the ones "
        "running) a plan is answered 503 with Retry-After at once.",
    )
    plan_per_client: int = Field(
        default=4,
        ge=0,
        le=1000,
        description="Plans one client address may have in flight (429 past it; 0: no bound).",
    )
    plan_deadline_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="Longest a plan request waits, queued and running, before a 503.",
    )
    db_pool_size: int = Field(
        default=16, ge=1, le=200, description="Database connections kept open per process."
    )

    @field_validator("public_url")
    @classmethod
    def _check_public_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            msg = f"public_url must be an http(s) URL with a host, got {value!r}"
            raise ValueError(msg)
        if parts.path.strip("/") or parts.query or parts.fragment:
            msg = "public_url must be scheme and host only (no path, query or fragment)"
            raise ValueError(msg)
        return f"{parts.scheme}://{parts.netloc.lower()}"

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            return [h.strip().lower() for h in value.split(",") if h.strip()]
        return value

    def site_url(self) -> str:
        """The public base URL in force (no trailing slash)."""
        return self.public_url or DEFAULT_PUBLIC_URL

    def trusted_hosts(self) -> list[str]:
        """Host names to accept: the configured list, else the public URL's host and loopback."""
        if self.allowed_hosts:
            return list(self.allowed_hosts)
        host = urlsplit(self.site_url()).hostname or ""
        if ":" in host:  # an IPv6 literal: the Host header carries it in brackets
            host = f"[{host}]"
        return list(dict.fromkeys([host, *LOOPBACK_HOSTS]))

    def resolved_database_url(self) -> str:
        """The database URL in force: the explicit one, else the SQLite file."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.sqlite_path.resolve()}"
